<?php

declare(strict_types=1);

namespace App\Billing;

use App\Models\Invoice;

/**
 * Sends invoices by mail.
 */
final class InvoiceMailer
{
    public function __construct(private Mailer $mailer)
    {
    }

    #[Deprecated]
    public function send(Invoice $invoice): bool
    {
        $body = render_invoice($invoice);
        return $this->mailer->deliver($invoice->email(), $body);
    }
}

function render_invoice(Invoice $invoice): string
{
    return sprintf("Invoice %s: %d", $invoice->number(), $invoice->total());
}

<?php

namespace Acme\Money;

final class Money
{
    private function __construct(public readonly int $cents)
    {
    }

    public static function zero(): self
    {
        return new self(0);
    }

    public static function of(int $cents): self
    {
        return new self($cents);
    }

    public function plus(Money $other): Money
    {
        return new Money($this->cents + $other->cents);
    }
}

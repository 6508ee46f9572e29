namespace Acme.Other;

public class PriceList
{
    public long PriceOf(string sku) => sku.Length;
}

public static class Tax
{
    public static long Of(long cents) => cents / 4;
}

public static class OtherExtensions
{
    public static long Doubled(this long cents) => cents * 2;
}

public class Ledger
{
    public long Audited(long total) => total;
}

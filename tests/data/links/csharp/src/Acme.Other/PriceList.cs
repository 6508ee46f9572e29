namespace Acme.Other;

public class PriceList
{
    public long PriceOf(string sku) => sku.Length;
}

public static class Tax
{
    public static long Of(long cents) => cents / 4;
}

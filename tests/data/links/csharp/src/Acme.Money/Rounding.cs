namespace Acme.Money;

public static class Rounding
{
    public static long HalfUp(long cents) => (cents + 50) / 100 * 100;
}

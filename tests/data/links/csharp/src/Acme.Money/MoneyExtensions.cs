namespace Acme.Money;

public static class MoneyExtensions
{
    // an extension method: `sum.Doubled()` calls it wherever Acme.Money is in scope
    public static Money Doubled(this Money money) => money.Plus(money);
}

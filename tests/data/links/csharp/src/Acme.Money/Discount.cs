namespace Acme.Money;

public class Discount
{
    private readonly long _cents;

    public Discount(long cents) => _cents = cents;

    public Money Apply(Money amount) => Money.Of(System.Math.Max(0, amount.Cents - _cents));
}

namespace Acme.Money;

public sealed class Money
{
    public long Cents { get; }

    private Money(long cents) => Cents = cents;

    public static Money Zero() => new Money(0);

    public static Money Of(long cents) => new Money(cents);

    public Money Plus(Money other) => new Money(Cents + other.Cents);
}

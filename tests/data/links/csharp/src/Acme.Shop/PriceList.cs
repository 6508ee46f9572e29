using Acme.Money;

namespace Acme.Shop;

public class PriceList
{
    public Money PriceOf(Item item) => Money.Of(item.Quantity * 100L);
}

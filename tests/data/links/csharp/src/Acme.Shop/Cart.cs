using System.Collections.Generic;
using Acme.Money;
using M = Acme.Money.Money;
using static Acme.Money.Rounding;

namespace Acme.Shop;

public partial class Cart : BaseCart, IPriced
{
    private readonly PriceList _prices;

    public Cart(PriceList prices)
    {
        _prices = prices;
    }

    public override M Total(List<Item> items)
    {
        var sum = M.Zero();
        foreach (var item in items)
        {
            Money price = _prices.PriceOf(item);
            sum = price.Plus(sum);
        }
        var discount = new Discount(HalfUp(sum.Cents) + Tax.Of(sum.Cents));
        return base.Audited(discount.Apply(Audit(sum.Doubled())));
    }
}

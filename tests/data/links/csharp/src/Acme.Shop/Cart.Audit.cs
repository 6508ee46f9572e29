using Acme.Money;

namespace Acme.Shop;

public partial class Cart
{
    private Money Audit(Money amount)
    {
        return amount;
    }
}

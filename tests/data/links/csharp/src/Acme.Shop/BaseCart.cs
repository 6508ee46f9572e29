using System.Collections.Generic;
using Acme.Money;

namespace Acme.Shop
{
    public abstract class BaseCart
    {
        public abstract Money Total(List<Item> items);

        protected virtual Money Audited(Money total) => total;
    }

    public interface IPriced
    {
        string Currency();
    }

    public record Item(string Sku, int Quantity);
}

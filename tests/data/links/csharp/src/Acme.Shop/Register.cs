using System.Collections.Generic;
using Acme.Money;

namespace Acme.Shop;

public class Register
{
    private readonly Cart? cart;

    public Register(Cart? cart) => this.cart = cart;

    // a null-conditional call: the field's type still places it
    public Money? Ring(List<Item> items) => cart?.Total(items);

    // a generic method, called as `Find<T>(..)`
    public T? Lookup<T>(string sku) where T : class => Find<T>(sku) as T;

    private object? Find<T>(string sku) => sku.Length > 0 ? null : default(T);
}

using System;
using System.Collections.Generic;

namespace Shop.Inventory
{
    /// <summary>Tracks stock levels.</summary>
    public class StockLedger : ILedger
    {
        private readonly Dictionary<string, int> _levels = new();

        public int this[string sku] => _levels.TryGetValue(sku, out var n) ? n : 0;

        public StockLedger() { }

        [Obsolete("Use Adjust")]
        public void Add(string sku, int quantity)
        {
            Adjust(sku, quantity);
        }

        public void Adjust(string sku, int delta)
        {
            _levels[sku] = this[sku] + delta;
            Changed?.Invoke(this, sku);
        }

        public event EventHandler<string> Changed;
    }

    public interface ILedger
    {
        void Adjust(string sku, int delta);
    }
}

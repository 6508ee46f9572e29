use crate::cart::Item;
use crate::Money;

pub struct PriceList;

impl PriceList {
    pub fn price_of(&self, item: &Item) -> Money {
        Money { cents: item.quantity * 100 }
    }
}

use std::collections::HashMap;

use crate::money::{self, Money};
use crate::prices::PriceList;

pub struct Item {
    pub sku: String,
    pub quantity: i64,
}

pub struct Cart {
    prices: PriceList,
    seen: HashMap<String, i64>,
}

impl Cart {
    pub fn new(prices: PriceList) -> Self {
        Cart { prices, seen: HashMap::new() }
    }

    pub fn total(&self, items: &[Item]) -> Money {
        let mut sum = Money::zero();
        for item in items {
            sum = sum.plus(&self.prices.price_of(item));
        }
        Money { cents: money::half_up(sum.cents) }
    }
}

pub mod cart;
pub mod checkout;
pub mod money;
mod other;
pub mod prices;

pub use crate::money::Money;

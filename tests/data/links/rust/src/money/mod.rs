mod rounding;

pub use self::rounding::half_up;

#[derive(Clone, Copy)]
pub struct Money {
    pub cents: i64,
}

impl Money {
    pub fn zero() -> Self {
        Money { cents: 0 }
    }

    pub fn plus(&self, other: &Money) -> Money {
        Money { cents: self.cents + other.cents }
    }
}

pub struct Catalogue;

impl Catalogue {
    pub fn price_of(&self, sku: &str) -> i64 {
        sku.len() as i64
    }
}

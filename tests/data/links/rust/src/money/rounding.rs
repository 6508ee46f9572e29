pub fn half_up(cents: i64) -> i64 {
    (cents + 50) / 100 * 100
}

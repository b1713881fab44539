//! Division of the widened (`i128`) sums and offsets the core computes with so that no
//! input overflows. A 128-bit division is a library call, and the replicas' ratio and the
//! forecast's index divide at every decision; the values nearly always fit in 64 bits, where
//! the same quotient is one instruction.

/// `a / b`, truncated toward zero, exactly as `i128` division gives it.
pub(crate) fn div(a: i128, b: i128) -> i128 {
    match (i64::try_from(a), i64::try_from(b)) {
        (Ok(x), Ok(y)) => x.checked_div(y).map_or_else(|| a / b, i128::from),
        _ => a / b,
    }
}

/// `a.div_euclid(b)`, exactly as `i128` gives it.
pub(crate) fn div_euclid(a: i128, b: i128) -> i128 {
    match (i64::try_from(a), i64::try_from(b)) {
        (Ok(x), Ok(y)) => x
            .checked_div_euclid(y)
            .map_or_else(|| a.div_euclid(b), i128::from),
        _ => a.div_euclid(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotients_equal_the_128_bit_ones_at_the_edges() {
        let edges = [
            i128::MIN,
            i128::from(i64::MIN) - 1,
            i128::from(i64::MIN),
            -7,
            -1,
            1,
            3,
            7,
            i128::from(i64::MAX),
            i128::from(i64::MAX) + 1,
            i128::MAX,
        ];
        for &a in &edges {
            for &b in &edges {
                if b == -1 && a == i128::MIN {
                    continue; // overflows in i128 itself
                }
                assert_eq!(div(a, b), a / b, "{a} / {b}");
                assert_eq!(div_euclid(a, b), a.div_euclid(b), "{a} div_euclid {b}");
            }
        }
    }
}

//! Time arithmetic that never panics: all instants come from outside (pods, metrics,
//! manifests) and may be anything from year 1 (Go's zero time) to the far future.

use jiff::{SignedDuration, Timestamp};

/// Go's zero `time.Time` (0001-01-01T00:00:00Z), which Kubernetes uses for "unset but present".
pub const GO_ZERO_TIME: Timestamp = Timestamp::constant(-62_135_596_800, 0);

/// `t + d`, saturating at the ends of the representable range.
pub fn add(t: Timestamp, d: SignedDuration) -> Timestamp {
    t.checked_add(d).unwrap_or(if d.is_negative() {
        Timestamp::MIN
    } else {
        Timestamp::MAX
    })
}

/// `t - d`, saturating.
pub fn sub(t: Timestamp, d: SignedDuration) -> Timestamp {
    add(t, d.checked_neg().unwrap_or(SignedDuration::MAX))
}

/// A duration of `secs` seconds (negative allowed).
pub fn seconds(secs: i64) -> SignedDuration {
    SignedDuration::from_secs(secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_time_is_year_one() {
        assert_eq!(GO_ZERO_TIME.to_string(), "0001-01-01T00:00:00Z");
    }

    #[test]
    fn saturates() {
        assert_eq!(add(Timestamp::MAX, seconds(10)), Timestamp::MAX);
        assert_eq!(sub(Timestamp::MIN, seconds(10)), Timestamp::MIN);
    }
}

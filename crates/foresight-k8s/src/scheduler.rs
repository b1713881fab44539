//! When each autoscaler syncs next.
//!
//! Every autoscaler syncs every `syncPeriodSeconds` of its own, but on a grid shared by its
//! namespace: the instants `offset(namespace) + k * period`. Autoscalers of one namespace
//! with the same period therefore sync together, which is what lets one PodMetrics list per
//! namespace serve them all (see [`crate::sources::resource`]); the per-namespace offset
//! spreads namespaces over the period so that the API sees a steady trickle, not a burst
//! every 15 seconds. A reconcile triggered by a spec change runs at once and then rejoins
//! the grid.

use std::hash::{Hash, Hasher};
use std::time::Duration;

use jiff::Timestamp;

/// The shortest wait before the next sync, so that a reconcile landing just before its grid
/// instant does not run twice in a row.
pub const MIN_DELAY: Duration = Duration::from_millis(500);

/// The namespace's offset on the grid of `period`, in milliseconds: stable across restarts
/// and replicas (FNV-1a of the name, not Rust's randomly seeded hasher).
pub fn offset_millis(namespace: &str, period: Duration) -> u64 {
    let mut h = Fnv1a::default();
    namespace.hash(&mut h);
    let period_ms = period.as_millis().max(1) as u64;
    h.finish() % period_ms
}

/// How long from `now` until the autoscaler's next sync.
pub fn next_delay(namespace: &str, period: Duration, now: Timestamp) -> Duration {
    let period_ms = (period.as_millis() as u64).max(1000);
    let offset = offset_millis(namespace, Duration::from_millis(period_ms));
    let now_ms = now.as_millisecond().max(0) as u64;
    let phase = (now_ms + period_ms - offset % period_ms) % period_ms;
    let mut delay = period_ms - phase;
    if delay < MIN_DELAY.as_millis() as u64 {
        delay += period_ms;
    }
    Duration::from_millis(delay)
}

#[derive(Clone, Copy)]
struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv1a {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: i64) -> Timestamp {
        Timestamp::from_millisecond(1_700_000_000_000 + ms).unwrap()
    }

    #[test]
    fn one_namespace_shares_one_grid() {
        let p = Duration::from_secs(15);
        // Two autoscalers of a namespace reconciled at different moments meet at the same
        // next instant.
        let a = at(1_000);
        let b = at(7_300);
        let next_a = a.as_millisecond() + next_delay("shop", p, a).as_millis() as i64;
        let next_b = b.as_millisecond() + next_delay("shop", p, b).as_millis() as i64;
        assert!(next_a == next_b || (next_a - next_b).abs() == 15_000);
    }

    #[test]
    fn delays_stay_within_a_period_and_above_the_minimum() {
        let p = Duration::from_secs(15);
        for ms in (0..40_000).step_by(250) {
            let d = next_delay("ns", p, at(ms));
            assert!(d >= MIN_DELAY && d <= p + MIN_DELAY, "{d:?}");
        }
    }

    #[test]
    fn namespaces_are_spread() {
        let p = Duration::from_secs(15);
        let offsets: std::collections::BTreeSet<u64> = (0..100)
            .map(|i| offset_millis(&format!("ns-{i}"), p) / 1000)
            .collect();
        assert!(offsets.len() > 8, "{offsets:?}");
    }
}

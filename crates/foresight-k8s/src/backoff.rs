//! Logging a watch that keeps failing without flooding the log.
//!
//! Watches retry with kube's exponential backoff; while the API server is unreachable every
//! retry fails. [`FailureLog`] logs the 1st, 2nd, 4th, 8th, ... failure of a run (once per
//! backoff step, not once per retry), and one line when the watch works again.
//! [`RepeatedErrors`] does the same per autoscaler for reconcile errors, which recur every
//! sync while a cause lasts.

use parking_lot::Mutex;

use crate::autoscaler_key::{AutoscalerKey, PerAutoscaler};
use crate::digest::digest;
use std::collections::HashMap;
use std::fmt::Display;
use std::time::Duration;

use kube::runtime::utils::ResetTimerBackoff;
use kube::runtime::watcher::ExponentialBackoff;

/// The longest wait between two attempts of a watch.
///
/// kube's default grows to 30 s, so a watch that failed through a 20-second API-server restart
/// may wait another half minute before it looks again, and spec changes wait with it. Five
/// seconds (ten with jitter) keeps recovery within a few syncs at the cost of a few more
/// attempts during an outage (which [`FailureLog`] keeps out of the log).
pub const MAX_WATCH_BACKOFF: Duration = Duration::from_secs(5);

/// The backoff of every watch the controller runs: 0.5 s doubling to [`MAX_WATCH_BACKOFF`],
/// with jitter, starting over after two minutes without failure.
pub fn watch_backoff() -> ResetTimerBackoff<ExponentialBackoff> {
    let exponential = backon::ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(500))
        .with_max_delay(MAX_WATCH_BACKOFF)
        .with_factor(2.0)
        .with_jitter()
        .without_max_times();
    ResetTimerBackoff::new(
        ExponentialBackoff::from(exponential),
        Duration::from_secs(120),
    )
}

/// Counts a watch's consecutive failures and logs a few of them.
#[derive(Debug)]
pub struct FailureLog {
    what: &'static str,
    failures: u64,
    next_logged: u64,
}

impl FailureLog {
    /// A log for the watch of `what` (e.g. "pod watch").
    pub fn new(what: &'static str) -> Self {
        FailureLog {
            what,
            failures: 0,
            next_logged: 1,
        }
    }

    /// Records a failure; says whether it was logged.
    pub fn failed(&mut self, error: &dyn Display) -> bool {
        self.failures += 1;
        if self.failures < self.next_logged {
            return false;
        }
        self.next_logged = self.next_logged.saturating_mul(2);
        tracing::warn!(
            failures = self.failures,
            error = %error,
            "{} failed; retrying with backoff",
            self.what
        );
        true
    }

    /// Records a success, logging the recovery after failures.
    pub fn succeeded(&mut self) {
        if self.failures > 0 {
            tracing::info!(failures = self.failures, "{} recovered", self.what);
        }
        self.failures = 0;
        self.next_logged = 1;
    }
}

/// The last error of each autoscaler, and how often it recurred: a new error is logged at
/// once, a recurring one at its 2nd, 4th, 8th, ... occurrence.
///
/// An error is kept as a hash of its text: when the API server is down every autoscaler has
/// one, and the texts (a few hundred bytes each) cost megabytes at 10,000 autoscalers. The
/// text itself is logged from the failure at hand.
#[derive(Debug, Default)]
pub struct RepeatedErrors(Mutex<HashMap<AutoscalerKey, (u64, u64)>>);

impl RepeatedErrors {
    /// Notes `error` for `key`; `Some(occurrences)` when it should be logged now.
    pub fn note(&self, key: &AutoscalerKey, error: &str) -> Option<u64> {
        let digest = digest(error);
        let mut map = self.0.lock();
        let entry = map.entry(key.clone()).or_insert((digest, 0));
        if entry.0 != digest {
            *entry = (digest, 0);
        }
        entry.1 += 1;
        entry.1.is_power_of_two().then_some(entry.1)
    }

    /// Forgets `key`'s error (it succeeded).
    pub fn clear(&self, key: &AutoscalerKey) {
        self.0.lock().remove(key);
    }
}

impl PerAutoscaler for RepeatedErrors {
    fn forget(&self, key: &AutoscalerKey) {
        self.clear(key);
    }

    fn retain(&self, keep: &dyn Fn(&AutoscalerKey) -> bool) {
        self.0.lock().retain(|k, _| keep(k));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_once_per_doubling_and_starts_over_after_a_success() {
        let mut log = FailureLog::new("pod watch");
        let logged: Vec<u64> = (1..=40)
            .filter(|_| log.failed(&"refused"))
            .collect::<Vec<_>>();
        assert_eq!(logged.len(), 6, "1, 2, 4, 8, 16 and 32 of 40");
        log.succeeded();
        assert!(
            log.failed(&"refused"),
            "the first failure after a recovery is logged"
        );
    }

    #[test]
    fn repeated_errors_are_logged_at_powers_of_two_and_new_ones_at_once() {
        let r = RepeatedErrors::default();
        let (web, db) = (
            AutoscalerKey::new("ns", "web"),
            AutoscalerKey::new("ns", "db"),
        );
        let logged: Vec<u64> = (0..10).filter_map(|_| r.note(&web, "down")).collect();
        assert_eq!(logged, [1, 2, 4, 8]);
        assert_eq!(r.note(&web, "other"), Some(1));
        assert_eq!(r.note(&db, "down"), Some(1));
        r.clear(&web);
        assert_eq!(r.note(&web, "other"), Some(1));
        r.note(&db, "down");
        r.retain(&|k| *k != db);
        assert_eq!(
            r.note(&db, "down"),
            Some(1),
            "forgotten, so logged again at once"
        );
    }
}

//! `spec.fallback`: the failure clock kept in status, and the size to fall back to once a
//! metric has failed long enough. The fallback size is a proposal like any other: the
//! largest proposal wins, then stabilization, the rate policies and min/max apply.

use std::borrow::Cow;

use foresight_api::status::{FallbackStatus, ProposalRecord};

use super::{Candidate, Decision, Event, EventType};
use crate::autoscaler::{Autoscaler, Fallback};
use crate::conditions::{self, FALLBACK_ACTIVE};

impl Decision {
    /// Advances the failure clock in status by this sync (`failed`: whether a metric failed)
    /// and, once the clock reaches `spec.fallback`'s threshold, proposes the fallback size.
    /// Returns whether the fallback applies.
    pub(super) fn fallback(
        &mut self,
        a: &Autoscaler,
        failed: bool,
        current: i32,
        candidates: &mut Vec<Candidate<'_>>,
    ) -> bool {
        let Some(f) = a.fallback else {
            self.status.fallback = None;
            conditions::remove(&mut self.status.conditions, FALLBACK_ACTIVE);
            return false;
        };
        let was_active = self.status.fallback.as_ref().is_some_and(|s| s.active);
        if !failed {
            self.status.fallback = None;
            if was_active {
                self.events.push(Event {
                    type_: EventType::Normal,
                    reason: "FallbackEnded".to_owned(),
                    message: "every metric reads again: the metrics decide".to_owned(),
                });
            }
            self.set(
                FALLBACK_ACTIVE,
                false,
                "MetricsRead",
                "every metric can be read",
            );
            return false;
        }
        let now = self.time;
        let clock = self.status.fallback.get_or_insert(FallbackStatus {
            failing_since: now,
            failed_syncs: 0,
            active: false,
        });
        clock.failed_syncs = clock.failed_syncs.saturating_add(1);
        let failing_for = now.duration_since(clock.failing_since).as_secs();
        clock.active = reached(&f, clock.failed_syncs, failing_for);
        let (syncs, since, active) = (clock.failed_syncs, clock.failing_since, clock.active);
        if !active {
            let message = format!(
                "a metric has failed on {syncs} sync(s) in a row since {since}; the fallback applies {}",
                threshold(&f)
            );
            self.set(FALLBACK_ACTIVE, false, "MetricFailing", &message);
            return false;
        }
        let size = f.behavior.size(current, f.replicas);
        let message = format!(
            "a metric has failed on {syncs} sync(s) in a row since {since}: falling back to {size} replicas ({:?}, replicas {})",
            f.behavior, f.replicas
        );
        if !was_active {
            self.events.push(Event {
                type_: EventType::Warning,
                reason: "FallbackStarted".to_owned(),
                message: message.clone(),
            });
        }
        self.record.proposals.push(ProposalRecord {
            source: "fallback".to_owned(),
            name: "fallback".to_owned(),
            replicas: Some(size),
            detail: Some(message.clone()),
            ..Default::default()
        });
        self.set(FALLBACK_ACTIVE, true, "MetricsFailing", &message);
        candidates.push(Candidate {
            replicas: size,
            name: Cow::Borrowed("fallback"),
        });
        true
    }
}

/// Whether `syncs` failed syncs over `seconds` reach `f`'s threshold (whichever comes first).
fn reached(f: &Fallback, syncs: i32, seconds: i64) -> bool {
    f.failure_threshold.is_some_and(|t| syncs > t)
        || f.failure_duration_seconds.is_some_and(|d| seconds >= d)
}

/// When the fallback applies, in words.
fn threshold(f: &Fallback) -> String {
    match (f.failure_threshold, f.failure_duration_seconds) {
        (Some(t), Some(d)) => format!("after more than {t} failed sync(s) or {d}s of failure"),
        (Some(t), None) => format!("after more than {t} failed sync(s)"),
        (None, Some(d)) => format!("after {d}s of failure"),
        (None, None) => "never".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use foresight_api::fallback::FallbackBehavior;

    #[test]
    fn the_first_threshold_reached_applies() {
        let f = Fallback {
            failure_threshold: Some(3),
            failure_duration_seconds: Some(60),
            replicas: 2,
            behavior: FallbackBehavior::Static,
        };
        assert!(!reached(&f, 3, 45), "three failures are tolerated");
        assert!(reached(&f, 4, 45), "the fourth is one too many, as in KEDA");
        assert!(reached(&f, 2, 60), "a minute of failure is enough");
        let by_time = Fallback {
            failure_threshold: None,
            ..f
        };
        assert!(!reached(&by_time, 100, 59));
    }
}

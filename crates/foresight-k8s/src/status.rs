//! Writing status: only when it changed in a way that matters, through the status
//! subresource, by server-side apply as the field manager `foresight`.
//!
//! # When status is written
//!
//! A sync in steady state writes nothing. Status is split in two:
//!
//! - **decision-relevant** — conditions (type, status, reason, message, lastTransitionTime),
//!   `observedGeneration`, `currentReplicas`, `desiredReplicas`, `expectReplicas`,
//!   `lastScaleTime`, `operatingPoint`, the shape of `lastDecision` (every proposal's source, name, replicas,
//!   target and error; the recommendation; the limits; desired; rescale; strategy; summary),
//!   and `history` as [`foresight_core::history::needs_write`] judges it;
//! - **volatile** — `lastDecision.time`, the observed values in `lastDecision.proposals[].current`
//!   and `.detail`, and `currentMetrics`: the metric readings move every sync.
//!
//! A change in the first part is written at once. A change only in the second is written
//! when the last write is at least `refresh` old (the controller's
//! `--status-refresh-interval`), so `kubectl get` shows readings at most that stale while
//! an idle autoscaler costs one write per interval instead of one per sync. Every write
//! carries the whole status.

use std::time::Duration;

use foresight_api::status::{DecisionRecord, EffectiveHorizontalPodAutoscalerStatus};
use foresight_core::history;
use jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::{Api, Resource};
use serde_json::{json, Value};

use crate::telemetry::{ApiCall, Call};
use foresight_api::EffectiveHorizontalPodAutoscaler;

/// Why status could not be written.
#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    /// The API refused the write.
    #[error("writing status of {name}: {source}")]
    Write {
        /// The object.
        name: String,
        /// The API error.
        source: kube::Error,
    },
}

/// The decision record without what changes every sync.
fn stable_record(r: &DecisionRecord) -> DecisionRecord {
    let mut r = r.clone();
    r.time = Timestamp::UNIX_EPOCH;
    for p in &mut r.proposals {
        p.current = None;
        p.detail = None;
    }
    r
}

/// Whether `new` differs from `old` in a decision-relevant way (see the module docs).
pub fn relevant_change(
    old: &EffectiveHorizontalPodAutoscalerStatus,
    new: &EffectiveHorizontalPodAutoscalerStatus,
) -> bool {
    old.observed_generation != new.observed_generation
        || old.current_replicas != new.current_replicas
        || old.desired_replicas != new.desired_replicas
        || old.expect_replicas != new.expect_replicas
        || old.last_scale_time != new.last_scale_time
        || old.conditions != new.conditions
        || old.operating_point != new.operating_point
        || old.last_decision.as_ref().map(stable_record)
            != new.last_decision.as_ref().map(stable_record)
        || match &new.history {
            Some(h) => history::needs_write(old.history.as_ref(), h),
            None => old.history.is_some(),
        }
}

/// Whether `new` differs from `old` only in volatile readings.
pub fn volatile_change(
    old: &EffectiveHorizontalPodAutoscalerStatus,
    new: &EffectiveHorizontalPodAutoscalerStatus,
) -> bool {
    old.current_metrics != new.current_metrics || old.last_decision != new.last_decision
}

/// When the persisted status was last written, as far as status itself tells: the time of
/// the decision it records.
pub fn written_at(status: &EffectiveHorizontalPodAutoscalerStatus) -> Option<Timestamp> {
    status.last_decision.as_ref().map(|d| d.time)
}

/// Whether to write `new` over `old` at `now`; `last_write` is when this controller last
/// wrote (or, after a restart, [`written_at`]).
pub fn should_write(
    old: &EffectiveHorizontalPodAutoscalerStatus,
    new: &EffectiveHorizontalPodAutoscalerStatus,
    last_write: Option<Timestamp>,
    now: Timestamp,
    refresh: Duration,
) -> bool {
    if relevant_change(old, new) {
        return true;
    }
    if !volatile_change(old, new) {
        return false;
    }
    match last_write {
        None => true,
        Some(t) => {
            let age = now.duration_since(t);
            age.is_negative() || age.unsigned_abs() >= refresh
        }
    }
}

/// The field manager status is applied as.
pub const FIELD_MANAGER: &str = "foresight";

/// The server-side apply body: the object's identity and its whole status. The API server
/// removes whatever this manager applied before and now omits, so nothing needs clearing.
pub fn status_apply(name: &str, status: &EffectiveHorizontalPodAutoscalerStatus) -> Value {
    json!({
        "apiVersion": EffectiveHorizontalPodAutoscaler::api_version(&()),
        "kind": EffectiveHorizontalPodAutoscaler::kind(&()),
        "metadata": { "name": name },
        "status": status,
    })
}

/// Writes `status` to `name`'s status subresource by server-side apply, forcing ownership:
/// this controller is the only author of status, so its write wins over any other.
///
/// Fields another manager owns survive an apply: those left by a merge-patch write (earlier
/// Foresight versions, `kubectl edit --subresource=status`). When the stored status has any
/// field this status lacks, one merge patch clears exactly those, so status always says
/// what the last decision said.
pub async fn write(
    api: &Api<EffectiveHorizontalPodAutoscaler>,
    name: &str,
    status: &EffectiveHorizontalPodAutoscalerStatus,
    calls: &ApiCall,
) -> Result<Option<u64>, StatusError> {
    let failed = |source| StatusError::Write {
        name: name.to_owned(),
        source,
    };
    let body = status_apply(name, status);
    calls.record(Call::PatchStatus);
    let stored = api
        .patch_status(
            name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&body),
        )
        .await
        .map_err(failed)?;
    let mut version = resource_version(&stored);
    let stored = serde_json::to_value(stored.status).unwrap_or(Value::Null);
    if let Some(clear) = leftovers(&stored, &body["status"]) {
        calls.record(Call::PatchStatus);
        let patch = json!({ "status": clear });
        let cleared = api
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(failed)?;
        version = resource_version(&cleared);
    }
    Ok(version)
}

/// An object's resourceVersion as a number. Kubernetes' resource versions are etcd revisions,
/// comparable as integers (KEP-5504 made that a promise; the HPA of 1.37 compares them to tell
/// a stale informer); `None` for anything else, which then is never judged stale.
pub fn resource_version(obj: &EffectiveHorizontalPodAutoscaler) -> Option<u64> {
    obj.metadata.resource_version.as_deref()?.parse().ok()
}

/// What this controller last wrote to an autoscaler's status: the resourceVersion the write
/// gave the object and a [`fingerprint`] of the status (two numbers, not the status itself:
/// at 10,000 autoscalers a copy of each would cost tens of MiB).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    /// The object's resourceVersion after the write.
    pub version: u64,
    /// The decision-relevant part of what was written.
    pub fingerprint: u64,
}

/// What a write that left the object at `version` wrote (`None` when the version is unknown:
/// the cache is then always believed).
pub fn written(
    version: Option<u64>,
    status: &EffectiveHorizontalPodAutoscalerStatus,
) -> Option<Written> {
    version.map(|version| Written {
        version,
        fingerprint: fingerprint(status),
    })
}

/// Whether the cached object predates this controller's own last status write: its status is
/// then older than what the controller knows it wrote (the watch is behind, as it is for
/// several seconds after an API server restart). Comparing a new status with it would find
/// changes that are already written and write them again, every sync, for every autoscaler
/// at once, until the watch catches up.
pub fn cache_behind(cached: &EffectiveHorizontalPodAutoscaler, written: Option<Written>) -> bool {
    match (resource_version(cached), written) {
        (Some(cached), Some(written)) => cached < written.version,
        _ => false,
    }
}

/// Whether to write `new`: against the cached status as [`should_write`] judges, or, while
/// the cache is behind this controller's own last write, only when the decision-relevant
/// part differs from what was written (the readings wait for the cache).
pub fn should_write_over(
    cached: &EffectiveHorizontalPodAutoscaler,
    written: Option<Written>,
    new: &EffectiveHorizontalPodAutoscalerStatus,
    last_write: Option<Timestamp>,
    now: Timestamp,
    refresh: Duration,
) -> bool {
    match written {
        Some(w) if cache_behind(cached, written) => w.fingerprint != fingerprint(new),
        _ => should_write(
            cached.status.as_ref().unwrap_or(&Default::default()),
            new,
            last_write,
            now,
            refresh,
        ),
    }
}

/// A hash of the decision-relevant part of a status (see the module docs), the part a
/// change of which is written at once. The newest recommendation's time is left out: it
/// moves every sync while the value holds, and status leaves it alone then (see
/// `foresight_core::history`).
pub fn fingerprint(status: &EffectiveHorizontalPodAutoscalerStatus) -> u64 {
    use std::hash::{Hash as _, Hasher as _};
    let history = status.history.as_ref().map(|h| {
        let mut h = h.clone();
        if let Some(newest) = h.recommendations.iter_mut().max_by_key(|r| r.timestamp) {
            newest.timestamp = Timestamp::UNIX_EPOCH;
        }
        h
    });
    let relevant = json!({
        "observedGeneration": status.observed_generation,
        "currentReplicas": status.current_replicas,
        "desiredReplicas": status.desired_replicas,
        "expectReplicas": status.expect_replicas,
        "lastScaleTime": status.last_scale_time,
        "conditions": status.conditions,
        "operatingPoint": status.operating_point,
        "lastDecision": status.last_decision.as_ref().map(stable_record),
        "history": history,
    });
    let mut hasher = std::hash::DefaultHasher::new();
    relevant.to_string().hash(&mut hasher);
    hasher.finish()
}

/// The merge patch that removes what `stored` has and `sent` lacks (`null` at each such
/// field, nested objects followed; lists are replaced whole by an apply, so never differ
/// this way), or `None` when there is nothing to remove.
pub fn leftovers(stored: &Value, sent: &Value) -> Option<Value> {
    let (Value::Object(stored), Value::Object(sent)) = (stored, sent) else {
        return None;
    };
    let clear: serde_json::Map<String, Value> = stored
        .iter()
        .filter_map(|(key, value)| match sent.get(key) {
            None => Some((key.clone(), Value::Null)),
            Some(mine) => leftovers(value, mine).map(|inner| (key.clone(), inner)),
        })
        .collect();
    (!clear.is_empty()).then_some(Value::Object(clear))
}

#[cfg(test)]
mod tests {
    use super::*;
    use foresight_api::hpa::MetricStatus;
    use foresight_api::status::{
        Condition, ConditionStatus, ProposalRecord, Recommendation, ScalingHistory,
    };

    fn ts(s: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + s).unwrap()
    }

    fn status(at: i64, reading: &str) -> EffectiveHorizontalPodAutoscalerStatus {
        EffectiveHorizontalPodAutoscalerStatus {
            current_replicas: Some(3),
            desired_replicas: Some(3),
            expect_replicas: Some(3),
            current_metrics: vec![MetricStatus {
                type_: reading.to_owned(),
                ..Default::default()
            }],
            conditions: vec![Condition {
                type_: "Ready".into(),
                status: ConditionStatus::True,
                last_transition_time: Some(ts(0)),
                reason: "DecisionMade".into(),
                message: String::new(),
            }],
            last_decision: Some(DecisionRecord {
                time: ts(at),
                proposals: vec![ProposalRecord {
                    source: "metric".into(),
                    name: "cpu".into(),
                    replicas: Some(3),
                    current: Some(reading.to_owned()),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            history: Some(ScalingHistory::default()),
            ..Default::default()
        }
    }

    #[test]
    fn a_cache_older_than_our_own_write_is_behind() {
        let at = |rv: Option<&str>| {
            let mut o = EffectiveHorizontalPodAutoscaler::new("web", Default::default());
            o.metadata.resource_version = rv.map(str::to_owned);
            o
        };
        let written = |version| {
            Some(Written {
                version,
                fingerprint: 0,
            })
        };
        assert!(cache_behind(&at(Some("41")), written(42)));
        assert!(!cache_behind(&at(Some("42")), written(42)));
        assert!(!cache_behind(&at(Some("43")), written(42)));
        // Nothing written yet, or a version that is not a number: never judged stale.
        assert!(!cache_behind(&at(Some("41")), None));
        assert!(!cache_behind(&at(Some("opaque")), written(42)));
        assert!(!cache_behind(&at(None), written(42)));
    }

    fn written_for(version: u64, s: &EffectiveHorizontalPodAutoscalerStatus) -> Option<Written> {
        written(Some(version), s)
    }

    #[test]
    fn behind_its_cache_the_controller_writes_new_decisions_once() {
        let refresh = Duration::from_secs(120);
        // The cache holds the status at 10; the controller since wrote a new decision (4
        // replicas) at version 42, which the watch has not delivered.
        let mut cached = EffectiveHorizontalPodAutoscaler::new("web", Default::default());
        cached.metadata.resource_version = Some("10".into());
        cached.status = Some(status(0, "50%"));
        let mut wrote = status(30, "90%");
        wrote.desired_replicas = Some(4);
        let written = Some(Written {
            version: 42,
            fingerprint: fingerprint(&wrote),
        });
        // The same decision a sync later, new readings: nothing to write again.
        let mut same = status(45, "91%");
        same.desired_replicas = Some(4);
        assert!(!should_write_over(
            &cached,
            written,
            &same,
            Some(ts(30)),
            ts(45),
            refresh
        ));
        // Judged against the stale cache, it would have been written again.
        assert!(should_write(
            cached.status.as_ref().unwrap(),
            &same,
            Some(ts(30)),
            ts(45),
            refresh
        ));
        // Nor when only the time of the value still recommended moved.
        let mut held = same.clone();
        held.history = Some(ScalingHistory {
            recommendations: vec![Recommendation {
                replicas: 4,
                timestamp: ts(45),
            }],
            ..Default::default()
        });
        let mut wrote_held = wrote.clone();
        wrote_held.history = Some(ScalingHistory {
            recommendations: vec![Recommendation {
                replicas: 4,
                timestamp: ts(30),
            }],
            ..Default::default()
        });
        let written_held = written_for(42, &wrote_held);
        assert!(!should_write_over(
            &cached,
            written_held,
            &held,
            Some(ts(30)),
            ts(45),
            refresh
        ));
        // A new decision is written at once, cache or not.
        let mut next = status(60, "120%");
        next.desired_replicas = Some(5);
        assert!(should_write_over(
            &cached,
            written,
            &next,
            Some(ts(30)),
            ts(60),
            refresh
        ));
        // Once the watch delivers version 42, the cache judges again.
        cached.metadata.resource_version = Some("42".into());
        cached.status = Some(wrote);
        assert!(!should_write_over(
            &cached,
            written,
            &same,
            Some(ts(30)),
            ts(45),
            refresh
        ));
    }

    #[test]
    fn steady_state_writes_nothing() {
        let old = status(0, "50%");
        let new = status(15, "50%");
        assert!(!should_write(
            &old,
            &new,
            Some(ts(0)),
            ts(15),
            Duration::from_secs(300)
        ));
    }

    #[test]
    fn moving_readings_are_refreshed_at_the_interval() {
        let old = status(0, "50%");
        let new = status(15, "52%");
        let refresh = Duration::from_secs(60);
        assert!(!should_write(&old, &new, Some(ts(0)), ts(15), refresh));
        assert!(should_write(&old, &new, Some(ts(0)), ts(60), refresh));
    }

    #[test]
    fn decision_changes_are_written_at_once() {
        let old = status(0, "50%");
        let mut new = status(15, "50%");
        new.desired_replicas = Some(4);
        assert!(should_write(
            &old,
            &new,
            Some(ts(0)),
            ts(15),
            Duration::from_secs(300)
        ));
        let mut new = status(15, "50%");
        new.conditions[0].status = ConditionStatus::False;
        assert!(should_write(
            &old,
            &new,
            Some(ts(0)),
            ts(15),
            Duration::from_secs(300)
        ));
        // A new operating point changes what the decision runs at.
        let mut new = status(15, "50%");
        new.operating_point = Some(foresight_api::status::OperatingPointStatus {
            chosen_at: ts(15),
            replayed_seconds: 86_400,
            target_utilization: Some(80),
            risk_budget_percent: None,
            forecast_budget_percent: None,
            prediction: false,
            meets_objective: true,
            under_seconds: 0,
            replica_hours: 90,
            reactive_under_seconds: 0,
            reactive_replica_hours: 100,
            description: "target 80% and no prediction".to_owned(),
            blocks: Vec::new(),
            carried_under_seconds: 0,
        });
        assert!(should_write(
            &old,
            &new,
            Some(ts(0)),
            ts(15),
            Duration::from_secs(300)
        ));
    }

    #[test]
    fn the_apply_names_the_object_and_carries_the_whole_status() {
        let body = status_apply("web", &status(0, "50%"));
        assert_eq!(body["apiVersion"], "autoscaling.foresight.dev/v1alpha1");
        assert_eq!(body["kind"], "EffectiveHorizontalPodAutoscaler");
        assert_eq!(body["metadata"]["name"], "web");
        assert_eq!(body["status"]["currentReplicas"], 3);
        assert!(body["status"].get("fallback").is_none(), "absent, not null");
    }

    #[test]
    fn leftovers_are_what_the_stored_status_has_beyond_the_sent_one() {
        let sent = json!({"currentReplicas": 3, "lastDecision": {"desired": 3}});
        assert_eq!(leftovers(&sent, &sent), None);
        let stored = json!({
            "currentReplicas": 3,
            "fallback": {"active": true},
            "lastDecision": {"desired": 3, "error": "old"},
            "conditions": [{"type": "Ready"}],
        });
        assert_eq!(
            leftovers(&stored, &sent),
            Some(json!({
                "fallback": null,
                "lastDecision": {"error": null},
                "conditions": null,
            }))
        );
    }
}

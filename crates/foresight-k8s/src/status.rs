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
) -> Result<(), StatusError> {
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
    let stored = serde_json::to_value(stored.status).unwrap_or(Value::Null);
    if let Some(clear) = leftovers(&stored, &body["status"]) {
        calls.record(Call::PatchStatus);
        let patch = json!({ "status": clear });
        api.patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(failed)?;
    }
    Ok(())
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
    use foresight_api::status::{Condition, ConditionStatus, ProposalRecord, ScalingHistory};

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
            prediction: false,
            meets_objective: true,
            under_seconds: 0,
            replica_hours: 90,
            reactive_under_seconds: 0,
            reactive_replica_hours: 100,
            description: "target 80% and no prediction".to_owned(),
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

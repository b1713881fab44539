//! Writing status: only when it changed in a way that matters, through the status
//! subresource, with optimistic concurrency and a retry on conflict.
//!
//! # When status is written
//!
//! A sync in steady state writes nothing. Status is split in two:
//!
//! - **decision-relevant** — conditions (type, status, reason, message, lastTransitionTime),
//!   `observedGeneration`, `currentReplicas`, `desiredReplicas`, `expectReplicas`,
//!   `lastScaleTime`, the shape of `lastDecision` (every proposal's source, name, replicas,
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
use kube::Api;
use serde_json::{json, Value};

use crate::telemetry::{ApiCall, Call};
use foresight_api::EffectiveHorizontalPodAutoscaler;

/// How many times a status write is re-sent after a 409 conflict.
pub const CONFLICT_RETRIES: usize = 3;

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
    /// Every attempt conflicted with another writer.
    #[error("writing status of {name}: still conflicting after {attempts} attempts")]
    Conflict {
        /// The object.
        name: String,
        /// Attempts made.
        attempts: usize,
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

/// The status fields a write replaces, read off the status type's schema so that a field
/// added to the API is covered without touching this code. A merge patch leaves alone what
/// the new status omits, so each absent field is sent as `null` to clear what an earlier
/// write put there.
pub fn status_fields() -> &'static [String] {
    static FIELDS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    FIELDS.get_or_init(|| {
        let schema = schemars::schema_for!(EffectiveHorizontalPodAutoscalerStatus);
        schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    })
}

/// The merge-patch body that replaces the status, guarded by `resource_version`.
pub fn status_patch(
    status: &EffectiveHorizontalPodAutoscalerStatus,
    resource_version: Option<&str>,
) -> Value {
    let mut body = serde_json::to_value(status).unwrap_or_else(|_| json!({}));
    if let Value::Object(map) = &mut body {
        for f in status_fields() {
            map.entry(f.clone()).or_insert(Value::Null);
        }
    }
    let mut patch = json!({ "status": body });
    if let Some(rv) = resource_version {
        patch["metadata"] = json!({ "resourceVersion": rv });
    }
    patch
}

/// Writes `status` to `name`'s status subresource. The write is guarded by the
/// resourceVersion the status was computed from; on a 409 (someone else wrote in between)
/// the object is read again and the same status re-sent with the new version — this
/// controller is the only author of status, so the newer write wins.
pub async fn write(
    api: &Api<EffectiveHorizontalPodAutoscaler>,
    name: &str,
    status: &EffectiveHorizontalPodAutoscalerStatus,
    resource_version: Option<&str>,
    calls: &ApiCall,
) -> Result<(), StatusError> {
    let mut version = resource_version.map(str::to_owned);
    for _ in 0..=CONFLICT_RETRIES {
        calls.record(Call::PatchStatus);
        let patch = status_patch(status, version.as_deref());
        match api
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => return Ok(()),
            Err(kube::Error::Api(e)) if e.code == 409 => {
                calls.record(Call::GetStatus);
                let fresh = api
                    .get_status(name)
                    .await
                    .map_err(|source| StatusError::Write {
                        name: name.to_owned(),
                        source,
                    })?;
                version = fresh.metadata.resource_version;
            }
            Err(source) => {
                return Err(StatusError::Write {
                    name: name.to_owned(),
                    source,
                })
            }
        }
    }
    Err(StatusError::Conflict {
        name: name.to_owned(),
        attempts: CONFLICT_RETRIES + 1,
    })
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
    }

    #[test]
    fn the_patch_clears_absent_fields_and_carries_the_version() {
        let p = status_patch(
            &EffectiveHorizontalPodAutoscalerStatus::default(),
            Some("7"),
        );
        assert_eq!(p["metadata"]["resourceVersion"], "7");
        assert!(status_fields().len() >= 9);
        for f in status_fields() {
            assert!(p["status"].get(f).is_some(), "{f}");
        }
    }

    #[test]
    // The update stays so that a field added to the status type does not break this test.
    #[allow(clippy::needless_update)]
    fn the_field_list_covers_every_status_field() {
        let full = EffectiveHorizontalPodAutoscalerStatus {
            observed_generation: Some(1),
            current_replicas: Some(1),
            desired_replicas: Some(1),
            expect_replicas: Some(1),
            last_scale_time: Some(ts(0)),
            current_metrics: vec![MetricStatus::default()],
            conditions: vec![Condition::default()],
            last_decision: Some(DecisionRecord::default()),
            history: Some(ScalingHistory::default()),
            ..Default::default()
        };
        let v = serde_json::to_value(&full).unwrap();
        for key in v.as_object().unwrap().keys() {
            assert!(status_fields().contains(key), "{key}");
        }
    }
}

//! Kubernetes events on the autoscaler: `SuccessfulRescale` when the workload is resized,
//! and warnings when something fails — each warning once while it persists, not every sync.
//!
//! Each event is its own `events.k8s.io/v1` object, as the native HPA's are: four rescales are
//! four events, each with its new size and reason. (kube's `Recorder` folds events that share
//! a reason into one series whatever their notes say, which turned four rescales into one
//! "New size: 3" with a count of 4.)

use std::sync::atomic::{AtomicU64, Ordering};

use foresight_core::decision::{Event, EventType};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event as KubeEvent;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::PostParams;
use kube::{Api, Client};

use crate::digest::digest;
use crate::telemetry::{ApiCall, Call};

/// The reporting controller's name in events.
pub const REPORTER: &str = "foresight-controller";

/// Publishes the decision's events (events.k8s.io/v1).
#[derive(Clone)]
pub struct EventPublisher {
    client: Client,
    instance: String,
}

/// Makes event names unique within this process even when two share a nanosecond.
static SEQUENCE: AtomicU64 = AtomicU64::new(0);

impl EventPublisher {
    /// A publisher reporting as `instance` (the pod name, when known).
    pub fn new(client: Client, instance: Option<String>) -> Self {
        EventPublisher {
            client,
            instance: instance.unwrap_or_else(|| REPORTER.to_owned()),
        }
    }

    /// Emits `events` on `regarding`, except warnings identical to one emitted by the previous
    /// sync (`previous`), which is then replaced by this sync's events. A rescale is always
    /// reported: each one is a real change. Failures to publish are logged and otherwise
    /// ignored: an event is a courtesy, and status carries the same information.
    pub async fn publish(
        &self,
        regarding: &ObjectReference,
        events: &[Event],
        previous: &mut Vec<WarningDigest>,
        calls: &ApiCall,
    ) {
        let namespace = regarding.namespace.as_deref().unwrap_or("default");
        let api: Api<KubeEvent> = Api::namespaced(self.client.clone(), namespace);
        for e in to_emit(events, previous) {
            calls.record(Call::CreateEvent);
            let event = self.event(regarding, e);
            if let Err(err) = api.create(&PostParams::default(), &event).await {
                tracing::warn!(reason = %e.reason, error = %err, "could not publish event");
            }
        }
        *previous = warnings(events);
    }

    fn event(&self, regarding: &ObjectReference, e: &Event) -> KubeEvent {
        let now = jiff::Timestamp::now();
        let base = regarding.name.as_deref().unwrap_or("autoscaler");
        let sequence = SEQUENCE.fetch_add(1, Ordering::Relaxed);
        KubeEvent {
            metadata: ObjectMeta {
                // As client-go names them: the object's name and a unique suffix.
                name: Some(format!(
                    "{base}.{:x}{sequence:x}",
                    now.as_nanosecond().unsigned_abs()
                )),
                namespace: regarding.namespace.clone(),
                ..ObjectMeta::default()
            },
            event_time: Some(MicroTime(now)),
            type_: Some(
                match e.type_ {
                    EventType::Normal => "Normal",
                    EventType::Warning => "Warning",
                }
                .to_owned(),
            ),
            reason: Some(e.reason.clone()),
            note: Some(truncate(&e.message, 1024)),
            action: Some(action_of(&e.reason).to_owned()),
            regarding: Some(regarding.clone()),
            reporting_controller: Some(REPORTER.to_owned()),
            reporting_instance: Some(self.instance.clone()),
            ..KubeEvent::default()
        }
    }
}

/// The events of this sync that are not repeats of the previous sync's warnings.
pub fn to_emit<'a>(events: &'a [Event], previous: &[WarningDigest]) -> Vec<&'a Event> {
    events
        .iter()
        .filter(|e| e.type_ == EventType::Normal || !previous.contains(&warning_digest(e)))
        .collect()
}

/// A warning event as the next sync compares it: a hash of its reason and message. Every
/// autoscaler keeps its last warnings between syncs, and while a cluster-wide failure lasts
/// (the API server down) each has one or two with a long message; the hashes cost 8 bytes
/// each where the events cost hundreds.
pub type WarningDigest = u64;

/// The digests of `events`' warnings (routine events are never deduplicated).
pub fn warnings(events: &[Event]) -> Vec<WarningDigest> {
    events
        .iter()
        .filter(|e| e.type_ == EventType::Warning)
        .map(warning_digest)
        .collect()
}

fn warning_digest(e: &Event) -> WarningDigest {
    digest(&(&e.reason, &e.message))
}

/// events.k8s.io requires an action: what the controller was doing.
fn action_of(reason: &str) -> &'static str {
    match reason {
        "SuccessfulRescale" | "FailedRescale" => "Rescale",
        "FailedGetScale" => "GetScale",
        _ => "ComputeReplicas",
    }
}

/// The API limits an event note to 1 KiB.
fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(type_: EventType, reason: &str, msg: &str) -> Event {
        Event {
            type_,
            reason: reason.into(),
            message: msg.into(),
        }
    }

    #[test]
    fn repeated_warnings_are_suppressed_but_rescales_are_not() {
        let warn = ev(EventType::Warning, "FailedGetResourceMetric", "down");
        let scale = ev(EventType::Normal, "SuccessfulRescale", "New size: 3");
        let prev = warnings(&[warn.clone(), scale.clone()]);
        let now = vec![warn.clone(), scale.clone()];
        let emitted = to_emit(&now, &prev);
        assert_eq!(emitted, vec![&scale]);
        // A different message is a different event.
        let other = ev(EventType::Warning, "FailedGetResourceMetric", "other");
        assert_eq!(to_emit(std::slice::from_ref(&other), &prev), vec![&other]);
        // Once it clears, a recurrence is reported again.
        assert_eq!(to_emit(std::slice::from_ref(&warn), &[]), vec![&warn]);
    }

    #[test]
    fn truncates_on_a_char_boundary() {
        let s = "é".repeat(600);
        let t = truncate(&s, 1024);
        assert!(t.len() <= 1024);
        assert!(s.starts_with(&t));
    }
}

//! Kubernetes events on the autoscaler: `SuccessfulRescale` when the workload is resized,
//! and warnings when something fails — each warning once while it persists, not every sync.

use foresight_core::decision::{Event, EventType};
use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::{Event as KubeEvent, EventType as KubeEventType, Recorder, Reporter};
use kube::Client;

use crate::telemetry::ApiCall;

/// The reporting controller's name in events.
pub const REPORTER: &str = "foresight-controller";

/// Publishes the decision's events through kube's recorder (events.k8s.io/v1).
#[derive(Clone)]
pub struct EventPublisher {
    recorder: Recorder,
}

impl EventPublisher {
    /// A publisher reporting as `instance` (the pod name, when known).
    pub fn new(client: Client, instance: Option<String>) -> Self {
        EventPublisher {
            recorder: Recorder::new(
                client,
                Reporter {
                    controller: REPORTER.to_owned(),
                    instance,
                },
            ),
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
        previous: &mut Vec<Event>,
        calls: &ApiCall,
    ) {
        for e in to_emit(events, previous) {
            calls.record("create_event");
            let ev = KubeEvent {
                type_: match e.type_ {
                    EventType::Normal => KubeEventType::Normal,
                    EventType::Warning => KubeEventType::Warning,
                },
                reason: e.reason.clone(),
                note: Some(truncate(&e.message, 1024)),
                action: action_of(&e.reason).to_owned(),
                secondary: None,
            };
            if let Err(err) = self.recorder.publish(&ev, regarding).await {
                tracing::warn!(reason = %e.reason, error = %err, "could not publish event");
            }
        }
        *previous = events.to_vec();
    }
}

/// The events of this sync that are not repeats of the previous sync's warnings.
pub fn to_emit<'a>(events: &'a [Event], previous: &[Event]) -> Vec<&'a Event> {
    events
        .iter()
        .filter(|e| e.type_ == EventType::Normal || !previous.contains(e))
        .collect()
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
        let prev = vec![warn.clone(), scale.clone()];
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

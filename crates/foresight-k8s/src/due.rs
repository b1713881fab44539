//! What the reconcile runner holds of each autoscaler: its name, not the autoscaler.
//!
//! kube's controller keeps the object it started a reconcile with until the reconcile ends
//! (it hands it to the error policy then). A reconcile first waits for its permit
//! (`--concurrency`), and under a backlog thousands wait, each pinning the version of its
//! autoscaler that was cached when it came due while the cache moves on: every status
//! write and every relist brings a newer one. At 10,000 autoscalers, in the minutes after an
//! API server restart, that was most of a second copy of every autoscaler (heaptrack: the
//! heap 50 MiB over its steady state, in autoscalers the watch had decoded). So the runner
//! is given a [`DueAutoscaler`], from a cache of its own kept beside the autoscalers', and a
//! reconcile reads the autoscaler from the autoscalers' cache once it holds its permit.

use foresight_api::EffectiveHorizontalPodAutoscaler;
use futures::{Stream, StreamExt};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::runtime::reflector::{store::Writer, ObjectRef};
use kube::runtime::watcher::{self, Event};
use serde::Deserialize;

use crate::relist::InPlace;

/// An autoscaler's namespace and name, as a resource of the autoscalers' kind (so kube's
/// controller can schedule it). Never read from the API: it is made from a cached
/// autoscaler by [`DueAutoscaler::of`].
#[derive(Clone, Debug, Default, Deserialize)]
pub struct DueAutoscaler {
    metadata: ObjectMeta,
}

impl DueAutoscaler {
    /// The handle of `autoscaler`.
    pub fn of(autoscaler: &EffectiveHorizontalPodAutoscaler) -> Self {
        DueAutoscaler {
            metadata: ObjectMeta {
                name: autoscaler.metadata.name.clone(),
                namespace: autoscaler.metadata.namespace.clone(),
                ..ObjectMeta::default()
            },
        }
    }

    /// Where the autoscaler it stands for is cached.
    pub fn autoscaler(&self) -> ObjectRef<EffectiveHorizontalPodAutoscaler> {
        let name = self.metadata.name.as_deref().unwrap_or_default();
        match &self.metadata.namespace {
            Some(ns) => ObjectRef::new(name).within(ns),
            None => ObjectRef::new(name),
        }
    }
}

crate::slim::stands_for!([] DueAutoscaler, EffectiveHorizontalPodAutoscaler, metadata);

/// Keeps `writer`'s cache of handles in step with the autoscaler `events` (a relist in
/// place, as the autoscalers' own cache), passing the events on unchanged. Each event
/// reaches this cache before it goes on, so the runner finds every autoscaler it is told of.
pub fn reflect_handles<S>(
    writer: Writer<DueAutoscaler>,
    events: S,
) -> impl Stream<Item = Result<Event<EffectiveHorizontalPodAutoscaler>, watcher::Error>>
where
    S: Stream<Item = Result<Event<EffectiveHorizontalPodAutoscaler>, watcher::Error>>,
{
    let mut handles = InPlace::new(writer);
    events.map(move |event| {
        if let Ok(event) = &event {
            handles.apply(handle_event(event));
        }
        event
    })
}

/// The event of the handles that `event` of the autoscalers makes.
fn handle_event(event: &Event<EffectiveHorizontalPodAutoscaler>) -> Event<DueAutoscaler> {
    match event {
        Event::Init => Event::Init,
        Event::InitApply(o) => Event::InitApply(DueAutoscaler::of(o)),
        Event::InitDone => Event::InitDone,
        Event::Apply(o) => Event::Apply(DueAutoscaler::of(o)),
        Event::Delete(o) => Event::Delete(DueAutoscaler::of(o)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use foresight_api::EffectiveHorizontalPodAutoscalerSpec;

    fn autoscaler(ns: &str, name: &str, version: &str) -> EffectiveHorizontalPodAutoscaler {
        let spec: EffectiveHorizontalPodAutoscalerSpec =
            serde_json::from_value(serde_json::json!({
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                "maxReplicas": 3
            }))
            .unwrap();
        let mut o = EffectiveHorizontalPodAutoscaler::new(name, spec);
        o.metadata.namespace = Some(ns.into());
        o.metadata.resource_version = Some(version.into());
        o
    }

    #[test]
    fn a_handle_names_its_autoscaler_and_holds_nothing_else() {
        let a = autoscaler("shop", "web", "7");
        let due = DueAutoscaler::of(&a);
        assert_eq!(due.autoscaler(), ObjectRef::from_obj(&a));
        assert_eq!(due.metadata.resource_version, None);
    }

    #[test]
    fn the_handles_follow_the_autoscalers_through_a_relist() {
        let writer = Writer::<DueAutoscaler>::default();
        let handles = writer.as_reader();
        let events = vec![
            Event::Init,
            Event::InitApply(autoscaler("a", "one", "1")),
            Event::InitApply(autoscaler("a", "two", "2")),
            Event::InitDone,
            Event::Apply(autoscaler("b", "three", "3")),
            // A relist that no longer lists `one`.
            Event::Init,
            Event::InitApply(autoscaler("a", "two", "4")),
            Event::InitApply(autoscaler("b", "three", "3")),
        ];
        let stream = reflect_handles(writer, futures::stream::iter(events.into_iter().map(Ok)));
        let passed: Vec<_> = futures::executor::block_on(stream.collect::<Vec<_>>());
        assert_eq!(passed.len(), 8, "every event is passed on");
        let names = |store: &kube::runtime::reflector::Store<DueAutoscaler>| {
            let mut n: Vec<String> = store
                .state()
                .iter()
                .map(|h| h.autoscaler().name.clone())
                .collect();
            n.sort();
            n
        };
        // Mid-relist, nothing has left yet: the runner still finds `one`.
        assert_eq!(names(&handles), ["one", "three", "two"]);
        let writer = Writer::<DueAutoscaler>::default();
        let handles = writer.as_reader();
        let events = vec![
            Event::Init,
            Event::InitApply(autoscaler("a", "one", "1")),
            Event::InitDone,
            Event::Init,
            Event::InitApply(autoscaler("a", "two", "2")),
            Event::InitDone,
        ];
        let stream = reflect_handles(writer, futures::stream::iter(events.into_iter().map(Ok)));
        futures::executor::block_on(stream.collect::<Vec<_>>());
        assert_eq!(names(&handles), ["two"], "what a relist leaves out goes");
    }
}

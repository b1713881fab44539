//! Relists applied in place.
//!
//! After a watch expires (410 Gone, an API server restart) the watcher lists everything
//! again: `Init`, one `InitApply` per object, `InitDone`. kube's store, like a cache that
//! fills a fresh map and swaps it in, holds two full copies until the list ends: at 10,000
//! autoscalers that was about 80 MiB on top of the steady state. Here a relist updates the
//! live cache object by object and, when it completes, removes what it did not list (the
//! objects deleted while no watch ran). Readers never miss a live object meanwhile; they may
//! see some objects at their new version and others still at their old one, which a cache
//! read one object at a time allows anyway.

use std::collections::HashSet;
use std::hash::Hash;

use futures::{Stream, StreamExt};
use kube::runtime::reflector::{store::Writer, ObjectRef, Store};
use kube::runtime::watcher::{self, Event};
use kube::Resource;

/// The keys a relist has listed so far, so that the rest can be removed when it completes.
#[derive(Debug)]
pub struct Sweep<Key> {
    seen: Option<HashSet<Key>>,
}

impl<Key> Default for Sweep<Key> {
    fn default() -> Self {
        Sweep { seen: None }
    }
}

impl<Key: Eq + Hash> Sweep<Key> {
    /// A relist begins (the watcher's `Init`). Keys noted by an earlier attempt that failed
    /// part way are forgotten: only a complete list says what exists.
    pub fn begin(&mut self) {
        self.seen = Some(HashSet::new());
    }

    /// The relist listed `key`. Outside a relist this does nothing.
    pub fn saw(&mut self, key: Key) {
        if let Some(seen) = &mut self.seen {
            seen.insert(key);
        }
    }

    /// The relist completed: the keys it listed. `None` when no relist had begun, and then
    /// nothing is to be removed.
    pub fn finish(&mut self) -> Option<HashSet<Key>> {
        self.seen.take()
    }
}

/// An object's namespace and name: what identifies it in a watch of one kind.
type Name = (Option<String>, String);

fn name_of<K: Resource>(obj: &K) -> Option<Name> {
    Some((obj.meta().namespace.clone(), obj.meta().name.clone()?))
}

/// Keeps `writer`'s store current from `events`, like kube's `.reflect(writer)`, but applies
/// every relist after the first list in place. The events are passed on unchanged.
///
/// The first list still goes through the writer as kube does it: the store is empty then,
/// so its buffer is the only copy, and its `InitDone` is what makes the store ready.
pub fn reflect_in_place<K, S>(
    writer: Writer<K>,
    events: S,
) -> impl Stream<Item = Result<Event<K>, watcher::Error>>
where
    K: Resource<DynamicType = ()> + Clone + 'static,
    S: Stream<Item = Result<Event<K>, watcher::Error>>,
{
    let mut store = InPlace::new(writer);
    events.map(move |event| event.map(|e| store.apply(e)))
}

/// The state behind [`reflect_in_place`].
pub(crate) struct InPlace<K: Resource<DynamicType = ()> + Clone + 'static> {
    writer: Writer<K>,
    reader: Store<K>,
    /// Whether the first list has completed.
    listed: bool,
    sweep: Sweep<Name>,
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> InPlace<K> {
    pub(crate) fn new(writer: Writer<K>) -> Self {
        let reader = writer.as_reader();
        InPlace {
            writer,
            reader,
            listed: false,
            sweep: Sweep::default(),
        }
    }

    /// Applies one event to the store and gives it back.
    pub(crate) fn apply(&mut self, event: Event<K>) -> Event<K> {
        if !self.listed {
            self.writer.apply_watcher_event(&event);
            self.listed = matches!(event, Event::InitDone);
            return event;
        }
        match event {
            Event::Init => {
                self.sweep.begin();
                Event::Init
            }
            Event::InitApply(obj) => {
                if let Some(name) = name_of(&obj) {
                    self.sweep.saw(name);
                }
                // Unchanged since the store got it: the stored copy stays, and with it the
                // one that running reconciles already hold.
                if self.holds_version(&obj) {
                    return Event::InitApply(obj);
                }
                let applied = Event::Apply(obj);
                self.writer.apply_watcher_event(&applied);
                as_listed(applied)
            }
            // Never given to the writer: its buffer is empty after the first list, and
            // swapping that in would empty the store.
            Event::InitDone => {
                self.remove_unlisted();
                Event::InitDone
            }
            Event::Apply(_) | Event::Delete(_) => {
                self.writer.apply_watcher_event(&event);
                event
            }
        }
    }

    /// Whether the store holds `obj` at the same resourceVersion.
    fn holds_version(&self, obj: &K) -> bool {
        let version = &obj.meta().resource_version;
        version.is_some()
            && self
                .reader
                .get(&ObjectRef::from_obj(obj))
                .is_some_and(|stored| &stored.meta().resource_version == version)
    }

    /// At the end of a relist: removes every stored object it did not list.
    fn remove_unlisted(&mut self) {
        let Some(listed) = self.sweep.finish() else {
            return;
        };
        for obj in self.reader.state() {
            let seen = name_of(&*obj).is_some_and(|name| listed.contains(&name));
            if !seen {
                self.writer
                    .apply_watcher_event(&Event::Delete(K::clone(&obj)));
            }
        }
    }
}

/// An `Apply` made of an `InitApply`, given back as the `InitApply` it was.
fn as_listed<K>(event: Event<K>) -> Event<K> {
    match event {
        Event::Apply(obj) => Event::InitApply(obj),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use futures::channel::mpsc;
    use futures::FutureExt;
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;

    fn cm(name: &str, version: &str) -> ConfigMap {
        let mut c = ConfigMap::default();
        c.metadata.namespace = Some("ns".into());
        c.metadata.name = Some(name.into());
        c.metadata.resource_version = Some(version.into());
        c
    }

    /// Feeds events one at a time and reads what comes out, so the store can be checked
    /// between them.
    struct Feed {
        tx: mpsc::UnboundedSender<Result<Event<ConfigMap>, watcher::Error>>,
        out: futures::stream::BoxStream<'static, Result<Event<ConfigMap>, watcher::Error>>,
        store: Store<ConfigMap>,
    }

    impl Feed {
        fn new() -> Self {
            let writer = Writer::<ConfigMap>::default();
            let store = writer.as_reader();
            let (tx, rx) = mpsc::unbounded();
            Feed {
                tx,
                out: reflect_in_place(writer, rx).boxed(),
                store,
            }
        }

        /// Sends one event and returns what the stream passed on.
        fn send(&mut self, event: Event<ConfigMap>) -> Event<ConfigMap> {
            self.tx.unbounded_send(Ok(event)).unwrap();
            match self.out.next().now_or_never() {
                Some(Some(Ok(e))) => e,
                other => panic!("expected an event passed on, got {other:?}"),
            }
        }

        fn fail(&mut self) {
            self.tx
                .unbounded_send(Err(watcher::Error::NoResourceVersion))
                .unwrap();
            let passed = self.out.next().now_or_never();
            assert!(matches!(passed, Some(Some(Err(_)))), "{passed:?}");
        }

        fn get(&self, name: &str) -> Option<Arc<ConfigMap>> {
            self.store
                .get(&ObjectRef::<ConfigMap>::new(name).within("ns"))
        }

        fn version(&self, name: &str) -> Option<String> {
            self.get(name)?.metadata.resource_version.clone()
        }

        fn names(&self) -> Vec<String> {
            let mut names: Vec<String> = self
                .store
                .state()
                .iter()
                .filter_map(|c| c.metadata.name.clone())
                .collect();
            names.sort();
            names
        }

        fn list(&mut self, objects: &[ConfigMap]) {
            self.send(Event::Init);
            for o in objects {
                self.send(Event::InitApply(o.clone()));
            }
            self.send(Event::InitDone);
        }
    }

    #[test]
    fn the_first_list_fills_the_store_and_makes_it_ready() {
        let mut feed = Feed::new();
        assert!(feed.store.wait_until_ready().now_or_never().is_none());
        feed.send(Event::Init);
        feed.send(Event::InitApply(cm("a", "1")));
        // As kube does it: the first list shows when complete.
        assert!(feed.get("a").is_none());
        feed.send(Event::InitApply(cm("b", "1")));
        assert!(matches!(feed.send(Event::InitDone), Event::InitDone));
        assert_eq!(feed.names(), ["a", "b"]);
        assert!(matches!(
            feed.store.wait_until_ready().now_or_never(),
            Some(Ok(()))
        ));
    }

    #[test]
    fn a_relist_updates_in_place_and_removes_the_unlisted_at_the_end() {
        let mut feed = Feed::new();
        feed.list(&[cm("a", "1"), cm("b", "1")]);

        assert!(matches!(feed.send(Event::Init), Event::Init));
        // Nothing missing while the relist runs.
        assert_eq!(feed.names(), ["a", "b"]);
        let passed = feed.send(Event::InitApply(cm("a", "2")));
        assert!(
            matches!(&passed, Event::InitApply(c) if c.metadata.resource_version.as_deref() == Some("2"))
        );
        assert_eq!(feed.version("a").as_deref(), Some("2"));
        assert_eq!(feed.version("b").as_deref(), Some("1"));
        feed.send(Event::InitApply(cm("c", "3")));
        assert_eq!(feed.names(), ["a", "b", "c"]);

        // b was deleted while no watch ran.
        assert!(matches!(feed.send(Event::InitDone), Event::InitDone));
        assert_eq!(feed.names(), ["a", "c"]);

        // Watch events after it apply as before.
        feed.send(Event::Apply(cm("d", "4")));
        feed.send(Event::Delete(cm("a", "2")));
        assert_eq!(feed.names(), ["c", "d"]);
    }

    #[test]
    fn an_unchanged_object_keeps_the_copy_the_store_has() {
        let mut feed = Feed::new();
        feed.list(&[cm("a", "1"), cm("b", "1")]);
        let (a, b) = (feed.get("a").unwrap(), feed.get("b").unwrap());
        feed.list(&[cm("a", "1"), cm("b", "2")]);
        assert!(Arc::ptr_eq(&a, &feed.get("a").unwrap()));
        assert!(!Arc::ptr_eq(&b, &feed.get("b").unwrap()));
        assert_eq!(feed.version("b").as_deref(), Some("2"));
    }

    #[test]
    fn only_a_complete_relist_removes_anything() {
        let mut feed = Feed::new();
        feed.list(&[cm("a", "1"), cm("b", "1")]);
        // A relist fails part way: what it listed is applied, nothing is removed.
        feed.send(Event::Init);
        feed.send(Event::InitApply(cm("a", "2")));
        feed.fail();
        assert_eq!(feed.names(), ["a", "b"]);
        assert_eq!(feed.version("a").as_deref(), Some("2"));
        // The next one completes without a: what it did not list goes, whatever the failed
        // one had seen.
        feed.send(Event::Init);
        feed.send(Event::InitApply(cm("c", "3")));
        assert_eq!(feed.names(), ["a", "b", "c"]);
        feed.send(Event::InitDone);
        assert_eq!(feed.names(), ["c"]);
    }

    #[test]
    fn a_first_list_that_fails_is_started_over() {
        let mut feed = Feed::new();
        feed.send(Event::Init);
        feed.send(Event::InitApply(cm("a", "1")));
        feed.fail();
        feed.list(&[cm("c", "1")]);
        assert_eq!(feed.names(), ["c"]);
        assert!(feed.store.wait_until_ready().now_or_never().is_some());
    }

    #[test]
    fn a_sweep_without_a_relist_removes_nothing() {
        let mut sweep = Sweep::<u8>::default();
        sweep.saw(1);
        assert_eq!(sweep.finish(), None);
        sweep.begin();
        sweep.saw(1);
        sweep.begin();
        sweep.saw(2);
        assert_eq!(sweep.finish(), Some(HashSet::from([2])));
        assert_eq!(sweep.finish(), None);
    }
}

//! The pod cache: every pod of the cluster, kept current by one watch and indexed by
//! namespace, reduced to what the decision reads (phase, readiness, start time, requests).
//!
//! Listing pods per autoscaler per sync is what the HPA controller's informer saves it from;
//! this is the same idea, with an index so that selecting one workload's pods costs the size
//! of its namespace, not of the cluster.
//!
//! The pods of one ReplicaSet (or any one template) carry the same labels and request the
//! same resources, so each namespace keeps every distinct such set once (a shape) and a pod
//! keeps its name, what its status says, and its shape. The label index leads to shapes,
//! each shape to its pods' names: one shape per workload rather than one label set per pod.

use std::collections::hash_map::Entry as MapEntry;
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use jiff::Timestamp;
use parking_lot::{Mutex, RwLock};

use foresight_api::status::ConditionStatus;
use foresight_core::pods::{Container, Pod, PodPhase, ReadyCondition};
use foresight_core::resources::ResourceList;
use foresight_core::time::GO_ZERO_TIME;
use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod as KubePod;
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client};

use foresight_api::selector::Selector;

use crate::labels::{LabelIndex, Labels};
use crate::relist::Sweep;
use crate::slim::WatchedPod;

/// One cached pod: its labels (for selectors) and the decision's view of it.
#[derive(Clone, Debug, PartialEq)]
pub struct CachedPod {
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// What the decision reads.
    pub pod: Pod,
}

/// What the pods of one template have in common: their labels and their requests. Kept once
/// per namespace for all the pods that have it (`Namespace::shapes`).
#[derive(Debug, PartialEq, Eq)]
struct Shape {
    /// `metadata.labels`.
    labels: Labels,
    containers: Box<[Container]>,
    sidecars: Box<[Container]>,
    /// Boxed: most pods have none, and the shape is smaller without the room for one.
    pod_requests: Option<Box<ResourceList>>,
}

/// By the labels only: equal shapes have equal labels, and shapes with equal labels but
/// other requests are rare (a pod resized in place).
impl Hash for Shape {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.labels.hash(state);
    }
}

/// What one pod has of its own: what its status says (and its deletion time).
#[derive(Clone, Debug, PartialEq)]
struct State {
    phase: PodPhase,
    ready: Option<ReadyCondition>,
    start_time: Option<Timestamp>,
    deletion_timestamp: Option<Timestamp>,
}

/// A pod as the cache keeps it.
#[derive(Debug)]
struct Entry {
    shape: Arc<Shape>,
    state: State,
}

/// A cached pod taken apart into its shape and its own state.
fn split(pod: CachedPod) -> (Shape, State) {
    let p = pod.pod;
    let shape = Shape {
        labels: pod.labels.into(),
        containers: shrunk(p.containers),
        sidecars: shrunk(p.sidecars),
        pod_requests: p.pod_requests.map(Box::new),
    };
    let state = State {
        phase: p.phase,
        ready: p.ready,
        start_time: p.start_time,
        deletion_timestamp: p.deletion_timestamp,
    };
    (shape, state)
}

fn shrunk(mut containers: Vec<Container>) -> Box<[Container]> {
    for c in &mut containers {
        c.name.shrink_to_fit();
        c.requests.other.shrink_to_fit();
    }
    containers.into_boxed_slice()
}

impl Entry {
    /// The decision's view of the pod named `name`.
    fn pod(&self, name: &str) -> Pod {
        Pod {
            name: name.to_owned(),
            phase: self.state.phase,
            ready: self.state.ready,
            start_time: self.state.start_time,
            deletion_timestamp: self.state.deletion_timestamp,
            containers: self.shape.containers.to_vec(),
            sidecars: self.shape.sidecars.to_vec(),
            pod_requests: self.shape.pod_requests.as_deref().cloned(),
        }
    }
}

/// The pods that have one shape, by name.
type Members = Vec<Arc<str>>;

/// One namespace's pods, their shapes, and an index from each `label=value` to the shapes
/// that carry it.
#[derive(Debug, Default)]
struct Namespace {
    /// Every pod, by name.
    pods: BTreeMap<Arc<str>, Entry>,
    /// Every shape its pods have, each with the names of those pods, sorted. A shape goes
    /// with its last pod.
    shapes: HashMap<Arc<Shape>, Members>,
    /// The shapes that carry each `label=value`.
    by_label: LabelIndex<Arc<Shape>>,
}

impl Namespace {
    /// Adds or replaces a pod. A pod whose labels and requests did not change keeps its
    /// place in the index and has only its state replaced: most watch events are status
    /// changes, and a relist lists every pod again, most of them unchanged.
    fn insert(&mut self, name: String, (shape, state): (Shape, State)) {
        if let Some(entry) = self.pods.get_mut(name.as_str()) {
            if *entry.shape == shape {
                entry.state = state;
                return;
            }
        }
        let name: Arc<str> = match self.pods.get_key_value(name.as_str()) {
            Some((existing, _)) => existing.clone(),
            None => name.into(),
        };
        self.remove(&name);
        let shape = self.intern(shape, &name);
        self.pods.insert(name, Entry { shape, state });
    }

    /// The namespace's copy of `shape`, made if it has none, with `name` among its pods.
    fn intern(&mut self, shape: Shape, name: &Arc<str>) -> Arc<Shape> {
        if let Some(interned) = self.shapes.get_key_value(&shape).map(|(s, _)| s.clone()) {
            if let Some(members) = self.shapes.get_mut(&shape) {
                if let Err(at) = members.binary_search(name) {
                    members.insert(at, name.clone());
                }
            }
            return interned;
        }
        let shape = Arc::new(shape);
        self.by_label.insert(&shape.labels, shape.clone());
        self.shapes.insert(shape.clone(), vec![name.clone()]);
        shape
    }

    fn remove(&mut self, name: &str) {
        let Some(old) = self.pods.remove(name) else {
            return;
        };
        let MapEntry::Occupied(mut members) = self.shapes.entry(old.shape.clone()) else {
            return;
        };
        if let Ok(at) = members.get().binary_search_by(|m| (**m).cmp(name)) {
            members.get_mut().remove(at);
        }
        if !members.get().is_empty() {
            return;
        }
        members.remove();
        // Its last pod went: out of the index too.
        self.by_label
            .remove(&old.shape.labels, |s| Arc::ptr_eq(s, &old.shape));
    }

    fn select(&self, selector: &Selector) -> Vec<Pod> {
        match selector.required_label() {
            Some((k, v)) => {
                let mut shapes = 0;
                let mut out: Vec<Pod> = Vec::new();
                for shape in self.by_label.candidates(k, v) {
                    if !shape.labels.matches(selector) {
                        continue;
                    }
                    shapes += 1;
                    let members = self.shapes.get(shape).into_iter().flatten();
                    out.extend(
                        members.filter_map(|name| self.pods.get(name).map(|entry| entry.pod(name))),
                    );
                }
                // Each shape's pods are in name order; together they may not be.
                if shapes > 1 {
                    out.sort_unstable_by(|a, b| a.name.cmp(&b.name));
                }
                out
            }
            None => self
                .pods
                .iter()
                .filter(|(_, entry)| entry.shape.labels.matches(selector))
                .map(|(name, entry)| entry.pod(name))
                .collect(),
        }
    }
}

type Namespaces = HashMap<String, Namespace>;

/// Pods by namespace and name.
#[derive(Debug, Default)]
pub struct PodCache {
    pods: RwLock<Namespaces>,
    /// The pods a (re)list has listed so far. A relist applies in place (one copy of the
    /// cache, not two) and removes the pods it did not list when it completes.
    relist: Mutex<Sweep<(String, String)>>,
    ready: AtomicBool,
}

impl PodCache {
    /// An empty cache that is not ready.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the first list has completed (before that, an empty answer means nothing).
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }

    /// Marks the cache complete (the watch does this after its first list).
    pub fn mark_ready(&self) {
        self.ready.store(true, Ordering::Release);
    }

    /// Adds or replaces a pod.
    pub fn apply(&self, pod: &KubePod) {
        let Some((ns, name, cached)) = convert(pod) else {
            return;
        };
        let split = split(cached);
        self.pods.write().entry(ns).or_default().insert(name, split);
    }

    /// Removes a pod.
    pub fn delete(&self, pod: &KubePod) {
        let (Some(ns), Some(name)) = (&pod.metadata.namespace, &pod.metadata.name) else {
            return;
        };
        let mut map = self.pods.write();
        if let Some(pods) = map.get_mut(ns) {
            pods.remove(name);
            if pods.pods.is_empty() {
                map.remove(ns);
            }
        }
    }

    fn start_relist(&self) {
        self.relist.lock().begin();
    }

    fn relist_apply(&self, pod: &KubePod) {
        let Some((ns, name, cached)) = convert(pod) else {
            return;
        };
        self.relist.lock().saw((ns.clone(), name.clone()));
        let split = split(cached);
        self.pods.write().entry(ns).or_default().insert(name, split);
    }

    /// Removes the pods the completed list did not list (deleted while no watch ran), under
    /// one write lock, and marks the cache ready.
    fn finish_relist(&self) {
        let listed = self.relist.lock().finish();
        if let Some(listed) = listed {
            let mut map = self.pods.write();
            for (ns, pods) in map.iter_mut() {
                let unlisted: Vec<Arc<str>> = pods
                    .pods
                    .keys()
                    .filter(|name| !listed.contains(&(ns.clone(), name.to_string())))
                    .cloned()
                    .collect();
                for name in unlisted {
                    pods.remove(&name);
                }
            }
            map.retain(|_, pods| !pods.pods.is_empty());
        }
        self.mark_ready();
    }

    /// The pods of `namespace` that `selector` selects, in name order.
    pub fn select(&self, namespace: &str, selector: &Selector) -> Vec<Pod> {
        self.pods
            .read()
            .get(namespace)
            .map(|ns| ns.select(selector))
            .unwrap_or_default()
    }

    /// How many pods are cached.
    pub fn len(&self) -> usize {
        self.pods.read().values().map(|ns| ns.pods.len()).sum()
    }

    /// Whether no pod is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keeps the cache current from a watch of all pods, until the stream ends (never, in
    /// practice: the watcher retries with backoff).
    pub async fn run(self: Arc<Self>, client: Client) {
        // Decoded without what `convert` does not read (see `crate::slim`).
        let api: Api<WatchedPod> = Api::all(client);
        let stream =
            watcher(api, crate::client::watch_config()).backoff(crate::backoff::watch_backoff());
        futures::pin_mut!(stream);
        let mut failures = crate::backoff::FailureLog::new("pod watch");
        while let Some(event) = stream.next().await {
            if event.is_ok() {
                failures.succeeded();
            }
            match event {
                Ok(watcher::Event::Apply(p)) => self.apply(&p.0),
                Ok(watcher::Event::Delete(p)) => self.delete(&p.0),
                Ok(watcher::Event::Init) => self.start_relist(),
                Ok(watcher::Event::InitApply(p)) => self.relist_apply(&p.0),
                Ok(watcher::Event::InitDone) => self.finish_relist(),
                Err(e) => {
                    failures.failed(&e);
                }
            }
        }
    }
}

/// The decision's view of a pod. Pods without a namespace or name are not real API objects
/// and are skipped.
pub fn convert(pod: &KubePod) -> Option<(String, String, CachedPod)> {
    let ns = pod.metadata.namespace.clone()?;
    let name = pod.metadata.name.clone()?;
    let status = pod.status.as_ref();
    let phase = match status.and_then(|s| s.phase.as_deref()) {
        Some("Pending") => PodPhase::Pending,
        Some("Running") => PodPhase::Running,
        Some("Succeeded") => PodPhase::Succeeded,
        Some("Failed") => PodPhase::Failed,
        // Kubernetes' zero value for an unset phase is "", which its grouping treats like
        // any phase other than Pending and Failed.
        Some("Unknown") => PodPhase::Unknown,
        _ => PodPhase::Unknown,
    };
    let ready = status
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"))
        .map(|c| ReadyCondition {
            status: match c.status.as_str() {
                "True" => ConditionStatus::True,
                "False" => ConditionStatus::False,
                _ => ConditionStatus::Unknown,
            },
            last_transition_time: c
                .last_transition_time
                .as_ref()
                .map(|t| t.0)
                .unwrap_or(GO_ZERO_TIME),
        });
    let spec = pod.spec.as_ref();
    let containers = spec
        .map(|s| s.containers.iter().map(container).collect())
        .unwrap_or_default();
    // Restartable init containers (sidecars) count in the pod's request from Kubernetes 1.29.
    let sidecars = spec
        .and_then(|s| s.init_containers.as_ref())
        .into_iter()
        .flatten()
        .filter(|c| c.restart_policy.as_deref() == Some("Always"))
        .map(container)
        .collect();
    let pod_requests = spec
        .and_then(|s| s.resources.as_ref())
        .and_then(|r| r.requests.as_ref())
        .map(request_list);
    let cached = CachedPod {
        labels: pod.metadata.labels.clone().unwrap_or_default(),
        pod: Pod {
            name: name.clone(),
            phase,
            ready,
            start_time: status.and_then(|s| s.start_time.as_ref()).map(|t| t.0),
            deletion_timestamp: pod.metadata.deletion_timestamp.as_ref().map(|t| t.0),
            containers,
            sidecars,
            pod_requests,
        },
    };
    Some((ns, name, cached))
}

/// A container's name and requests.
fn container(c: &k8s_openapi::api::core::v1::Container) -> Container {
    Container {
        name: c.name.clone(),
        requests: c
            .resources
            .as_ref()
            .and_then(|r| r.requests.as_ref())
            .map(request_list)
            .unwrap_or_default(),
    }
}

/// Requests in thousandths. An unparseable request counts as absent: the metric then fails
/// with "missing request", visibly.
fn request_list(
    requests: &std::collections::BTreeMap<
        String,
        k8s_openapi::apimachinery::pkg::api::resource::Quantity,
    >,
) -> ResourceList {
    let mut list = ResourceList::default();
    for (k, q) in requests {
        if let Ok(v) = foresight_api::Quantity(q.0.clone()).milli_value() {
            list.set(k, v);
        }
    }
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(ns: &str, name: &str, app: &str) -> KubePod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"namespace": ns, "name": name, "labels": {"app": app}},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"}}}]},
            "status": {"phase": "Running", "startTime": "2026-01-01T00:00:00Z",
                       "conditions": [{"type": "Ready", "status": "True",
                                       "lastTransitionTime": "2026-01-01T00:00:10Z"}]}
        }))
        .unwrap()
    }

    #[test]
    fn selects_by_namespace_and_labels() {
        let cache = PodCache::new();
        cache.apply(&pod("a", "web-1", "web"));
        cache.apply(&pod("a", "db-1", "db"));
        cache.apply(&pod("b", "web-2", "web"));
        let sel = Selector::parse("app=web").unwrap();
        let got = cache.select("a", &sel);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].name, "web-1");
        assert_eq!(got[0].containers[0].requests.cpu, Some(500));
        assert_eq!(got[0].phase, PodPhase::Running);
        assert_eq!(got[0].ready.unwrap().status, ConditionStatus::True);
        cache.delete(&pod("a", "web-1", "web"));
        assert!(cache.select("a", &sel).is_empty());
        assert_eq!(cache.len(), 2);
        // Relabelled pods move in the index.
        cache.apply(&pod("a", "db-1", "web"));
        assert_eq!(cache.select("a", &sel).len(), 1);
        assert!(cache
            .select("a", &Selector::parse("app=db").unwrap())
            .is_empty());
        // Selectors without an equality still see every pod.
        assert_eq!(cache.select("a", &Selector::parse("app").unwrap()).len(), 1);
    }

    fn names(cache: &PodCache, ns: &str, selector: &str) -> Vec<String> {
        cache
            .select(ns, &Selector::parse(selector).unwrap())
            .into_iter()
            .map(|p| p.name)
            .collect()
    }

    #[test]
    fn a_relist_replaces_everything() {
        let cache = PodCache::new();
        cache.apply(&pod("a", "gone", "web"));
        cache.apply(&pod("a", "moved", "web"));
        cache.apply(&pod("b", "gone-too", "web"));
        cache.start_relist();
        cache.relist_apply(&pod("a", "kept", "web"));
        cache.relist_apply(&pod("a", "moved", "db"));
        // Mid-relist nothing listed before is missing, and what was listed is current.
        assert_eq!(names(&cache, "a", "app=web"), ["gone", "kept"]);
        assert_eq!(names(&cache, "a", "app=db"), ["moved"]);
        assert_eq!(names(&cache, "b", "app=web"), ["gone-too"]);
        assert!(!cache.is_ready());
        cache.finish_relist();
        assert!(cache.is_ready());
        assert_eq!(names(&cache, "a", ""), ["kept", "moved"]);
        // Gone from the label index too.
        assert_eq!(names(&cache, "a", "app=web"), ["kept"]);
        assert!(names(&cache, "b", "app=web").is_empty());
        assert_eq!(cache.len(), 2);
        let index: usize = cache
            .pods
            .read()
            .values()
            .map(|ns| ns.by_label.pairs())
            .sum();
        assert_eq!(index, 2, "one label=value for kept, one for moved");
    }

    #[test]
    fn a_failed_relist_removes_nothing_and_the_next_complete_one_does() {
        let cache = PodCache::new();
        cache.start_relist();
        cache.relist_apply(&pod("a", "one", "web"));
        cache.relist_apply(&pod("a", "two", "web"));
        cache.finish_relist();
        // A relist that lists only "one", then fails: both stay.
        cache.start_relist();
        cache.relist_apply(&pod("a", "one", "web"));
        assert_eq!(names(&cache, "a", "app=web"), ["one", "two"]);
        // The next lists only "two": "one" goes although the failed one had listed it.
        cache.start_relist();
        cache.relist_apply(&pod("a", "two", "web"));
        cache.finish_relist();
        assert_eq!(names(&cache, "a", "app=web"), ["two"]);
    }

    /// A pod of ReplicaSet `rs` of app `app`: labelled with both, one container requesting
    /// `cpu`, Running and Ready or Pending and not.
    fn rs_pod(ns: &str, name: &str, app: &str, rs: &str, cpu: &str, ready: bool) -> KubePod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"namespace": ns, "name": name,
                         "labels": {"app": app, "pod-template-hash": rs}},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
            "status": {"phase": if ready { "Running" } else { "Pending" },
                       "startTime": "2026-01-01T00:00:00Z",
                       "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" },
                                       "lastTransitionTime": "2026-01-01T00:00:10Z"}]}
        }))
        .unwrap()
    }

    fn shapes(cache: &PodCache, ns: &str) -> usize {
        cache.pods.read().get(ns).map_or(0, |n| n.shapes.len())
    }

    #[test]
    fn the_pods_of_a_replica_set_share_one_shape() {
        let cache = PodCache::new();
        for i in 0..3 {
            cache.apply(&rs_pod(
                "a",
                &format!("web-1-{i}"),
                "web",
                "1",
                "500m",
                true,
            ));
        }
        cache.apply(&rs_pod("a", "web-2-0", "web", "2", "500m", false));
        assert_eq!(shapes(&cache, "a"), 2, "one per ReplicaSet");
        {
            let map = cache.pods.read();
            let ns = &map["a"];
            assert!(Arc::ptr_eq(
                &ns.pods["web-1-0"].shape,
                &ns.pods["web-1-2"].shape
            ));
            assert!(!Arc::ptr_eq(
                &ns.pods["web-1-0"].shape,
                &ns.pods["web-2-0"].shape
            ));
        }
        // Both ReplicaSets' pods, in name order, each with its own state.
        let web = cache.select("a", &Selector::parse("app=web").unwrap());
        let names: Vec<&str> = web.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["web-1-0", "web-1-1", "web-1-2", "web-2-0"]);
        assert_eq!(web[3].phase, PodPhase::Pending);
        assert_eq!(web[3].ready.unwrap().status, ConditionStatus::False);
        assert_eq!(web[0].containers[0].requests.cpu, Some(500));
        // A pod resized in place: same labels, other requests, a shape of its own, and
        // still selected by its labels.
        cache.apply(&rs_pod("a", "web-1-1", "web", "1", "750m", true));
        assert_eq!(shapes(&cache, "a"), 3);
        let rs1 = cache.select("a", &Selector::parse("pod-template-hash=1").unwrap());
        let cpu: Vec<Option<i64>> = rs1.iter().map(|p| p.containers[0].requests.cpu).collect();
        assert_eq!(cpu, [Some(500), Some(750), Some(500)]);
    }

    #[test]
    fn a_shape_goes_with_its_last_pod() {
        let cache = PodCache::new();
        cache.apply(&rs_pod("a", "web-1-0", "web", "1", "500m", true));
        cache.apply(&rs_pod("a", "web-1-1", "web", "1", "500m", true));
        cache.apply(&rs_pod("a", "db-1-0", "db", "1", "500m", true));
        let shape = Arc::downgrade(&cache.pods.read()["a"].pods["web-1-0"].shape);
        cache.delete(&rs_pod("a", "web-1-0", "web", "1", "500m", true));
        assert!(shape.upgrade().is_some(), "web-1-1 still has it");
        // Relabelled away: the last pod with that shape.
        cache.apply(&rs_pod("a", "web-1-1", "web", "2", "500m", true));
        assert!(shape.upgrade().is_none(), "freed");
        {
            let map = cache.pods.read();
            let ns = &map["a"];
            assert_eq!(ns.shapes.len(), 2);
            // app=web, app=db, pod-template-hash=1 (db's) and =2 (web's): one shape each.
            assert_eq!((ns.by_label.pairs(), ns.by_label.filed()), (4, 4));
        }
        assert!(cache
            .select(
                "a",
                &Selector::parse("app=web,pod-template-hash=1").unwrap()
            )
            .is_empty());
        cache.delete(&rs_pod("a", "web-1-1", "web", "2", "500m", true));
        cache.delete(&rs_pod("a", "db-1-0", "db", "1", "500m", true));
        assert!(
            cache.pods.read().is_empty(),
            "the namespace goes with its last pod"
        );
    }

    #[test]
    fn a_status_change_keeps_the_pod_in_its_shape() {
        let cache = PodCache::new();
        cache.apply(&rs_pod("a", "web-1-0", "web", "1", "500m", false));
        let before = cache.pods.read()["a"].pods["web-1-0"].shape.clone();
        cache.apply(&rs_pod("a", "web-1-0", "web", "1", "500m", true));
        let map = cache.pods.read();
        let entry = &map["a"].pods["web-1-0"];
        assert!(Arc::ptr_eq(&before, &entry.shape));
        assert_eq!(entry.state.phase, PodPhase::Running);
    }

    /// A small deterministic generator (xorshift), for the sequence below.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// A pod with labels, requests and status drawn from small sets, so that shapes are
    /// shared, split and dropped often.
    fn drawn(rng: &mut Rng) -> KubePod {
        let ns = ["a", "b"][rng.below(2) as usize];
        let name = format!("p{}", rng.below(40));
        let mut labels = serde_json::Map::new();
        labels.insert("app".into(), format!("app{}", rng.below(3)).into());
        if rng.below(2) == 0 {
            labels.insert("tier".into(), ["x", "y"][rng.below(2) as usize].into());
        }
        if rng.below(4) == 0 {
            labels.insert("n".into(), rng.below(5).to_string().into());
        }
        let cpu = ["100m", "250m"][rng.below(2) as usize];
        let mut spec = serde_json::json!({
            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]
        });
        if rng.below(4) == 0 {
            spec["initContainers"] = serde_json::json!([{"name": "proxy",
                "restartPolicy": "Always", "resources": {"requests": {"cpu": "10m"}}}]);
        }
        if rng.below(4) == 0 {
            spec["resources"] = serde_json::json!({"requests": {"memory": "1Gi"}});
        }
        let phase = ["Pending", "Running", "Failed"][rng.below(3) as usize];
        let ready = ["True", "False"][rng.below(2) as usize];
        let start = format!("2026-01-01T00:00:{:02}Z", rng.below(60));
        let mut metadata = serde_json::json!({"namespace": ns, "name": name, "labels": labels});
        if rng.below(8) == 0 {
            metadata["deletionTimestamp"] = "2026-01-01T00:01:00Z".into();
        }
        serde_json::from_value(serde_json::json!({
            "metadata": metadata,
            "spec": spec,
            "status": {"phase": phase, "startTime": start,
                       "conditions": [{"type": "Ready", "status": ready,
                                       "lastTransitionTime": "2026-01-01T00:00:10Z"}]}
        }))
        .unwrap()
    }

    /// The cache as it was before shapes: every pod whole, by name, filtered one by one
    /// (with the pod it was made from, to list it again).
    #[derive(Default)]
    struct Plain(BTreeMap<(String, String), (KubePod, CachedPod)>);

    impl Plain {
        fn apply(&mut self, pod: &KubePod) {
            let (ns, name, cached) = convert(pod).unwrap();
            self.0.insert((ns, name), (pod.clone(), cached));
        }

        fn select(&self, ns: &str, selector: &Selector) -> Vec<Pod> {
            self.0
                .iter()
                .filter(|((n, _), (_, p))| n == ns && selector.matches(&p.labels))
                .map(|(_, (_, p))| p.pod.clone())
                .collect()
        }
    }

    #[test]
    fn selects_exactly_what_whole_pods_filtered_one_by_one_would() {
        let selectors = [
            "",
            "app=app0",
            "app=app1",
            "app in (app2)",
            "app in (app0,app1)",
            "app=app0,tier=x",
            "tier=y",
            "tier!=x",
            "!tier",
            "tier",
            "app=app1,n>2",
            "n in (1,3)",
            "app notin (app0)",
        ]
        .map(|s| Selector::parse(s).unwrap());
        let mut rng = Rng(0x5eed_f00d);
        let cache = PodCache::new();
        let mut plain = Plain::default();
        for step in 0..3000 {
            match rng.below(10) {
                0..=5 => {
                    let pod = drawn(&mut rng);
                    cache.apply(&pod);
                    plain.apply(&pod);
                }
                6..=8 => {
                    let pod = drawn(&mut rng);
                    let (ns, name, _) = convert(&pod).unwrap();
                    cache.delete(&pod);
                    plain.0.remove(&(ns, name));
                }
                _ => {
                    // A relist that lists a third of the pods as they were and some drawn
                    // anew (new pods, or changed ones): the rest are gone when it completes.
                    let mut listed = Plain::default();
                    for (key, p) in &plain.0 {
                        if rng.below(3) == 0 {
                            listed.0.insert(key.clone(), p.clone());
                        }
                    }
                    for _ in 0..8 {
                        listed.apply(&drawn(&mut rng));
                    }
                    cache.start_relist();
                    for (pod, _) in listed.0.values() {
                        cache.relist_apply(pod);
                    }
                    cache.finish_relist();
                    plain = listed;
                }
            }
            assert_eq!(cache.len(), plain.0.len(), "step {step}");
            for ns in ["a", "b"] {
                for s in &selectors {
                    assert_eq!(
                        cache.select(ns, s),
                        plain.select(ns, s),
                        "step {step}: {ns} {s:?}"
                    );
                }
            }
            // Nothing held for pods that are gone: every shape has pods, and the index
            // lists every shape under each of its labels and nothing else.
            for ns in cache.pods.read().values() {
                assert!(!ns.pods.is_empty());
                let members: usize = ns.shapes.values().map(Vec::len).sum();
                assert_eq!(members, ns.pods.len(), "step {step}");
                for (shape, names) in &ns.shapes {
                    assert!(!names.is_empty());
                    assert!(names.windows(2).all(|w| w[0] < w[1]), "sorted");
                    for name in names {
                        assert!(Arc::ptr_eq(&ns.pods[name].shape, shape));
                    }
                    for (k, v) in shape.labels.iter() {
                        let listed = ns.by_label.candidates(k, v);
                        assert!(listed.iter().any(|s| Arc::ptr_eq(s, shape)));
                    }
                }
                let indexed = ns.by_label.filed();
                let labels: usize = ns.shapes.keys().map(|s| s.labels.len()).sum();
                assert_eq!(indexed, labels, "step {step}");
            }
        }
    }
}

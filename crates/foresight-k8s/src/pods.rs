//! The pod cache: every pod of the cluster, kept current by one watch and indexed by
//! namespace, reduced to what the decision reads (phase, readiness, start time, requests).
//!
//! Listing pods per autoscaler per sync is what the HPA controller's informer saves it from;
//! this is the same idea, with an index so that selecting one workload's pods costs the size
//! of its namespace, not of the cluster.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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

/// One namespace's pods, with an index from each `label=value` to the pods carrying it.
#[derive(Debug, Default)]
struct Namespace {
    pods: BTreeMap<String, CachedPod>,
    by_label: HashMap<(String, String), BTreeSet<String>>,
}

impl Namespace {
    fn insert(&mut self, name: String, pod: CachedPod) {
        self.remove(&name);
        for (k, v) in &pod.labels {
            self.by_label
                .entry((k.clone(), v.clone()))
                .or_default()
                .insert(name.clone());
        }
        self.pods.insert(name, pod);
    }

    /// Inserts a pod unless the same pod is already there: a relist lists every pod, most
    /// of them unchanged, and re-indexing those would be work for nothing.
    fn insert_if_changed(&mut self, name: String, pod: CachedPod) {
        if self.pods.get(&name) != Some(&pod) {
            self.insert(name, pod);
        }
    }

    fn remove(&mut self, name: &str) {
        if let Some(old) = self.pods.remove(name) {
            for (k, v) in old.labels {
                let key = (k, v);
                if let Some(set) = self.by_label.get_mut(&key) {
                    set.remove(name);
                    if set.is_empty() {
                        self.by_label.remove(&key);
                    }
                }
            }
        }
    }

    fn select(&self, selector: &Selector) -> Vec<Pod> {
        let pick = |p: &CachedPod| selector.matches(&p.labels).then(|| p.pod.clone());
        match selector.required_label() {
            Some((k, v)) => self
                .by_label
                .get(&(k.to_owned(), v.to_owned()))
                .into_iter()
                .flatten()
                .filter_map(|name| self.pods.get(name).and_then(pick))
                .collect(),
            None => self.pods.values().filter_map(pick).collect(),
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
        self.pods
            .write()
            .entry(ns)
            .or_default()
            .insert(name, cached);
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
        self.pods
            .write()
            .entry(ns)
            .or_default()
            .insert_if_changed(name, cached);
    }

    /// Removes the pods the completed list did not list (deleted while no watch ran), under
    /// one write lock, and marks the cache ready.
    fn finish_relist(&self) {
        let listed = self.relist.lock().finish();
        if let Some(listed) = listed {
            let mut map = self.pods.write();
            for (ns, pods) in map.iter_mut() {
                let unlisted: Vec<String> = pods
                    .pods
                    .keys()
                    .filter(|name| !listed.contains(&(ns.clone(), (*name).clone())))
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
        let index: usize = cache.pods.read().values().map(|ns| ns.by_label.len()).sum();
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
}

//! Resource metrics (metrics.k8s.io PodMetrics), read in batches: one list per namespace
//! serves every autoscaler in it during a sync, instead of one list per autoscaler.
//!
//! Autoscalers of a namespace start together (the first list of autoscalers reconciles them
//! all at once) and each syncs a period after its previous sync, so they keep asking within
//! moments of each other; the first asks the API, the others wait for its answer and share
//! it. An answer (or failure) is reused for `max_age`, which is shorter than a sync period, so
//! each sync sees a new list.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use foresight_core::metrics::{ContainerUsage, PodResourceSample};
use foresight_core::resources::ResourceList;
use jiff::SignedDuration;
use k8s_metrics::v1beta1::PodMetrics;
use kube::api::ListParams;
use kube::{Api, Client};
use tokio::time::Instant;

use crate::telemetry::{ApiCall, Call};
use foresight_api::selector::Selector;

/// A PodMetrics item with the pod's labels (metrics-server copies them), so that one
/// namespace-wide list can be narrowed to each workload's selector.
#[derive(Clone, Debug, PartialEq)]
pub struct LabeledSample {
    /// The pod's labels.
    pub labels: BTreeMap<String, String>,
    /// The usage.
    pub sample: PodResourceSample,
}

/// One namespace's PodMetrics, indexed by `label=value`.
#[derive(Clone, Debug, Default)]
pub struct Samples {
    /// The items.
    pub items: Vec<LabeledSample>,
    by_label: HashMap<(String, String), Vec<usize>>,
}

impl Samples {
    /// Indexes `items`.
    pub fn new(items: Vec<LabeledSample>) -> Self {
        let mut by_label: HashMap<(String, String), Vec<usize>> = HashMap::new();
        for (i, s) in items.iter().enumerate() {
            for (k, v) in &s.labels {
                by_label.entry((k.clone(), v.clone())).or_default().push(i);
            }
        }
        Samples { items, by_label }
    }

    /// The samples `selector` selects, in pod-name order.
    pub fn select(&self, selector: &Selector) -> Vec<PodResourceSample> {
        let pick = |s: &LabeledSample| selector.matches(&s.labels).then(|| s.sample.clone());
        let mut out: Vec<PodResourceSample> = match selector.required_label() {
            Some((k, v)) => self
                .by_label
                .get(&(k.to_owned(), v.to_owned()))
                .into_iter()
                .flatten()
                .filter_map(|i| self.items.get(*i).and_then(pick))
                .collect(),
            None => self.items.iter().filter_map(pick).collect(),
        };
        out.sort_by(|a, b| a.pod.cmp(&b.pod));
        out
    }
}

/// The namespace's PodMetrics, or the API error text.
pub type NamespaceSamples = Arc<Result<Samples, String>>;

struct Fetched {
    at: Instant,
    samples: NamespaceSamples,
}

type Slot = Arc<tokio::sync::Mutex<Option<Fetched>>>;

/// Per-namespace PodMetrics lists, fetched once per sync.
pub struct PodMetricsBatch {
    client: Client,
    max_age: Duration,
    slots: parking_lot::Mutex<HashMap<String, Slot>>,
}

impl PodMetricsBatch {
    /// Lists are reused for `max_age`.
    pub fn new(client: Client, max_age: Duration) -> Self {
        PodMetricsBatch {
            client,
            max_age,
            slots: parking_lot::Mutex::new(HashMap::new()),
        }
    }

    /// The PodMetrics of `namespace`, from this sync's list.
    pub async fn namespace(&self, namespace: &str, calls: &ApiCall) -> NamespaceSamples {
        let slot = self
            .slots
            .lock()
            .entry(namespace.to_owned())
            .or_default()
            .clone();
        // Held across the fetch on purpose: the others in the namespace wait for this answer
        // instead of sending the same request.
        let mut guard = slot.lock().await;
        if let Some(f) = guard.as_ref() {
            if f.at.elapsed() < self.max_age {
                return f.samples.clone();
            }
        }
        calls.record(Call::ListPodMetrics);
        let api: Api<PodMetrics> = Api::namespaced(self.client.clone(), namespace);
        let samples = Arc::new(
            api.list(&ListParams::default())
                .await
                .map(|list| Samples::new(list.items.iter().map(convert).collect()))
                .map_err(|e| super::api_error(&e)),
        );
        *guard = Some(Fetched {
            at: Instant::now(),
            samples: samples.clone(),
        });
        samples
    }

    /// The samples of the pods `selector` selects, in pod-name order.
    pub async fn select(
        &self,
        namespace: &str,
        selector: &Selector,
        calls: &ApiCall,
    ) -> Result<Vec<PodResourceSample>, String> {
        let all = self.namespace(namespace, calls).await;
        match all.as_ref() {
            Err(e) => Err(e.clone()),
            Ok(samples) => Ok(samples.select(selector)),
        }
    }
}

/// A PodMetrics item as the decision reads it. Usage that does not parse is left out, which
/// the decision treats as the container lacking that resource (the pod's metric is missing).
pub fn convert(m: &PodMetrics) -> LabeledSample {
    LabeledSample {
        labels: m.metadata.labels.clone().unwrap_or_default(),
        sample: PodResourceSample {
            pod: m.metadata.name.clone().unwrap_or_default(),
            timestamp: m.timestamp.0,
            window: SignedDuration::try_from(m.window).unwrap_or(SignedDuration::ZERO),
            containers: m
                .containers
                .iter()
                .map(|c| ContainerUsage {
                    name: c.name.clone(),
                    // metrics.k8s.io reports CPU and memory only. Usage that does not
                    // parse is left out.
                    usage: {
                        let mut list = ResourceList::default();
                        for (k, q) in [("cpu", &c.usage.cpu), ("memory", &c.usage.memory)] {
                            if let Ok(v) = foresight_api::Quantity(q.0.clone()).milli_value() {
                                list.set(k, v);
                            }
                        }
                        list
                    },
                })
                .collect(),
        },
    }
}

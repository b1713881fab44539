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

use crate::labels::{LabelIndex, Labels};
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

/// One namespace's PodMetrics: each distinct label set once, with the samples of the pods
/// that carry it (the pods of one ReplicaSet share theirs), and an index from `label=value`
/// to the sets. A namespace's last list is kept until the next, so this is held for every
/// namespace with autoscalers, about one sample per pod of the cluster.
#[derive(Clone, Debug, Default)]
pub struct Samples {
    sets: Vec<(Labels, Vec<PodResourceSample>)>,
    by_label: LabelIndex<usize>,
}

impl Samples {
    /// Groups `items` by label set and indexes the sets.
    pub fn new(items: Vec<LabeledSample>) -> Self {
        let mut sets: Vec<(Labels, Vec<PodResourceSample>)> = Vec::new();
        let mut seen: HashMap<Labels, usize> = HashMap::new();
        for item in items {
            let labels = Labels::from(item.labels);
            match seen.get(&labels) {
                Some(&i) => sets[i].1.push(item.sample),
                None => {
                    seen.insert(labels.clone(), sets.len());
                    sets.push((labels, vec![item.sample]));
                }
            }
        }
        let mut by_label = LabelIndex::default();
        for (i, (labels, samples)) in sets.iter_mut().enumerate() {
            samples.shrink_to_fit();
            by_label.insert(labels, i);
        }
        sets.shrink_to_fit();
        Samples { sets, by_label }
    }

    /// The samples `selector` selects, in pod-name order.
    pub fn select(&self, selector: &Selector) -> Vec<PodResourceSample> {
        let sets: Vec<&(Labels, Vec<PodResourceSample>)> = match selector.required_label() {
            Some((k, v)) => self
                .by_label
                .candidates(k, v)
                .iter()
                .filter_map(|i| self.sets.get(*i))
                .collect(),
            None => self.sets.iter().collect(),
        };
        let mut out: Vec<PodResourceSample> = sets
            .into_iter()
            .filter(|(labels, _)| labels.matches(selector))
            .flat_map(|(_, samples)| samples.iter().cloned())
            .collect();
        out.sort_by(|a, b| a.pod.cmp(&b.pod));
        out
    }

    /// How many samples.
    pub fn len(&self) -> usize {
        self.sets.iter().map(|(_, samples)| samples.len()).sum()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(pod: &str, labels: &[(&str, &str)], cpu: i64) -> LabeledSample {
        let mut usage = ResourceList::default();
        usage.set("cpu", cpu);
        LabeledSample {
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            sample: PodResourceSample {
                pod: pod.into(),
                timestamp: "2026-01-01T00:00:00Z".parse().unwrap(),
                window: SignedDuration::from_secs(30),
                containers: vec![ContainerUsage {
                    name: "c".into(),
                    usage,
                }],
            },
        }
    }

    /// Every sample whose labels the selector matches, one by one, in pod-name order: what
    /// selecting answered before label sets were shared.
    fn one_by_one(items: &[LabeledSample], selector: &Selector) -> Vec<PodResourceSample> {
        let mut out: Vec<PodResourceSample> = items
            .iter()
            .filter(|s| selector.matches(&s.labels))
            .map(|s| s.sample.clone())
            .collect();
        out.sort_by(|a, b| a.pod.cmp(&b.pod));
        out
    }

    #[test]
    fn selects_what_matching_each_sample_would() {
        // Pods of two ReplicaSets of web, one of db, one unlabelled, listed out of order.
        let items = vec![
            sample("web-2-a", &[("app", "web"), ("hash", "2")], 200),
            sample("web-1-b", &[("app", "web"), ("hash", "1")], 110),
            sample("db-1-a", &[("app", "db"), ("hash", "1")], 300),
            sample("web-1-a", &[("app", "web"), ("hash", "1")], 100),
            sample("lone", &[], 5),
            sample(
                "web-2-b",
                &[("app", "web"), ("hash", "2"), ("canary", "")],
                210,
            ),
        ];
        let samples = Samples::new(items.clone());
        assert_eq!(samples.len(), 6);
        assert_eq!(samples.sets.len(), 5, "web-1's two pods share one set");
        for text in [
            "app=web",
            "app=web,hash=1",
            "hash=1",
            "app in (db)",
            "app in (web,db)",
            "app=web,!canary",
            "canary",
            "app!=web",
            "",
            "app=none",
        ] {
            let selector = Selector::parse(text).unwrap();
            assert_eq!(
                samples.select(&selector),
                one_by_one(&items, &selector),
                "{text}"
            );
        }
        let web: Vec<String> = samples
            .select(&Selector::parse("app=web").unwrap())
            .into_iter()
            .map(|s| s.pod)
            .collect();
        assert_eq!(web, ["web-1-a", "web-1-b", "web-2-a", "web-2-b"]);
    }
}

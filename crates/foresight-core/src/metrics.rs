//! Metric samples as the metrics APIs return them, and how Kubernetes' metrics client turns
//! them into one value per pod (`PodMetricsInfo`).

use std::collections::{HashMap, HashSet};

use jiff::{SignedDuration, Timestamp};

use crate::pods::{Pod, SampleTiming};

/// Resource usage of one container (metrics.k8s.io).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContainerUsage {
    /// The container's name.
    pub name: String,
    /// `(resource, milli-value)` pairs.
    pub usage: Vec<(String, i64)>,
}

/// One PodMetrics item (metrics.k8s.io).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodResourceSample {
    /// The pod's name.
    pub pod: String,
    /// When the usage was measured.
    pub timestamp: Timestamp,
    /// Over how long it was averaged.
    pub window: SignedDuration,
    /// Per-container usage.
    pub containers: Vec<ContainerUsage>,
}

/// One per-pod custom metric value (custom.metrics.k8s.io, described object of kind Pod).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodValueSample {
    /// The pod's name.
    pub pod: String,
    /// When the value was measured.
    pub timestamp: Timestamp,
    /// Over how long it was averaged; Kubernetes assumes 60 s when the API says nothing.
    pub window: Option<SignedDuration>,
    /// The value, in thousandths.
    pub value: i64,
}

/// A single metric value (custom.metrics.k8s.io object metric, an external metric item, or a
/// Prometheus sample).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValueSample {
    /// The value, in thousandths.
    pub value: i64,
    /// When it was measured.
    pub timestamp: Timestamp,
}

/// What was read for one metric of the spec (other than Resource and ContainerResource, which
/// share the pod resource metrics of the whole observation).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum MetricData {
    /// Nothing was read for this metric (e.g. a Resource metric, served by the shared list).
    #[default]
    None,
    /// Per-pod values, for `Pods` metrics.
    PodValues(Vec<PodValueSample>),
    /// One object's value, for `Object` metrics.
    Object(ValueSample),
    /// Values to sum, for `External` and `Prometheus` metrics.
    Values(Vec<ValueSample>),
    /// The API call failed with this error text.
    Failed(String),
}

/// The metrics-server window Kubernetes assumes for custom metrics without one.
pub const DEFAULT_CUSTOM_METRIC_WINDOW: SignedDuration = SignedDuration::from_secs(60);

/// One pod's value for one metric (an entry of Kubernetes' `PodMetricsInfo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PodMetric<'a> {
    /// The pod's name.
    pub pod: &'a str,
    /// The value, in thousandths.
    pub value: i64,
    /// When and over how long it was measured.
    pub timing: SampleTiming,
}

/// Per-pod values of one metric, joined with the pod list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodMetricSet<'a> {
    /// Distinct entries (a later entry for the same pod replaces an earlier one).
    pub entries: Vec<PodMetric<'a>>,
    /// For each pod in list order, the index of its entry.
    pub by_pod: Vec<Option<usize>>,
    /// Entries for pods that are not in the pod list. Kubernetes keeps them: they count in
    /// the number of replicas a rebalanced ratio is multiplied by.
    pub unmatched: usize,
}

impl<'a> PodMetricSet<'a> {
    /// Joins `entries` with `pods` by name. Metrics listed in pod order (what the controller
    /// and simulator produce) take a fast path without hashing.
    pub fn join(mut entries: Vec<PodMetric<'a>>, pods: &[Pod]) -> Self {
        let aligned =
            entries.len() == pods.len() && entries.iter().zip(pods).all(|(e, p)| e.pod == p.name);
        if aligned {
            return PodMetricSet {
                by_pod: (0..entries.len()).map(Some).collect(),
                entries,
                unmatched: 0,
            };
        }
        // General path: last entry per pod name wins, as in a Go map.
        let mut last: HashMap<&str, usize> = HashMap::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            last.insert(e.pod, i);
        }
        if last.len() != entries.len() {
            let mut keep: Vec<bool> = vec![false; entries.len()];
            for &i in last.values() {
                keep[i] = true;
            }
            let mut i = 0;
            entries.retain(|_| {
                let k = keep[i];
                i += 1;
                k
            });
            last = entries
                .iter()
                .enumerate()
                .map(|(i, e)| (e.pod, i))
                .collect();
        }
        let by_pod: Vec<Option<usize>> = pods
            .iter()
            .map(|p| last.get(p.name.as_str()).copied())
            .collect();
        let pod_names: HashSet<&str> = pods.iter().map(|p| p.name.as_str()).collect();
        let unmatched = entries
            .iter()
            .filter(|e| !pod_names.contains(e.pod))
            .count();
        PodMetricSet {
            entries,
            by_pod,
            unmatched,
        }
    }

    /// The sample timing of each pod's entry, in pod order (for grouping).
    pub fn timings(&self) -> Vec<Option<SampleTiming>> {
        self.by_pod
            .iter()
            .map(|i| i.map(|i| self.entries[i].timing))
            .collect()
    }

    /// The value of pod `i`'s entry.
    pub fn value_of_pod(&self, i: usize) -> Option<i64> {
        self.by_pod
            .get(i)
            .copied()
            .flatten()
            .map(|e| self.entries[e].value)
    }

    /// The sum of the entries for pods not in the list.
    pub fn unmatched_total(&self, pods: &[Pod]) -> i128 {
        if self.unmatched == 0 {
            return 0;
        }
        let names: HashSet<&str> = pods.iter().map(|p| p.name.as_str()).collect();
        self.entries
            .iter()
            .filter(|e| !names.contains(e.pod))
            .map(|e| e.value as i128)
            .sum()
    }
}

/// `GetResourceMetric` for a Resource metric: each pod's usage summed over its containers.
/// A pod with no containers, or a container without the resource, is left out (missing).
pub fn pod_resource_values<'a>(
    samples: &'a [PodResourceSample],
    resource: &str,
) -> Vec<PodMetric<'a>> {
    let mut out = Vec::with_capacity(samples.len());
    'pods: for s in samples {
        if s.containers.is_empty() {
            continue;
        }
        let mut sum: i64 = 0;
        for c in &s.containers {
            match c.usage.iter().find(|(r, _)| r == resource) {
                Some((_, v)) => sum = sum.saturating_add(*v),
                None => continue 'pods,
            }
        }
        out.push(PodMetric {
            pod: &s.pod,
            value: sum,
            timing: SampleTiming {
                timestamp: s.timestamp,
                window: s.window,
            },
        });
    }
    out
}

/// `GetResourceMetric` for a ContainerResource metric: the named container's usage. A pod
/// whose metrics lack the container fails the whole call, as in Kubernetes.
pub fn container_resource_values<'a>(
    samples: &'a [PodResourceSample],
    resource: &str,
    container: &str,
    namespace: &str,
) -> Result<Vec<PodMetric<'a>>, String> {
    let mut out = Vec::with_capacity(samples.len());
    for s in samples {
        let Some(c) = s.containers.iter().find(|c| c.name == container) else {
            return Err(format!(
                "container {container} not present in metrics for pod {namespace}/{}",
                s.pod
            ));
        };
        if let Some((_, v)) = c.usage.iter().find(|(r, _)| r == resource) {
            out.push(PodMetric {
                pod: &s.pod,
                value: *v,
                timing: SampleTiming {
                    timestamp: s.timestamp,
                    window: s.window,
                },
            });
        }
    }
    Ok(out)
}

/// `GetRawMetric`: per-pod custom metric values.
pub fn pod_custom_values(samples: &[PodValueSample]) -> Vec<PodMetric<'_>> {
    samples
        .iter()
        .map(|s| PodMetric {
            pod: &s.pod,
            value: s.value,
            timing: SampleTiming {
                timestamp: s.timestamp,
                window: s.window.unwrap_or(DEFAULT_CUSTOM_METRIC_WINDOW),
            },
        })
        .collect()
}

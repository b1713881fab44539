//! Metric samples as the metrics APIs return them, and how Kubernetes' metrics client turns
//! them into one value per pod (`PodMetricsInfo`).

use std::collections::{HashMap, HashSet};

use jiff::{SignedDuration, Timestamp};

use crate::pods::{Pod, SampleTiming};
use crate::resources::{ResourceList, ResourceName};

/// Resource usage of one container (metrics.k8s.io).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContainerUsage {
    /// The container's name.
    pub name: String,
    /// Usage per resource, in thousandths.
    pub usage: ResourceList,
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
    /// For a `Formula` metric: each input's reading, in the order of its inputs.
    Inputs(Vec<MetricData>),
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

/// Which entry belongs to which pod.
#[derive(Clone, Debug, PartialEq, Eq)]
enum PodIndex {
    /// Entry `i` is pod `i`'s (the list came in pod order).
    Aligned,
    /// For each pod, the index of its entry.
    Mapped(Vec<Option<usize>>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Repr<'a> {
    /// Distinct entries (a later entry for the same pod replaces an earlier one), and which
    /// pod each belongs to.
    Joined {
        entries: Vec<PodMetric<'a>>,
        index: PodIndex,
    },
    /// One PodMetrics item per pod, in pod order (what the controller and simulator
    /// produce): each pod's value is read straight from its item, without building a list.
    PodResources {
        samples: &'a [PodResourceSample],
        resource: &'a ResourceName,
    },
}

/// Per-pod values of one metric, joined with the pod list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodMetricSet<'a> {
    repr: Repr<'a>,
    /// Entries for pods that are not in the pod list. Kubernetes keeps them: they count in
    /// the number of replicas a rebalanced ratio is multiplied by.
    pub unmatched: usize,
    /// The sum of those entries' values.
    pub unmatched_total: i128,
}

impl<'a> PodMetricSet<'a> {
    /// Joins `entries` with `pods` by name. Metrics listed in pod order take a fast path
    /// without hashing.
    pub fn join(mut entries: Vec<PodMetric<'a>>, pods: &[Pod]) -> Self {
        let aligned =
            entries.len() == pods.len() && entries.iter().zip(pods).all(|(e, p)| e.pod == p.name);
        if aligned {
            return PodMetricSet {
                repr: Repr::Joined {
                    entries,
                    index: PodIndex::Aligned,
                },
                unmatched: 0,
                unmatched_total: 0,
            };
        }
        // General path: the last entry per pod name wins, as in a Go map.
        let mut last: HashMap<&str, usize> = HashMap::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            last.insert(e.pod, i);
        }
        if last.len() != entries.len() {
            let mut i = 0;
            entries.retain(|e| {
                let keep = last.get(e.pod) == Some(&i);
                i += 1;
                keep
            });
            last = entries
                .iter()
                .enumerate()
                .map(|(i, e)| (e.pod, i))
                .collect();
        }
        let by_pod = pods
            .iter()
            .map(|p| last.get(p.name.as_str()).copied())
            .collect();
        let pod_names: HashSet<&str> = pods.iter().map(|p| p.name.as_str()).collect();
        let (unmatched, unmatched_total) = entries
            .iter()
            .filter(|e| !pod_names.contains(e.pod))
            .fold((0, 0i128), |(n, t), e| (n + 1, t + i128::from(e.value)));
        PodMetricSet {
            repr: Repr::Joined {
                entries,
                index: PodIndex::Mapped(by_pod),
            },
            unmatched,
            unmatched_total,
        }
    }

    /// The Resource metric of each pod (see [`pod_resource_values`]), joined with `pods`.
    pub fn pod_resources(
        samples: &'a [PodResourceSample],
        resource: &'a ResourceName,
        pods: &[Pod],
    ) -> Self {
        let aligned =
            samples.len() == pods.len() && samples.iter().zip(pods).all(|(s, p)| s.pod == p.name);
        if aligned {
            PodMetricSet {
                repr: Repr::PodResources { samples, resource },
                unmatched: 0,
                unmatched_total: 0,
            }
        } else {
            Self::join(pod_resource_values(samples, resource), pods)
        }
    }

    /// Pod `i`'s entry.
    #[inline(always)]
    pub fn entry_of_pod(&self, i: usize) -> Option<PodMetric<'a>> {
        match &self.repr {
            Repr::Joined {
                entries,
                index: PodIndex::Aligned,
            } => entries.get(i).copied(),
            Repr::Joined {
                entries,
                index: PodIndex::Mapped(by_pod),
            } => by_pod
                .get(i)
                .copied()
                .flatten()
                .and_then(|e| entries.get(e))
                .copied(),
            Repr::PodResources { samples, resource } => {
                samples.get(i).and_then(|s| pod_resource_value(s, resource))
            }
        }
    }

    /// The sample timing of pod `i`'s entry (for grouping).
    pub fn timing_of_pod(&self, i: usize) -> Option<SampleTiming> {
        self.entry_of_pod(i).map(|e| e.timing)
    }
}

/// One PodMetrics item's value for `resource`: the sum over its containers, or `None` (the
/// pod counts as missing) when it has no containers or a container lacks the resource.
#[inline(always)]
fn pod_resource_value<'a>(
    s: &'a PodResourceSample,
    resource: &ResourceName,
) -> Option<PodMetric<'a>> {
    if s.containers.is_empty() {
        return None;
    }
    let mut sum: i64 = 0;
    for c in &s.containers {
        sum = sum.saturating_add(c.usage.get(resource)?);
    }
    Some(PodMetric {
        pod: &s.pod,
        value: sum,
        timing: SampleTiming {
            timestamp: s.timestamp,
            window: s.window,
        },
    })
}

/// `GetResourceMetric` for a Resource metric: each pod's usage summed over its containers.
/// A pod with no containers, or a container without the resource, is left out (missing).
pub fn pod_resource_values<'a>(
    samples: &'a [PodResourceSample],
    resource: &ResourceName,
) -> Vec<PodMetric<'a>> {
    samples
        .iter()
        .filter_map(|s| pod_resource_value(s, resource))
        .collect()
}

/// `GetResourceMetric` for a ContainerResource metric: the named container's usage. A pod
/// whose metrics lack the container fails the whole call up to Kubernetes 1.32; from 1.33 that
/// pod is left out (it counts as missing), as `missing_container_fails` says.
pub fn container_resource_values<'a>(
    samples: &'a [PodResourceSample],
    resource: &ResourceName,
    container: &str,
    namespace: &str,
    missing_container_fails: bool,
) -> Result<Vec<PodMetric<'a>>, String> {
    let mut out = Vec::with_capacity(samples.len());
    for s in samples {
        let Some(c) = s.containers.iter().find(|c| c.name == container) else {
            if missing_container_fails {
                return Err(format!(
                    "container {container} not present in metrics for pod {namespace}/{}",
                    s.pod
                ));
            }
            continue;
        };
        if let Some(v) = c.usage.get(resource) {
            out.push(PodMetric {
                pod: &s.pod,
                value: v,
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

//! Pods as the decision sees them, and how Kubernetes sorts them into ready, unready,
//! missing and ignored before it trusts their metrics (`groupPods`).

use foresight_api::status::ConditionStatus;
use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::resources::{ResourceList, ResourceName};
use crate::time::{add, sub};

/// A pod's lifecycle phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum PodPhase {
    /// Not yet running (scheduling, pulling images, init containers).
    Pending,
    /// Running.
    #[default]
    Running,
    /// All containers exited successfully.
    Succeeded,
    /// All containers exited, at least one failed.
    Failed,
    /// The phase could not be determined.
    Unknown,
}

/// The pod's `Ready` condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadyCondition {
    /// `True`, `False` or `Unknown`.
    pub status: ConditionStatus,
    /// When it last changed; Go's zero time when unset.
    pub last_transition_time: Timestamp,
}

/// A container's resource requests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Container {
    /// The container's name.
    pub name: String,
    /// `resources.requests`, in thousandths.
    pub requests: ResourceList,
}

/// One pod matched by the target's selector.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pod {
    /// The pod's name.
    pub name: String,
    /// Its phase.
    pub phase: PodPhase,
    /// Its `Ready` condition, if it has one.
    pub ready: Option<ReadyCondition>,
    /// `status.startTime`, if set.
    pub start_time: Option<Timestamp>,
    /// Set when the pod is being deleted.
    pub deletion_timestamp: Option<Timestamp>,
    /// The pod's (non-init) containers.
    pub containers: Vec<Container>,
}

impl Pod {
    /// Running with `Ready=True`: the pods Object and External `Value` targets count.
    pub fn is_running_and_ready(&self) -> bool {
        self.phase == PodPhase::Running
            && self
                .ready
                .is_some_and(|c| c.status == ConditionStatus::True)
    }
}

/// The readiness rules' knobs (Kubernetes controller flags, per object in Foresight).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Readiness {
    /// `--horizontal-pod-autoscaler-cpu-initialization-period` (default 5 min).
    pub cpu_initialization_period: SignedDuration,
    /// `--horizontal-pod-autoscaler-initial-readiness-delay` (default 30 s).
    pub initial_readiness_delay: SignedDuration,
}

impl Default for Readiness {
    fn default() -> Self {
        Readiness {
            cpu_initialization_period: SignedDuration::from_secs(300),
            initial_readiness_delay: SignedDuration::from_secs(30),
        }
    }
}

/// Where a pod falls before its metric is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PodClass {
    /// Counted, with its metric.
    Ready,
    /// Pending, or (CPU only) not ready yet: its sample is not trusted.
    Unready,
    /// Running but no metric was returned for it.
    Missing,
    /// Being deleted, or failed.
    Ignored,
}

/// What the metric layer knows about a pod's sample, for the CPU readiness rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleTiming {
    /// When the sample was taken.
    pub timestamp: Timestamp,
    /// Over how long it was averaged.
    pub window: SignedDuration,
}

/// The CPU readiness rules with the clock applied once per decision.
#[derive(Clone, Copy, Debug)]
struct CpuRules {
    /// Pods started after this are still initializing (`start + period > now`).
    initializing_after: Timestamp,
    /// The initial readiness delay.
    delay: SignedDuration,
}

/// Sorts pods as Kubernetes' `groupPods` does, with the clock applied once per decision.
#[derive(Clone, Copy, Debug)]
pub struct Classifier {
    cpu: Option<CpuRules>,
}

impl Classifier {
    /// A classifier; `cpu` selects the CPU readiness rules.
    pub fn new(cpu: bool, rules: &Readiness, now: Timestamp) -> Self {
        Classifier {
            cpu: cpu.then(|| CpuRules {
                initializing_after: sub(now, rules.cpu_initialization_period),
                delay: rules.initial_readiness_delay,
            }),
        }
    }

    /// The class of `pod`, whose metric sample is `sample` (if one was returned).
    #[inline(always)]
    pub fn classify(&self, pod: &Pod, sample: Option<SampleTiming>) -> PodClass {
        if pod.deletion_timestamp.is_some() || pod.phase == PodPhase::Failed {
            return PodClass::Ignored;
        }
        if pod.phase == PodPhase::Pending {
            return PodClass::Unready;
        }
        let Some(sample) = sample else {
            return PodClass::Missing;
        };
        match self.cpu {
            Some(rules) if cpu_sample_is_unready(pod, sample, rules) => PodClass::Unready,
            _ => PodClass::Ready,
        }
    }
}

#[inline(always)]
fn cpu_sample_is_unready(pod: &Pod, sample: SampleTiming, rules: CpuRules) -> bool {
    let (Some(ready), Some(start)) = (pod.ready, pod.start_time) else {
        return true;
    };
    if start > rules.initializing_after {
        // Still initializing: distrust the sample if the pod is not ready, or if a whole
        // metric window has not passed since it last changed readiness.
        ready.status == ConditionStatus::False
            || sample.timestamp < add(ready.last_transition_time, sample.window)
    } else {
        // Past initialization: distrust it only if it went unready during its initial
        // readiness delay and has never been ready since.
        ready.status == ConditionStatus::False
            && add(start, rules.delay) > ready.last_transition_time
    }
}

/// The result of grouping a pod list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Grouping {
    /// One class per pod, in list order.
    pub classes: Vec<PodClass>,
    /// How many pods are ready.
    pub ready_count: usize,
    /// How many are unready.
    pub unready_count: usize,
    /// How many are missing a metric.
    pub missing_count: usize,
    /// How many are ignored.
    pub ignored_count: usize,
}

/// Groups `pods` given each pod's sample (`sample(i)` for the pod at index `i`).
pub fn group_pods(
    pods: &[Pod],
    sample: impl Fn(usize) -> Option<SampleTiming>,
    cpu: bool,
    rules: &Readiness,
    now: Timestamp,
) -> Grouping {
    let mut g = Grouping {
        classes: Vec::with_capacity(pods.len()),
        ..Default::default()
    };
    let classifier = Classifier::new(cpu, rules, now);
    for (i, pod) in pods.iter().enumerate() {
        let class = classifier.classify(pod, sample(i));
        match class {
            PodClass::Ready => g.ready_count += 1,
            PodClass::Unready => g.unready_count += 1,
            PodClass::Missing => g.missing_count += 1,
            PodClass::Ignored => g.ignored_count += 1,
        }
        g.classes.push(class);
    }
    g
}

/// A container without the request a Utilization target needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MissingRequest<'a> {
    /// The resource.
    pub resource: &'a ResourceName,
    /// The container.
    pub container: &'a str,
    /// The pod.
    pub pod: &'a str,
}

impl std::fmt::Display for MissingRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "missing request for {} in container {} of Pod {}",
            self.resource, self.container, self.pod
        )
    }
}

/// A pod's request for `resource` (only `container`'s, when named), summed over its
/// containers; a considered container without the request is an error, as in Kubernetes'
/// `calculatePodRequests`.
#[inline(always)]
pub fn pod_request<'a>(
    pod: &'a Pod,
    resource: &'a ResourceName,
    container: Option<&str>,
) -> Result<i64, MissingRequest<'a>> {
    let mut sum: i64 = 0;
    for c in &pod.containers {
        if container.is_some_and(|name| name != c.name) {
            continue;
        }
        match c.requests.get(resource) {
            Some(v) => sum = sum.saturating_add(v),
            None => {
                return Err(MissingRequest {
                    resource,
                    container: &c.name,
                    pod: &pod.name,
                })
            }
        }
    }
    Ok(sum)
}

/// Every pod's request (see [`pod_request`]); the first pod lacking one fails the whole list.
pub fn pod_requests(
    pods: &[Pod],
    resource: &ResourceName,
    container: Option<&str>,
) -> Result<Vec<i64>, String> {
    pods.iter()
        .map(|p| pod_request(p, resource, container).map_err(|m| m.to_string()))
        .collect()
}

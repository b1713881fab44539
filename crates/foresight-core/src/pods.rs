//! Pods as the decision sees them, and how Kubernetes sorts them into ready, unready,
//! missing and ignored before it trusts their metrics (`groupPods`).

use foresight_api::status::ConditionStatus;
use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::time::add;

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

/// A container's resource requests, as milli-values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Container {
    /// The container's name.
    pub name: String,
    /// `(resource, milli-value)` pairs, e.g. `("cpu", 500)`.
    pub requests: Vec<(String, i64)>,
}

impl Container {
    /// The request for `resource`, if the container sets one.
    pub fn request(&self, resource: &str) -> Option<i64> {
        self.requests
            .iter()
            .find(|(name, _)| name == resource)
            .map(|(_, v)| *v)
    }
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

/// Classifies one pod, exactly as Kubernetes' `groupPods` does. `sample` is the pod's metric
/// sample, if one was returned; `cpu` selects the CPU readiness rules.
pub fn classify_pod(
    pod: &Pod,
    sample: Option<SampleTiming>,
    cpu: bool,
    rules: &Readiness,
    now: Timestamp,
) -> PodClass {
    if pod.deletion_timestamp.is_some() || pod.phase == PodPhase::Failed {
        return PodClass::Ignored;
    }
    if pod.phase == PodPhase::Pending {
        return PodClass::Unready;
    }
    let Some(sample) = sample else {
        return PodClass::Missing;
    };
    if cpu && cpu_sample_is_unready(pod, sample, rules, now) {
        return PodClass::Unready;
    }
    PodClass::Ready
}

fn cpu_sample_is_unready(
    pod: &Pod,
    sample: SampleTiming,
    rules: &Readiness,
    now: Timestamp,
) -> bool {
    let (Some(ready), Some(start)) = (pod.ready, pod.start_time) else {
        return true;
    };
    if add(start, rules.cpu_initialization_period) > now {
        // Still initializing: distrust the sample if the pod is not ready, or if a whole
        // metric window has not passed since it last changed readiness.
        ready.status == ConditionStatus::False
            || sample.timestamp < add(ready.last_transition_time, sample.window)
    } else {
        // Past initialization: distrust it only if it went unready during its initial
        // readiness delay and has never been ready since.
        ready.status == ConditionStatus::False
            && add(start, rules.initial_readiness_delay) > ready.last_transition_time
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

/// Groups `pods` given each pod's sample (same order and length as `pods`).
pub fn group_pods(
    pods: &[Pod],
    samples: &[Option<SampleTiming>],
    cpu: bool,
    rules: &Readiness,
    now: Timestamp,
) -> Grouping {
    let mut g = Grouping {
        classes: Vec::with_capacity(pods.len()),
        ..Default::default()
    };
    for (pod, sample) in pods.iter().zip(samples) {
        let class = classify_pod(pod, *sample, cpu, rules, now);
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

/// Sums each pod's requests for `resource` (only `container`'s, when named), as Kubernetes'
/// `calculatePodRequests` does: a considered container without the request fails the whole
/// calculation.
pub fn pod_requests(
    pods: &[Pod],
    resource: &str,
    container: Option<&str>,
) -> Result<Vec<i64>, String> {
    let mut out = Vec::with_capacity(pods.len());
    for pod in pods {
        let mut sum: i64 = 0;
        for c in &pod.containers {
            if container.is_some_and(|name| name != c.name) {
                continue;
            }
            match c.request(resource) {
                Some(v) => sum = sum.saturating_add(v),
                None => {
                    return Err(format!(
                        "missing request for {resource} in container {} of Pod {}",
                        c.name, pod.name
                    ))
                }
            }
        }
        out.push(sum);
    }
    Ok(out)
}

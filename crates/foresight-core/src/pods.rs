//! Pods as the decision sees them, and how Kubernetes sorts them into ready, unready,
//! missing and ignored before it trusts their metrics (`groupPods`).

use std::cell::RefCell;

use foresight_api::status::ConditionStatus;
use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::resources::{ResourceList, ResourceName};
use crate::time::{add, sub};
use crate::version::KubernetesVersion;

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
    /// Its restartable init containers (sidecars, `restartPolicy: Always`), in spec order.
    /// Kubernetes 1.29+ counts their requests with the containers'.
    pub sidecars: Vec<Container>,
    /// `spec.resources.requests` (pod-level resources), when set. Kubernetes 1.34+ measures a
    /// pod against them when the metric names no container.
    pub pod_requests: Option<ResourceList>,
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

/// Why a pod has no request to measure usage against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissingRequest<'a> {
    /// A considered container lacks the request.
    Container {
        /// The resource.
        resource: &'a ResourceName,
        /// The container.
        container: &'a str,
        /// The pod.
        pod: &'a str,
    },
    /// The pod sets pod-level requests, but neither they nor its containers request the
    /// resource (Kubernetes 1.34+).
    PodLevel {
        /// The resource.
        resource: &'a ResourceName,
        /// The pod.
        pod: &'a str,
    },
    /// The metric's container is not in the pod's spec (Kubernetes 1.35+).
    NoSuchContainer {
        /// The container the metric names.
        container: &'a str,
        /// The pod.
        pod: &'a str,
    },
}

impl std::fmt::Display for MissingRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MissingRequest::Container {
                resource,
                container,
                pod,
            } => write!(
                f,
                "missing request for {resource} in container {container} of Pod {pod}"
            ),
            MissingRequest::PodLevel { resource, pod } => {
                write!(f, "missing pod-level request for {resource} in Pod {pod}")
            }
            MissingRequest::NoSuchContainer { container, pod } => {
                write!(f, "container {container} not found in Pod {pod}")
            }
        }
    }
}

/// A pod's request for `resource`, as Kubernetes' `calculatePodRequests` (1.28) and
/// `calculateRequests` (1.34+) compute it:
/// - with pod-level requests (1.34+) and no container named, the pod-level request;
/// - otherwise the sum over its containers and, from 1.29, its sidecars (only `container`'s,
///   when named); a considered container without the request is an error, and from 1.35 so is
///   a named container the pod does not have (before, such a pod requests nothing).
#[inline(always)]
pub fn pod_request<'a>(
    pod: &'a Pod,
    resource: &'a ResourceName,
    container: Option<&'a str>,
    kubernetes: KubernetesVersion,
) -> Result<i64, MissingRequest<'a>> {
    if container.is_none() && kubernetes.pod_level_requests() {
        if let Some(pod_level) = pod.pod_requests.as_ref().filter(|r| r.sets_pod_level()) {
            return pod_level_request(pod, pod_level, resource, kubernetes);
        }
    }
    let sidecars = if kubernetes.sidecars_in_requests() {
        pod.sidecars.as_slice()
    } else {
        &[]
    };
    let mut sum: i64 = 0;
    for c in pod.containers.iter().chain(sidecars) {
        if container.is_some_and(|name| name != c.name) {
            continue;
        }
        match c.requests.get(resource) {
            Some(v) => sum = sum.saturating_add(v),
            None => {
                return Err(MissingRequest::Container {
                    resource,
                    container: &c.name,
                    pod: &pod.name,
                })
            }
        }
        if container.is_some() {
            // Container names are unique within a pod.
            return Ok(sum);
        }
    }
    match container {
        Some(name) if kubernetes.named_container_checked_in_spec() => {
            Err(MissingRequest::NoSuchContainer {
                container: name,
                pod: &pod.name,
            })
        }
        _ => Ok(sum),
    }
}

/// `calculatePodLevelRequests`: the pod-level request for `resource` when it is set there;
/// otherwise what the containers (and sidecars) that request it request together, as
/// `PodRequests` aggregates them. Init containers' peak and the pod's overhead, which
/// `PodRequests` also weighs, are not part of what Foresight observes.
fn pod_level_request<'a>(
    pod: &'a Pod,
    pod_level: &ResourceList,
    resource: &'a ResourceName,
    kubernetes: KubernetesVersion,
) -> Result<i64, MissingRequest<'a>> {
    if let Some(v) = pod_level
        .get(resource)
        .filter(|_| resource.supported_at_pod_level())
    {
        return Ok(v);
    }
    let sidecars = if kubernetes.sidecars_in_requests() {
        pod.sidecars.as_slice()
    } else {
        &[]
    };
    pod.containers
        .iter()
        .chain(sidecars)
        .filter_map(|c| c.requests.get(resource))
        .reduce(i64::saturating_add)
        .ok_or(MissingRequest::PodLevel {
            resource,
            pod: &pod.name,
        })
}

/// Every pod's request (see [`pod_request`]); the first pod lacking one fails the whole list.
pub fn pod_requests(
    pods: &[Pod],
    resource: &ResourceName,
    container: Option<&str>,
    kubernetes: KubernetesVersion,
) -> Result<Vec<i64>, String> {
    pods.iter()
        .map(|p| pod_request(p, resource, container, kubernetes).map_err(|m| m.to_string()))
        .collect()
}

/// The mean of the pods' positive requests (see [`pod_request`]), `None` when no pod has
/// one; the first pod lacking one fails, as in [`pod_requests`]. Without a list: forecasts
/// and headroom turn a load into replicas with it at every decision.
pub fn average_pod_request(
    pods: &[Pod],
    resource: &ResourceName,
    container: Option<&str>,
    kubernetes: KubernetesVersion,
) -> Result<Option<f64>, String> {
    let (mut sum, mut counted) = (0.0, 0usize);
    for pod in pods {
        let request =
            pod_request(pod, resource, container, kubernetes).map_err(|m| m.to_string())?;
        if request > 0 {
            sum += request as f64;
            counted += 1;
        }
    }
    Ok((counted > 0).then(|| sum / counted as f64))
}

/// The average request one decision has worked out (see [`average_pod_request`]), for one
/// resource and container: the metric's own proposal sums every pod's request already, and
/// the forecast's and headroom's proposals then read the same average instead of going over
/// the pods again. One slot, as a decision's pods do not change and most autoscalers have one
/// Utilization metric; another resource replaces it.
#[derive(Debug, Default)]
pub struct AverageRequests {
    slot: RefCell<Option<AverageRequest>>,
}

#[derive(Debug)]
struct AverageRequest {
    resource: ResourceName,
    container: Option<String>,
    average: Result<Option<f64>, String>,
}

impl AverageRequests {
    /// [`average_pod_request`] of `pods`, from the slot when it holds this resource and
    /// container.
    pub fn of(
        &self,
        pods: &[Pod],
        resource: &ResourceName,
        container: Option<&str>,
        kubernetes: KubernetesVersion,
    ) -> Result<Option<f64>, String> {
        if let Some(known) = self
            .slot
            .borrow()
            .as_ref()
            .filter(|k| k.resource == *resource && k.container.as_deref() == container)
        {
            return known.average.clone();
        }
        let average = average_pod_request(pods, resource, container, kubernetes);
        self.remember(resource, container, average.clone());
        average
    }

    /// Keeps `average`, worked out over the decision's pods, for `resource` and `container`.
    pub fn remember(
        &self,
        resource: &ResourceName,
        container: Option<&str>,
        average: Result<Option<f64>, String>,
    ) {
        *self.slot.borrow_mut() = Some(AverageRequest {
            resource: resource.clone(),
            container: container.map(str::to_owned),
            average,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container(name: &str, requests: &[(&str, i64)]) -> Container {
        Container {
            name: name.to_owned(),
            requests: requests.iter().map(|(k, v)| (*k, *v)).collect(),
        }
    }

    fn at(minor: u64) -> KubernetesVersion {
        KubernetesVersion::new(minor).unwrap()
    }

    fn pod() -> Pod {
        Pod {
            name: "web-0".to_owned(),
            containers: vec![container("app", &[("cpu", 500), ("memory", 1000)])],
            sidecars: vec![container("proxy", &[("cpu", 250)])],
            ..Default::default()
        }
    }

    #[test]
    fn a_remembered_average_is_read_only_for_its_resource_and_container() {
        let pods = [pod()];
        let averages = AverageRequests::default();
        let cpu = ResourceName::Cpu;
        // What a proposal worked out is what is read back, for the same resource and container.
        averages.remember(&cpu, None, Ok(Some(42.0)));
        assert_eq!(averages.of(&pods, &cpu, None, at(30)), Ok(Some(42.0)));
        // Another container or resource is worked out from the pods, and then kept.
        assert_eq!(
            averages.of(&pods, &cpu, Some("app"), at(30)),
            Ok(Some(500.0))
        );
        assert_eq!(
            averages.of(&pods, &ResourceName::Memory, None, at(30)),
            average_pod_request(&pods, &ResourceName::Memory, None, at(30))
        );
        assert_eq!(averages.of(&pods, &cpu, None, at(30)), Ok(Some(750.0)));
    }

    #[test]
    fn sidecars_count_from_1_29() {
        let p = pod();
        assert_eq!(pod_request(&p, &ResourceName::Cpu, None, at(28)), Ok(500));
        assert_eq!(pod_request(&p, &ResourceName::Cpu, None, at(29)), Ok(750));
        // A sidecar without the request fails the metric once sidecars count.
        let err = pod_request(&p, &ResourceName::Memory, None, at(37)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "missing request for memory in container proxy of Pod web-0"
        );
        assert_eq!(
            pod_request(&p, &ResourceName::Memory, None, at(28)),
            Ok(1000)
        );
        // A named sidecar is measured alone.
        assert_eq!(
            pod_request(&p, &ResourceName::Cpu, Some("proxy"), at(37)),
            Ok(250)
        );
    }

    #[test]
    fn pod_level_requests_win_from_1_34_unless_a_container_is_named() {
        let mut p = pod();
        p.pod_requests = Some([("cpu", 2000)].into_iter().collect());
        assert_eq!(pod_request(&p, &ResourceName::Cpu, None, at(33)), Ok(750));
        assert_eq!(pod_request(&p, &ResourceName::Cpu, None, at(34)), Ok(2000));
        assert_eq!(
            pod_request(&p, &ResourceName::Cpu, Some("app"), at(37)),
            Ok(500)
        );
        // A resource the pod level leaves out comes from the containers that request it.
        assert_eq!(
            pod_request(&p, &ResourceName::Memory, None, at(37)),
            Ok(1000)
        );
        let gpu = ResourceName::from("nvidia.com/gpu");
        assert_eq!(
            pod_request(&p, &gpu, None, at(37)).unwrap_err().to_string(),
            "missing pod-level request for nvidia.com/gpu in Pod web-0"
        );
        // Only cpu, memory and hugepages can be set at the pod level.
        p.pod_requests = Some([("nvidia.com/gpu", 1000)].into_iter().collect());
        assert!(pod_request(&p, &gpu, None, at(37)).is_err());
    }

    #[test]
    fn a_named_container_the_pod_lacks_is_an_error_from_1_35() {
        let p = pod();
        assert_eq!(
            pod_request(&p, &ResourceName::Cpu, Some("worker"), at(34)),
            Ok(0)
        );
        assert_eq!(
            pod_request(&p, &ResourceName::Cpu, Some("worker"), at(35))
                .unwrap_err()
                .to_string(),
            "container worker not found in Pod web-0"
        );
    }
}

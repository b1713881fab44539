//! One metric's proposal: Kubernetes' `ReplicaCalculator`, step for step.
//!
//! Arithmetic follows Kubernetes (integer division that truncates, `f64` ratios, `ceil`), but
//! sums are widened to `i128` and conversions saturate, so no input can overflow or panic.

use jiff::Timestamp;

use crate::metrics::PodMetricSet;
use crate::pods::{pod_request, AverageRequests, Classifier, Pod, PodClass, Readiness};
use crate::resources::ResourceName;
use crate::version::KubernetesVersion;
use crate::wide;

/// The usage-ratio dead band.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// Allowed ratio above 1 before scaling up.
    pub up: f64,
    /// Allowed ratio below 1 before scaling down.
    pub down: f64,
    /// Which test: `1 − down ≤ r ≤ 1 + up` (Kubernetes 1.33+, and any release once a direction
    /// is configured on its own) or `|1 − r| ≤ tol` (Kubernetes 1.28–1.32). The two differ in
    /// the last bit at the edge: a ratio of exactly 1.1 with tolerance 0.1 is outside the
    /// second (`|1 − 1.1|` is 0.10000000000000009) and inside the first.
    pub bounds: bool,
}

impl Tolerance {
    /// One tolerance for both directions (Kubernetes' `--horizontal-pod-autoscaler-tolerance`),
    /// tested as `kubernetes` tests it.
    pub fn symmetric(tol: f64, kubernetes: KubernetesVersion) -> Self {
        Tolerance {
            up: tol,
            down: tol,
            bounds: kubernetes.tolerance_bounds(),
        }
    }

    /// Whether `ratio` is close enough to 1 that the count should not change.
    pub fn within(&self, ratio: f64) -> bool {
        if self.bounds {
            1.0 - self.down <= ratio && ratio <= 1.0 + self.up
        } else {
            (1.0 - ratio).abs() <= self.up
        }
    }
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance::symmetric(0.1, KubernetesVersion::default())
    }
}

/// What every calculation needs besides the metric.
#[derive(Clone, Copy, Debug)]
pub struct ReplicaContext<'a> {
    /// Pods matched by the target's selector.
    pub pods: &'a [Pod],
    /// The dead band.
    pub tolerance: Tolerance,
    /// CPU readiness rules.
    pub readiness: Readiness,
    /// The frozen clock.
    pub now: Timestamp,
    /// The Kubernetes release whose calculation this is.
    pub kubernetes: KubernetesVersion,
    /// Whether to format the current value and target for the explanation (see
    /// `PerObjectSettings::explain`); without it they are left empty.
    pub explain: bool,
    /// The pods' average request, once a proposal has worked it out.
    pub averages: &'a AverageRequests,
}

/// Kubernetes' error when the selector matches no pod.
pub const NO_PODS: &str = "no pods returned by selector while calculating replica count";
/// Kubernetes' error when every pod with a metric is unready or ignored.
pub const NO_READY_METRICS: &str =
    "did not receive metrics for targeted pods (pods might be unready)";

/// `int32(math.Ceil(x))` without Go's undefined behaviour: saturates, NaN gives 0.
pub fn ceil_i32(x: f64) -> i32 {
    x.ceil() as i32
}

fn saturate_i64(v: i128) -> i64 {
    v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

fn saturate_i32(v: i128) -> i32 {
    v.clamp(i32::MIN as i128, i32::MAX as i128) as i32
}

/// A Utilization target's outcome.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UtilizationProposal {
    /// Proposed replicas.
    pub replicas: i32,
    /// The replicas the ready pods' usage needs at the target, unrounded and before the
    /// tolerance (usage ratio × ready pods): what learned headroom scales.
    pub exact: f64,
    /// Current utilization, percent of requests (truncated).
    pub utilization: i32,
    /// Current raw average per pod, in thousandths.
    pub raw_average: i64,
}

/// Sums over the entries that have a request (pods in the list), as
/// `GetResourceUtilizationRatio`.
#[derive(Clone, Copy, Default)]
struct RatioSums {
    metrics: i128,
    requests: i128,
    count: i128,
}

impl RatioSums {
    fn add(&mut self, value: i64, request: i64) {
        self.metrics += i128::from(value);
        self.requests += i128::from(request);
        self.count += 1;
    }

    fn utilization(&self, target: i32) -> Result<(f64, i32, i64), String> {
        if self.requests == 0 {
            return Err("no metrics returned matched known pods".to_owned());
        }
        let utilization = saturate_i32(wide::div(self.metrics.saturating_mul(100), self.requests));
        let raw_average = if self.count == 0 {
            0
        } else {
            saturate_i64(wide::div(self.metrics, self.count))
        };
        Ok((
            f64::from(utilization) / f64::from(target),
            utilization,
            raw_average,
        ))
    }
}

/// How many pods fell in each class.
#[derive(Clone, Copy, Default)]
struct Counts {
    ready: usize,
    unready: usize,
    missing: usize,
}

impl Counts {
    fn add(&mut self, class: PodClass) {
        match class {
            PodClass::Ready => self.ready += 1,
            PodClass::Unready => self.unready += 1,
            PodClass::Missing => self.missing += 1,
            PodClass::Ignored => {}
        }
    }
}

/// `GetResourceReplicas`: Resource or ContainerResource metric with a Utilization target.
///
/// One pass classifies the pods (`groupPods`), sums the requests (`calculatePodRequests`) and
/// the ready pods' usage; errors are reported in Kubernetes' order afterwards. A second pass
/// runs only when Kubernetes rebalances (missing pods, or unready pods on a scale-up).
pub fn utilization_replicas(
    ctx: &ReplicaContext<'_>,
    current: i32,
    target_utilization: i32,
    resource: &ResourceName,
    container: Option<&str>,
    metrics: &PodMetricSet<'_>,
) -> Result<UtilizationProposal, String> {
    if ctx.pods.is_empty() {
        return Err(NO_PODS.to_owned());
    }
    let classifier = Classifier::new(*resource == ResourceName::Cpu, &ctx.readiness, ctx.now);
    let mut counts = Counts::default();
    let mut sums = RatioSums::default();
    let mut request_error = None;
    // Every pod's positive requests, for the average prediction's proposals read.
    let (mut requested, mut requesting) = (0.0, 0usize);
    for (i, pod) in ctx.pods.iter().enumerate() {
        let entry = metrics.entry_of_pod(i);
        let class = classifier.classify(pod, entry.map(|e| e.timing));
        counts.add(class);
        match pod_request(pod, resource, container, ctx.kubernetes) {
            Ok(request) => {
                if request > 0 {
                    requested += request as f64;
                    requesting += 1;
                }
                if class == PodClass::Ready {
                    sums.add(entry.map_or(0, |e| e.value), request);
                }
            }
            Err(missing) => {
                request_error.get_or_insert(missing);
            }
        }
    }
    ctx.averages.remember(
        resource,
        container,
        match &request_error {
            Some(missing) => Err(missing.to_string()),
            None => Ok((requesting > 0).then(|| requested / requesting as f64)),
        },
    );
    if counts.ready + metrics.unmatched == 0 {
        return Err(NO_READY_METRICS.to_owned());
    }
    if let Some(missing) = request_error {
        return Err(missing.to_string());
    }
    let (ratio, utilization, raw_average) = sums.utilization(target_utilization)?;
    let exact = ratio * counts.ready as f64;
    let outcome = |replicas| {
        Ok(UtilizationProposal {
            replicas,
            exact,
            utilization,
            raw_average,
        })
    };

    let scale_up_with_unready = counts.unready > 0 && ratio > 1.0;
    if !scale_up_with_unready && counts.missing == 0 {
        if ctx.tolerance.within(ratio) {
            return outcome(current);
        }
        return outcome(ceil_i32(ratio * counts.ready as f64));
    }

    // Rebalance: assume missing pods use their request (or the target, if above 100%) on a
    // scale-down and nothing on a scale-up; unready pods use nothing on a scale-up.
    let fallback = i64::from(target_utilization.max(100));
    let mut entries = counts.ready + metrics.unmatched;
    for (i, pod) in ctx.pods.iter().enumerate() {
        let class = classifier.classify(pod, metrics.timing_of_pod(i));
        let request =
            pod_request(pod, resource, container, ctx.kubernetes).map_err(|m| m.to_string())?;
        let value = match class {
            PodClass::Missing if ratio < 1.0 => {
                saturate_i64(i128::from(request) * i128::from(fallback) / 100)
            }
            PodClass::Missing if ratio > 1.0 => 0,
            PodClass::Unready if scale_up_with_unready => 0,
            _ => continue,
        };
        sums.add(value, request);
        entries += 1;
    }
    let (new_ratio, _, _) = sums.utilization(target_utilization)?;
    outcome(rebalanced_replicas(ctx, current, ratio, new_ratio, entries))
}

/// The no-flip rules shared by both rebalancing paths (Kubernetes' last steps).
fn rebalanced_replicas(
    ctx: &ReplicaContext<'_>,
    current: i32,
    ratio: f64,
    new_ratio: f64,
    entries: usize,
) -> i32 {
    if ctx.tolerance.within(new_ratio)
        || (ratio < 1.0 && new_ratio > 1.0)
        || (ratio > 1.0 && new_ratio < 1.0)
    {
        return current;
    }
    let replicas = ceil_i32(new_ratio * entries as f64);
    if (new_ratio < 1.0 && replicas > current) || (new_ratio > 1.0 && replicas < current) {
        return current;
    }
    replicas
}

/// `calcPlainMetricReplicas`: Pods metrics and Resource AverageValue targets. Returns the
/// proposal, the current average usage (thousandths) and the replicas the ready pods' usage
/// needs at the target, unrounded.
pub fn average_value_replicas(
    ctx: &ReplicaContext<'_>,
    current: i32,
    target: i64,
    cpu_rules: bool,
    metrics: &PodMetricSet<'_>,
) -> Result<(i32, i64, f64), String> {
    if ctx.pods.is_empty() {
        return Err(NO_PODS.to_owned());
    }
    let classifier = Classifier::new(cpu_rules, &ctx.readiness, ctx.now);
    let mut counts = Counts::default();
    let mut total: i128 = metrics.unmatched_total;
    for (i, pod) in ctx.pods.iter().enumerate() {
        let entry = metrics.entry_of_pod(i);
        let class = classifier.classify(pod, entry.map(|e| e.timing));
        counts.add(class);
        if class == PodClass::Ready {
            total += i128::from(entry.map_or(0, |e| e.value));
        }
    }
    let mut entries = counts.ready + metrics.unmatched;
    if entries == 0 {
        return Err(NO_READY_METRICS.to_owned());
    }
    let usage = saturate_i64(total / entries as i128);
    let ratio = usage as f64 / target as f64;
    let exact = ratio * counts.ready as f64;

    let scale_up_with_unready = counts.unready > 0 && ratio > 1.0;
    if !scale_up_with_unready && counts.missing == 0 {
        if ctx.tolerance.within(ratio) {
            return Ok((current, usage, exact));
        }
        return Ok((ceil_i32(exact), usage, exact));
    }

    // Rebalance: missing pods at exactly the target on a scale-down, at zero on a scale-up;
    // unready pods at zero on a scale-up.
    for (i, pod) in ctx.pods.iter().enumerate() {
        let value = match classifier.classify(pod, metrics.timing_of_pod(i)) {
            PodClass::Missing if ratio < 1.0 => i128::from(target),
            PodClass::Missing if ratio > 1.0 => 0,
            PodClass::Unready if scale_up_with_unready => 0,
            _ => continue,
        };
        total += value;
        entries += 1;
    }
    let new_usage = saturate_i64(total / entries as i128);
    let new_ratio = new_usage as f64 / target as f64;
    Ok((
        rebalanced_replicas(ctx, current, ratio, new_ratio, entries),
        usage,
        exact,
    ))
}

/// `getUsageRatioReplicaCount`: Object and External metrics with a Value target. Only the
/// running, ready pods count; from zero replicas the ratio alone decides. Returns the
/// proposal and the replicas the value needs at the target, unrounded.
pub fn value_ratio_replicas(
    ctx: &ReplicaContext<'_>,
    current: i32,
    ratio: f64,
) -> Result<(i32, f64), String> {
    if current == 0 {
        return Ok((ceil_i32(ratio), ratio));
    }
    let ready = ctx.pods.iter().filter(|p| p.is_running_and_ready()).count();
    let exact = ratio * ready as f64;
    if ctx.tolerance.within(ratio) {
        return Ok((current, exact));
    }
    if ctx.pods.is_empty() {
        return Err(format!("unable to calculate ready pods: {NO_PODS}"));
    }
    Ok((ceil_i32(exact), exact))
}

/// `Get{Object,External}PerPodMetricReplicas`: AverageValue targets for Object and External
/// metrics, against `scale.status.replicas`; pods play no part. Returns the proposal and the
/// average per replica, and the replicas the usage needs at the target, unrounded. With zero
/// status replicas (which Kubernetes turns into infinities), the proposal is
/// `ceil(usage / target)` and the reported average is the total.
pub fn per_pod_replicas(
    tolerance: Tolerance,
    status_replicas: i32,
    target: i64,
    usage: i64,
) -> (i32, i64, f64) {
    let mut replicas = status_replicas;
    let ratio = usage as f64 / (target as f64 * f64::from(status_replicas));
    if !tolerance.within(ratio) {
        replicas = ceil_i32(usage as f64 / target as f64);
    }
    let average = if status_replicas == 0 {
        usage
    } else {
        (usage as f64 / f64::from(status_replicas)).ceil() as i64
    };
    (replicas, average, usage as f64 / target as f64)
}

//! The decision: `(autoscaler, observation, status, history, now) -> Decision`, following
//! Kubernetes' `reconcileAutoscaler` step by step, extended with Foresight's sources and
//! strategies, and recording every step for the explanation. Prediction's part (forecasts,
//! learned headroom, self-evaluation) is in [`prediction`]; what KEDA users rely on is in
//! [`fallback`] (metrics that keep failing), [`idle`] (scaling to and from an idle size) and
//! [`pause`] (the pause annotations).

mod fallback;
mod idle;
mod pause;
mod prediction;

use std::borrow::Cow;

use foresight_api::hpa::MetricStatus;
use foresight_api::selector::Selector;
use foresight_api::spec::ScaleStrategy;
use foresight_api::status::{
    Condition, ConditionStatus, DecisionRecord, EffectiveHorizontalPodAutoscalerStatus,
    LimitRecord, ProposalRecord, Recommendation, ScalingHistory,
};
use jiff::Timestamp;

use crate::autoscaler::Autoscaler;
use crate::behavior::{normalize, record_rescale, LimitReason, NormalizeArgs};
use crate::conditions::{
    self, ABLE_TO_SCALE, CRON_ACTIVE, FALLBACK_ACTIVE, READY, SCALING_ACTIVE, SCALING_LIMITED,
};
use crate::cron::cron_proposal;
use crate::forecasting::{ForecastInput, HeadroomInput};
use crate::metrics::{MetricData, PodResourceSample};
use crate::pause::Pause;
use crate::pods::{AverageRequests, Pod};
use crate::prediction::EvaluationInput;
use crate::proposals::{evaluate, Scale};
use crate::replicas::ReplicaContext;
use crate::targets;
use crate::version::KubernetesVersion;

/// Everything observed for one decision.
#[derive(Clone, Debug)]
pub struct Observation {
    /// The target's scale subresource, or the error reading it.
    pub scale: Result<Scale, String>,
    /// Pods matched by the scale's selector.
    pub pods: Vec<Pod>,
    /// The PodMetrics list for the pods (metrics.k8s.io), shared by Resource and
    /// ContainerResource metrics, or the error reading it.
    pub resource_metrics: Result<Vec<PodResourceSample>, String>,
    /// What was seen of each metric of the spec, in spec order (a metric past the end of the
    /// list was not read: no data, no forecast).
    pub metrics: Vec<MetricObservation>,
    /// Other autoscalers (`namespace/name`) whose targets select the same pods.
    pub conflicts: Vec<String>,
    /// Why the scale's selector could not be parsed, when it could not (the shell parses it
    /// to find the pods).
    pub selector_error: Option<String>,
    /// What the autoscaler's pause annotations ask for.
    pub pause: Pause,
    /// When the autoscaler was created (`metadata.creationTimestamp`), for
    /// `spec.idle.initialCooldownSeconds`; `None` counts as long ago.
    pub created: Option<Timestamp>,
    /// With `spec.objective`: the operating point the shell's latest replay of the recent
    /// history chose (`None` before the first; the spec then runs as written). Ignored
    /// without an objective.
    pub operating_point: Option<crate::objective::OperatingPoint>,
}

/// What was seen of one metric: its reading, and what prediction offers for it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MetricObservation {
    /// The metric's value as read from its source (or why there is none).
    pub reading: MetricData,
    /// The forecast (`Off` when prediction is off or does not cover the metric).
    pub forecast: ForecastInput,
    /// How accurate the metric's recent forecasts were; `None` before any forecast was
    /// compared with an observation.
    pub accuracy: Option<crate::prediction::Accuracy>,
    /// The headroom learned from the metric's history (`Off` without `prediction.headroom`).
    pub headroom: HeadroomInput,
    /// Whether replaying the recent history showed prediction to pay (`Off` when
    /// self-evaluation is off).
    pub evaluation: EvaluationInput,
    /// The margin the forecast's own errors call for (learned only where an operating
    /// point lets the forecast carry the headroom; see `PredictionPolicy::forecast_error_budget`).
    pub forecast_margin: Option<crate::prediction::conformal::ForecastMargin>,
}

impl From<MetricData> for MetricObservation {
    /// A reading alone, without prediction.
    fn from(reading: MetricData) -> Self {
        MetricObservation {
            reading,
            ..MetricObservation::default()
        }
    }
}

impl Observation {
    /// Parses the scale's selector with the parser every shell shares (Kubernetes' grammar
    /// and error texts). A malformed one is kept in `selector_error`, which the decision
    /// reports as `InvalidSelector` as Kubernetes does; an empty one is left to the decision
    /// too (`SelectorRequired`). The parsed selector finds the pods.
    pub fn parse_selector(&mut self) -> Option<Selector> {
        let text = &self.scale.as_ref().ok()?.selector;
        if text.is_empty() {
            return None;
        }
        match Selector::parse(text) {
            Ok(s) => Some(s),
            Err(e) => {
                self.selector_error = Some(e.to_string());
                None
            }
        }
    }
}

impl Default for Observation {
    fn default() -> Self {
        Observation {
            scale: Ok(Scale::default()),
            pods: Vec::new(),
            resource_metrics: Ok(Vec::new()),
            metrics: Vec::new(),
            conflicts: Vec::new(),
            selector_error: None,
            pause: Pause::default(),
            created: None,
            operating_point: None,
        }
    }
}

/// Whether an event is routine or a warning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    /// Routine.
    Normal,
    /// Something went wrong.
    Warning,
}

impl EventType {
    /// `Normal` or `Warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

/// A Kubernetes event to emit on the autoscaler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// Normal or Warning.
    pub type_: EventType,
    /// CamelCase reason.
    pub reason: String,
    /// Message.
    pub message: String,
}

/// How much of the status a decision rewrites (Kubernetes rewrites less on failures).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusScope {
    /// Only conditions (the scale could not be read).
    ConditionsOnly,
    /// Conditions, current replicas and metrics; the desired count stays (metrics failed).
    CurrentOnly,
    /// Everything.
    Full,
}

/// The decision, before the shell acts on it.
#[derive(Clone, Debug)]
pub struct Decision {
    /// The instant it was made.
    pub time: Timestamp,
    /// `scale.spec.replicas` (0 if the scale could not be read).
    pub current_replicas: i32,
    /// The replicas Foresight wants (what `Auto` applies).
    pub desired_replicas: i32,
    /// Whether the desired count differs from the current one (and a count was decided).
    pub rescale: bool,
    /// The count the shell must write to the target's scale, if any: the desired count in
    /// `Auto`, `specificReplicas` in `Preview` when it differs from the current count.
    pub scale_to: Option<i32>,
    /// Why: Kubernetes' rescale reason (`cpu resource utilization (...) above target`).
    pub rescale_reason: String,
    /// `currentMetrics`; `None` when no metric was evaluated.
    pub metric_statuses: Option<Vec<MetricStatus>>,
    /// The status being updated: the prior status, with this decision's conditions.
    status: EffectiveHorizontalPodAutoscalerStatus,
    /// Events to emit before the write.
    pub events: Vec<Event>,
    /// History after recording this decision's recommendation.
    pub history: ScalingHistory,
    /// The reconcile error, in Kubernetes' words, if any.
    pub error: Option<String>,
    /// How much of the status to rewrite.
    pub scope: StatusScope,
    /// The explanation.
    pub record: DecisionRecord,
    /// The Kubernetes release decided as.
    kubernetes: KubernetesVersion,
    /// Whether to build the explanation (`PerObjectSettings::explain`).
    explain: bool,
    /// At an operating point with prediction, learned headroom proposed for every metric:
    /// it holds capacity for the rise this hour has shown over the lead stretch, so the
    /// scale-down stabilization window is not applied (see
    /// `PredictionPolicy::headroom_guards_scale_down`).
    scale_down_guarded: bool,
}

/// What happened when the shell tried to write `scale_to`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScaleOutcome {
    /// Nothing was written (no `scale_to`).
    NotAttempted,
    /// The write succeeded; `at` is when it returned. The scale event and `lastScaleTime` are
    /// stamped with it, as Kubernetes stamps them after its write: a rate-limit period
    /// measured from the write, not from the decision, is what keeps an event exactly a
    /// whole number of syncs old out of the next period (the shells sync a period after the
    /// previous sync ended, like the native controller).
    Applied {
        /// When the write returned (the decision's own time where acting takes no time).
        at: Timestamp,
    },
    /// The write failed with this error.
    Failed(String),
}

/// The decision after acting: what to write to status, which events to emit, the history
/// to keep, and the reconcile error.
#[derive(Clone, Debug)]
pub struct Reconciled {
    /// The new status.
    pub status: EffectiveHorizontalPodAutoscalerStatus,
    /// Events, in order.
    pub events: Vec<Event>,
    /// The history to keep.
    pub history: ScalingHistory,
    /// The reconcile error, in Kubernetes' words.
    pub error: Option<String>,
}

/// One candidate in the combination of proposals.
struct Candidate<'a> {
    replicas: i32,
    name: Cow<'a, str>,
}

/// The metrics that could not be computed: how many, and the first one's reason, message
/// and error.
#[derive(Default)]
struct MetricFailures {
    count: usize,
    first: Option<(&'static str, String, String)>,
}

/// The largest proposal; on ties the earlier one (Kubernetes' `replicas == 0 || proposal >
/// replicas`).
fn largest<'a>(candidates: &'a [Candidate<'a>]) -> (i32, Cow<'a, str>) {
    let mut winner: Option<&Candidate> = None;
    for c in candidates {
        if winner.is_none_or(|w| w.replicas == 0 || c.replicas > w.replicas) {
            winner = Some(c);
        }
    }
    winner
        .map(|w| (w.replicas, w.name.clone()))
        .unwrap_or((0, Cow::Borrowed("")))
}

/// Where the current count stands against the bounds: Kubernetes decides the first three
/// without reading a metric, in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bounds {
    /// The target has zero replicas and `minReplicas` is not 0: scaling is disabled.
    ScalingDisabled,
    /// Above `maxReplicas`: scale to it.
    AboveMax,
    /// Below `minReplicas`: scale to it.
    BelowMin,
    /// Within the bounds: the metrics decide.
    Within,
}

impl Bounds {
    /// Where `current` stands for `autoscaler` (with `spec.idle`, against the active
    /// minimum: only inactivity takes the target below it). `status` is the prior status:
    /// from Kubernetes 1.37 (HPAScaleToZero), a target at zero is scaled from its metrics
    /// only if the autoscaler scaled it there itself (`ScaledToZero=True`) and can see load
    /// without pods or has a minimum to return to; otherwise scaling is disabled.
    pub fn of(
        autoscaler: &Autoscaler,
        current: i32,
        status: &EffectiveHorizontalPodAutoscalerStatus,
    ) -> Bounds {
        let min = autoscaler.active_min_replicas();
        let kubernetes = autoscaler.settings.kubernetes;
        if current == 0 && kubernetes.zero_replicas_need_scaled_to_zero() {
            let scaled_to_zero = scaled_to_zero(autoscaler, status);
            if scaled_to_zero && (min != 0 || autoscaler.sees_load_without_pods()) {
                Bounds::Within
            } else {
                Bounds::ScalingDisabled
            }
        } else if current == 0 && min != 0 {
            Bounds::ScalingDisabled
        } else if current > autoscaler.max_replicas {
            Bounds::AboveMax
        } else if current < min {
            Bounds::BelowMin
        } else {
            Bounds::Within
        }
    }
}

/// Whether the prior status says the autoscaler scaled its target to zero itself
/// (`ScaledToZero=True`); always false before Kubernetes 1.37.
pub fn scaled_to_zero(
    autoscaler: &Autoscaler,
    status: &EffectiveHorizontalPodAutoscalerStatus,
) -> bool {
    autoscaler.settings.kubernetes.scale_to_zero()
        && conditions::get(&status.conditions, conditions::SCALED_TO_ZERO)
            .is_some_and(|c| c.status == ConditionStatus::True)
}

/// Whether [`decide`] will look at metrics for this scale: only within the bounds (or, with
/// `spec.idle`, at any size: activity is read from the metrics), with a selector, and with no
/// other autoscaler on the same pods. The controller asks before it reads any, so that it
/// reads what the decision uses and nothing else. `status` is the prior status.
pub fn reads_metrics(
    autoscaler: &Autoscaler,
    scale: &Scale,
    conflicts: bool,
    status: &EffectiveHorizontalPodAutoscalerStatus,
) -> bool {
    (autoscaler.idle.is_some()
        || Bounds::of(autoscaler, scale.spec_replicas, status) == Bounds::Within)
        && !scale.selector.is_empty()
        && !conflicts
}

/// Decides for `autoscaler` given what was observed, its current status and its history.
///
/// The status and history are taken by value and come back, updated, from
/// [`Decision::finish`]: a decision runs every sync for every autoscaler, so it copies nothing
/// it can move.
pub fn decide(
    autoscaler: &Autoscaler,
    observation: &Observation,
    status: EffectiveHorizontalPodAutoscalerStatus,
    history: ScalingHistory,
    now: Timestamp,
) -> Decision {
    // Without an objective nothing below sees an operating point: the spec runs as written.
    let Some(point) = autoscaler
        .objective
        .and(observation.operating_point.as_ref())
    else {
        return decide_as_written(autoscaler, observation, status, history, now);
    };
    let tuned = autoscaler.at_knobs(&point.knobs_at(now.as_second()));
    let mut d = decide_as_written(&tuned, observation, status, history, now);
    d.status.operating_point = Some(point.status());
    d
}

/// [`decide`] for `autoscaler` as it stands (an objective's operating point already applied).
fn decide_as_written(
    autoscaler: &Autoscaler,
    observation: &Observation,
    status: EffectiveHorizontalPodAutoscalerStatus,
    history: ScalingHistory,
    now: Timestamp,
) -> Decision {
    let mut d = Decision::begin(autoscaler, status, history, now);
    let scale = match &observation.scale {
        Err(e) => {
            d.failed_get_scale(autoscaler, e);
            return d;
        }
        Ok(scale) => scale,
    };
    d.got_scale(scale.spec_replicas, now);
    let Some(desired) = d.desired(autoscaler, observation, scale, now) else {
        d.hold_without_metrics(autoscaler, &observation.pause, scale.spec_replicas);
        return d;
    };
    d.conclude(autoscaler, &observation.pause, scale.spec_replicas, desired);
    d
}

impl Decision {
    /// A decision at `now` that has observed nothing yet.
    fn begin(
        autoscaler: &Autoscaler,
        status: EffectiveHorizontalPodAutoscalerStatus,
        history: ScalingHistory,
        now: Timestamp,
    ) -> Decision {
        Decision {
            time: now,
            current_replicas: 0,
            desired_replicas: status.desired_replicas.unwrap_or(0),
            rescale: false,
            scale_to: None,
            rescale_reason: String::new(),
            metric_statuses: None,
            status,
            events: Vec::new(),
            history,
            error: None,
            scope: StatusScope::Full,
            kubernetes: autoscaler.settings.kubernetes,
            explain: autoscaler.settings.explain,
            scale_down_guarded: false,
            record: DecisionRecord {
                time: now,
                strategy: match autoscaler.strategy {
                    ScaleStrategy::Auto => "Auto",
                    ScaleStrategy::Preview => "Preview",
                }
                .to_owned(),
                ..Default::default()
            },
        }
    }

    /// The target's scale could not be read: only conditions change.
    fn failed_get_scale(&mut self, autoscaler: &Autoscaler, e: &str) {
        self.warn("FailedGetScale", e.to_owned());
        self.set(
            ABLE_TO_SCALE,
            false,
            "FailedGetScale",
            &format!("the HPA controller was unable to get the target's current scale: {e}"),
        );
        self.error = Some(format!(
            "failed to query scale subresource for {}: {e}",
            autoscaler.target_reference()
        ));
        self.scope = StatusScope::ConditionsOnly;
        self.record.summary = format!("cannot read the target's scale: {e}");
    }

    fn got_scale(&mut self, current: i32, now: Timestamp) {
        self.set(
            ABLE_TO_SCALE,
            true,
            "SucceededGetScale",
            "the HPA controller was able to get the target's current scale",
        );
        self.current_replicas = current;
        self.record.current_replicas = current;
        // Kubernetes seeds the history with the current count the first time it sees the
        // object.
        if self.history.recommendations.is_empty() {
            self.history.recommendations.push(Recommendation {
                replicas: current,
                timestamp: now,
            });
        }
    }

    /// The count before pausing: inactivity's, the bounds', or the metrics' after behavior;
    /// `None` when no metric could be computed.
    fn desired(
        &mut self,
        autoscaler: &Autoscaler,
        observation: &Observation,
        scale: &Scale,
        now: Timestamp,
    ) -> Option<i32> {
        let current = scale.spec_replicas;
        let idle = if scale.selector.is_empty() || !observation.conflicts.is_empty() {
            None
        } else {
            self.idle(autoscaler, observation, current)
        };
        if let Some(to) = idle {
            self.rescale = to != current;
            return Some(to);
        }
        match Bounds::of(autoscaler, current, &self.status) {
            Bounds::ScalingDisabled => {
                self.set(
                    SCALING_ACTIVE,
                    false,
                    "ScalingDisabled",
                    "scaling is disabled since the replica count of the target is zero",
                );
                if autoscaler.settings.kubernetes.clears_scaled_to_zero() {
                    conditions::remove(&mut self.status.conditions, conditions::SCALED_TO_ZERO);
                }
                self.rescale = false;
                self.record.summary =
                    "scaling is disabled: the target has zero replicas".to_owned();
                Some(0)
            }
            Bounds::AboveMax => {
                let max = autoscaler.max_replicas;
                self.rescale_reason = "Current number of replicas above Spec.MaxReplicas".into();
                self.rescale = true;
                let reason = LimitReason::TooManyReplicas.reason();
                self.limit(
                    "bounds",
                    current,
                    max,
                    reason,
                    "current replicas above maxReplicas",
                );
                Some(max)
            }
            Bounds::BelowMin => {
                let min = autoscaler.active_min_replicas();
                self.rescale_reason = "Current number of replicas below Spec.MinReplicas".into();
                self.rescale = true;
                let reason = LimitReason::TooFewReplicas.reason();
                self.limit(
                    "bounds",
                    current,
                    min,
                    reason,
                    "current replicas below minReplicas",
                );
                Some(min)
            }
            Bounds::Within => self.metrics_decide(autoscaler, observation, scale, now),
        }
    }

    /// The metrics' recommendation, shaped by behavior (or the legacy limits).
    fn metrics_decide(
        &mut self,
        autoscaler: &Autoscaler,
        observation: &Observation,
        scale: &Scale,
        now: Timestamp,
    ) -> Option<i32> {
        let current = scale.spec_replicas;
        let (recommended, metric) = self.recommend(autoscaler, observation, scale)?;
        let desired = recommended.max(0);
        if desired > current {
            let metric = if recommended > 0 {
                metric
            } else {
                String::new()
            };
            self.rescale_reason = format!("{metric} above target");
        }
        if desired < current {
            self.rescale_reason = "All metrics below target".to_owned();
        }
        self.record.recommendation = Some(desired);
        let mut desired = self.normalize(autoscaler, current, desired, now);
        // Kubernetes 1.37: back from zero, at least to the minimum.
        let min = autoscaler.active_min_replicas();
        if current == 0 && min != 0 && desired < min && scaled_to_zero(autoscaler, &self.status) {
            if self.rescale_reason.is_empty() {
                self.rescale_reason = "Current number of replicas below Spec.MinReplicas".into();
            }
            let reason = LimitReason::TooFewReplicas.reason();
            self.limit(
                "bounds",
                desired,
                min,
                reason,
                "scaling from zero to minReplicas",
            );
            desired = min;
        }
        self.rescale = desired != current;
        Some(desired)
    }

    /// No metric could be computed: hold at the current count (unless a pause says
    /// otherwise), and say why.
    fn hold_without_metrics(&mut self, autoscaler: &Autoscaler, pause: &Pause, current: i32) {
        self.warn(
            "FailedComputeMetricsReplicas",
            self.error.clone().unwrap_or_default(),
        );
        let cause = self.error.take().unwrap_or_default();
        self.error = Some(format!(
            "failed to compute desired number of replicas based on listed metrics for {}: {cause}",
            autoscaler.target_reference()
        ));
        self.scope = StatusScope::CurrentOnly;
        self.record.desired_replicas = current;
        self.record.summary = format!("hold at {current}: {cause}");
        let held = self.pause(pause, current, current);
        if held != current {
            self.desired_replicas = held;
            self.rescale = true;
            self.scale_to = (autoscaler.strategy == ScaleStrategy::Auto).then_some(held);
            self.record.desired_replicas = held;
            self.record.summary = format!("scale {current} -> {held}: {}", self.rescale_reason);
        }
    }

    /// Applies a pause to `desired` and settles what to write: the scale (Auto, or Preview's
    /// `specificReplicas`) and the record.
    fn conclude(&mut self, autoscaler: &Autoscaler, pause: &Pause, current: i32, desired: i32) {
        let desired = self.pause(pause, current, desired);
        self.rescale = desired != current && (self.rescale || pause.any());
        self.desired_replicas = desired;
        self.scale_to = match autoscaler.strategy {
            ScaleStrategy::Auto => self.rescale.then_some(desired),
            ScaleStrategy::Preview => autoscaler.specific_replicas.filter(|n| *n != current),
        };
        self.record.desired_replicas = desired;
        self.record.rescale = self.rescale;
        if self.record.summary.is_empty() && self.explain {
            self.record.summary = self.summary(autoscaler);
        }
    }
}

impl Decision {
    /// Which way the decision moves the workload: `up`, `down` or `none` (the `direction`
    /// label of the decision metrics).
    pub fn direction(&self) -> &'static str {
        match self.desired_replicas.cmp(&self.current_replicas) {
            std::cmp::Ordering::Greater if self.rescale => "up",
            std::cmp::Ordering::Less if self.rescale => "down",
            _ => "none",
        }
    }

    /// What shaped the decision: the last limit that changed it, else why scaling is inactive,
    /// else `Recommendation` (the `reason` label of the decision metrics). The limits are
    /// the decision record's, kept only when the autoscaler explains (`settings.explain`).
    pub fn shaped_by(&self) -> &str {
        self.record
            .limits
            .last()
            .map(|l| l.reason.as_str())
            .or_else(|| {
                conditions::get(self.conditions(), conditions::SCALING_ACTIVE)
                    .filter(|c| c.status == ConditionStatus::False)
                    .map(|c| c.reason.as_str())
            })
            .unwrap_or("Recommendation")
    }

    /// `make()` when the decision explains itself, else nothing (see
    /// `PerObjectSettings::explain`).
    fn text(&self, make: impl FnOnce() -> String) -> String {
        if self.explain {
            make()
        } else {
            String::new()
        }
    }

    fn set(&mut self, type_: &str, status: bool, reason: &str, message: &str) {
        self.set_parts(type_, status, reason, &[message]);
    }

    fn set_parts(&mut self, type_: &str, status: bool, reason: &str, message: &[&str]) {
        // Without the explanation, conditions keep their status and reason only.
        let message = if self.explain { message } else { &[] };
        conditions::set_parts(
            &mut self.status.conditions,
            type_,
            ConditionStatus::from_bool(status),
            reason,
            message,
            self.time,
        );
    }

    /// The conditions as this decision leaves them (before the shell acts).
    pub fn conditions(&self) -> &[Condition] {
        &self.status.conditions
    }

    fn warn(&mut self, reason: &str, message: String) {
        self.events.push(Event {
            type_: EventType::Warning,
            reason: reason.to_owned(),
            message,
        });
    }

    fn limit(&mut self, stage: &str, from: i32, to: i32, reason: &str, message: &str) {
        if !self.explain {
            return;
        }
        self.record.limits.push(LimitRecord {
            stage: stage.to_owned(),
            from,
            to,
            reason: reason.to_owned(),
            message: message.to_owned(),
        });
    }

    /// `computeReplicasForMetrics`: every metric's proposal, combined by maximum. `None` is
    /// Kubernetes' failure signal (the reason is in `self.error`): a bad selector, all metrics
    /// failed, or some failed and the rest would scale down.
    fn recommend(
        &mut self,
        a: &Autoscaler,
        obs: &Observation,
        scale: &Scale,
    ) -> Option<(i32, String)> {
        if !self.selector_usable(obs, scale) {
            return None;
        }
        let averages = AverageRequests::default();
        let ctx = ReplicaContext {
            averages: &averages,
            pods: &obs.pods,
            tolerance: a.settings.tolerance,
            readiness: a.settings.readiness,
            now: self.time,
            kubernetes: a.settings.kubernetes,
            explain: self.explain,
        };
        let mut candidates: Vec<Candidate> = Vec::with_capacity(a.metrics.len() + 2);
        let (exact, failures) = self.metric_proposals(a, obs, scale, &ctx, &mut candidates);
        self.predict(a, obs, scale, &ctx, &exact, &mut candidates);
        self.cron(a, scale, &mut candidates);
        let fallback = self.fallback(a, failures.count > 0, scale.spec_replicas, &mut candidates);

        let (replicas, name) = largest(&candidates);
        let total = a.metrics.len();
        let error = failures.first.as_ref().map(|(_, _, e)| {
            let invalid = failures.count;
            format!("invalid metrics ({invalid} invalid out of {total}), first error is: {e}")
        });
        if !fallback
            && (failures.count >= total.max(1) && candidates.is_empty()
                || (failures.count > 0 && replicas < scale.spec_replicas))
        {
            if let Some((reason, message, _)) = &failures.first {
                let msg = format!("the HPA was unable to compute the replica count: {message}");
                self.set(SCALING_ACTIVE, false, reason, &msg);
                self.limit(
                    "failedMetrics",
                    scale.spec_replicas,
                    scale.spec_replicas,
                    reason,
                    "a metric failed: no scale-down until every metric can be read",
                );
            }
            self.error = error;
            return None;
        }
        self.set_parts(
            SCALING_ACTIVE,
            true,
            "ValidMetricFound",
            &[
                "the HPA was able to successfully calculate a replica count from ",
                &name,
            ],
        );
        // A partial failure still scales, but the reconcile reports it.
        self.error = error;
        Some((replicas, name.into_owned()))
    }

    /// Whether the target's pods can be told apart: a scale without a selector, one that
    /// does not parse, or pods another autoscaler also targets stop the metrics, as in
    /// Kubernetes.
    fn selector_usable(&mut self, obs: &Observation, scale: &Scale) -> bool {
        let (reason, msg) = if scale.selector.is_empty() {
            self.warn("SelectorRequired", "selector is required".to_owned());
            self.set(
                SCALING_ACTIVE,
                false,
                "InvalidSelector",
                "the HPA target's scale is missing a selector",
            );
            self.error = Some("selector is required".to_owned());
            return false;
        } else if let Some(err) = &obs.selector_error {
            let msg = format!(
                "couldn't convert selector into a corresponding internal selector object: {err}"
            );
            ("InvalidSelector", msg)
        } else if !obs.conflicts.is_empty() {
            let msg = if self.kubernetes.reworded_errors() {
                // 1.37 stops looking once it has found two.
                let shown = &obs.conflicts[..obs.conflicts.len().min(2)];
                format!(
                    "pods by selector {} are controlled by more than one HPA (e.g. [{}])",
                    scale.selector,
                    shown.join(" ")
                )
            } else {
                format!(
                    "pods by selector {} are controlled by multiple HPAs: [{}]",
                    scale.selector,
                    obs.conflicts.join(" ")
                )
            };
            ("AmbiguousSelector", msg)
        } else {
            return true;
        };
        self.warn(reason, msg.clone());
        self.set(SCALING_ACTIVE, false, reason, &msg);
        self.error = Some(msg);
        false
    }

    /// Each metric's proposal, recorded and added to `candidates`; returns each metric's
    /// exact (unrounded) ratio for prediction, and the failures.
    fn metric_proposals<'a>(
        &mut self,
        a: &'a Autoscaler,
        obs: &Observation,
        scale: &Scale,
        ctx: &ReplicaContext,
        candidates: &mut Vec<Candidate<'a>>,
    ) -> (Vec<Option<f64>>, MetricFailures) {
        const NO_DATA: MetricData = MetricData::None;
        // Filled in spec order, one entry per metric (empty where it could not be read).
        let mut statuses = Vec::with_capacity(a.metrics.len());
        let mut exact: Vec<Option<f64>> = Vec::with_capacity(a.metrics.len());
        let mut failures = MetricFailures::default();
        for (i, metric) in a.metrics.iter().enumerate() {
            let data = obs.metrics.get(i).map_or(&NO_DATA, |m| &m.reading);
            let resources = &obs.resource_metrics;
            match evaluate(metric, data, resources, scale, &a.namespace, ctx) {
                Ok(p) => {
                    statuses.push(p.status);
                    exact.push(Some(p.exact));
                    if self.explain {
                        self.record.proposals.push(ProposalRecord {
                            source: "metric".to_owned(),
                            name: metric.friendly_name().to_owned(),
                            replicas: Some(p.replicas),
                            current: Some(p.current),
                            target: Some(p.target),
                            ..Default::default()
                        });
                    }
                    candidates.push(Candidate {
                        replicas: p.replicas,
                        name: Cow::Borrowed(metric.display_name()),
                    });
                }
                Err(f) => {
                    statuses.push(MetricStatus::default());
                    exact.push(None);
                    self.warn(f.reason, f.message.clone());
                    self.record.proposals.push(ProposalRecord {
                        source: "metric".to_owned(),
                        name: metric.friendly_name().to_owned(),
                        error: Some(f.message.clone()),
                        ..Default::default()
                    });
                    failures.count += 1;
                    failures.first.get_or_insert((f.reason, f.message, f.error));
                }
            }
        }
        self.metric_statuses = Some(statuses);
        (exact, failures)
    }

    /// The cron proposal: the largest active `targetReplicas`, exactly (no tolerance); with
    /// no cron active, the current count when cron is the only source, else nothing.
    fn cron(&mut self, a: &Autoscaler, scale: &Scale, candidates: &mut Vec<Candidate<'_>>) {
        let Some(crons) = &a.crons else {
            conditions::remove(&mut self.status.conditions, CRON_ACTIVE);
            return;
        };
        let state = crons.evaluate(self.time);
        let cron_only = a.metrics.is_empty();
        let proposal = cron_proposal(&state, scale.spec_replicas, cron_only);
        let message = state.to_string();
        let names: Vec<&str> = state.active.iter().map(|c| c.name.as_str()).collect();
        let name = if names.is_empty() {
            "cron (no window open)".to_owned()
        } else {
            format!("cron {}", names.join(", "))
        };
        self.record.proposals.push(ProposalRecord {
            source: "cron".to_owned(),
            name: name.clone(),
            replicas: proposal,
            target: state.target.map(|t| t.to_string()),
            detail: Some(message.clone()),
            ..Default::default()
        });
        if let Some(n) = proposal {
            candidates.push(Candidate {
                replicas: n,
                name: Cow::Owned(name),
            });
        }
        let (open, reason) = if state.active.is_empty() {
            (false, "NoWindowOpen")
        } else {
            (true, "WindowOpen")
        };
        self.set(CRON_ACTIVE, open, reason, &message);
    }

    /// Stabilization, rate limits and bounds (`normalizeDesiredReplicas[WithBehaviors]`).
    fn normalize(&mut self, a: &Autoscaler, current: i32, desired: i32, now: Timestamp) -> i32 {
        let h = &mut self.history;
        let n = normalize(
            &mut h.recommendations,
            &h.scale_up_events,
            &h.scale_down_events,
            NormalizeArgs {
                behavior: a.behavior.as_ref(),
                current,
                desired,
                min_replicas: a.active_min_replicas(),
                max_replicas: a.max_replicas,
                legacy_window_seconds: a.settings.downscale_stabilization_seconds,
                legacy_limit: a.settings.legacy_scale_up_limit,
                // Where learned headroom guards the scale-down (see `scale_down_guarded`),
                // the window is not applied; the scale-down policies (rate limits) are.
                hold_scale_down: !self.scale_down_guarded,
                now,
            },
        );
        self.set(
            ABLE_TO_SCALE,
            true,
            n.stabilization.reason(),
            n.stabilization.message(),
        );
        if n.stabilized != desired {
            self.limit(
                "stabilization",
                desired,
                n.stabilized,
                n.stabilization.reason(),
                n.stabilization.message(),
            );
        }
        self.set(
            SCALING_LIMITED,
            n.replicas != n.stabilized,
            n.limit.reason(),
            n.limit.message(),
        );
        if n.replicas != n.stabilized {
            let stage = match n.limit {
                LimitReason::ScaleUpLimit | LimitReason::ScaleDownLimit => "policy",
                _ => "bounds",
            };
            self.limit(
                stage,
                n.stabilized,
                n.replicas,
                n.limit.reason(),
                n.limit.message(),
            );
        }
        n.replicas
    }

    /// One line saying what was decided and why. Built by hand, not with `format!`: it runs
    /// on every decision.
    fn summary(&self, a: &Autoscaler) -> String {
        let mut buf = itoa::Buffer::new();
        let mut t = String::with_capacity(96);
        match (a.strategy, a.specific_replicas) {
            (ScaleStrategy::Auto, _) => {}
            (ScaleStrategy::Preview, Some(n)) => {
                t.push_str("preview, holding specificReplicas ");
                t.push_str(buf.format(n));
                t.push_str("; would ");
            }
            (ScaleStrategy::Preview, None) => t.push_str("preview, not applied; would "),
        }
        let last_limit = self.record.limits.last();
        if self.rescale {
            t.push_str("scale ");
            t.push_str(buf.format(self.current_replicas));
            t.push_str(" -> ");
            t.push_str(buf.format(self.desired_replicas));
            t.push_str(": ");
            t.push_str(&self.rescale_reason);
            if let Some(l) = last_limit {
                for part in ["; limited by ", &l.reason, " (", &l.message, ")"] {
                    t.push_str(part);
                }
            }
        } else {
            t.push_str("hold at ");
            t.push_str(buf.format(self.current_replicas));
            match (last_limit, self.record.recommendation) {
                (Some(l), Some(r)) => {
                    t.push_str(": recommendation ");
                    t.push_str(buf.format(r));
                    for part in [", ", &l.message, " (", &l.reason, ")"] {
                        t.push_str(part);
                    }
                }
                (_, Some(r)) if r == self.current_replicas => {
                    t.push_str(": the sources recommend the current size")
                }
                _ => {}
            }
        }
        t
    }

    /// Completes the reconcile once the shell has acted on `scale_to`.
    pub fn finish(mut self, autoscaler: &Autoscaler, outcome: ScaleOutcome) -> Reconciled {
        let scaled_at = match (self.scale_to, &outcome) {
            (Some(to), ScaleOutcome::Failed(err)) => {
                self.rescale_failed(autoscaler, to, err);
                None
            }
            (Some(to), ScaleOutcome::Applied { at }) => {
                self.rescaled(autoscaler, to, *at);
                Some(*at)
            }
            _ => None,
        };
        self.explain_preview_hold(autoscaler);
        self.set_ready();
        self.into_reconciled(autoscaler, scaled_at)
    }

    fn rescale_failed(&mut self, autoscaler: &Autoscaler, to: i32, err: &str) {
        self.events.push(Event {
            type_: EventType::Warning,
            reason: "FailedRescale".to_owned(),
            message: format!(
                "New size: {to}; reason: {}; error: {err}",
                self.rescale_reason_or_preview(autoscaler)
            ),
        });
        self.set_parts(
            ABLE_TO_SCALE,
            false,
            "FailedUpdateScale",
            &[
                "the HPA controller was unable to update the target scale: ",
                err,
            ],
        );
        self.error = Some(format!(
            "failed to rescale {}: {err}",
            autoscaler.target_reference()
        ));
        self.scope = StatusScope::CurrentOnly;
        let current = self.current_replicas;
        self.record.summary = format!("failed to scale {current} -> {to}: {err}");
    }

    fn rescaled(&mut self, autoscaler: &Autoscaler, to: i32, at: Timestamp) {
        self.set_parts(
            ABLE_TO_SCALE,
            true,
            "SucceededRescale",
            &[
                "the HPA controller was able to update the target scale to ",
                &to.to_string(),
            ],
        );
        self.events.push(Event {
            type_: EventType::Normal,
            reason: "SuccessfulRescale".to_owned(),
            message: format!(
                "New size: {to}; reason: {}",
                self.rescale_reason_or_preview(autoscaler)
            ),
        });
        self.mark_scaled_to_zero(autoscaler, to);
        // Preview's writes (specificReplicas) are not the decision's: no rate limit counts them.
        if autoscaler.strategy == ScaleStrategy::Auto {
            let h = &mut self.history;
            record_rescale(
                &mut h.scale_up_events,
                &mut h.scale_down_events,
                autoscaler.behavior.as_ref(),
                self.current_replicas,
                to,
                at,
            );
        }
    }

    /// Kubernetes 1.37 says on every rescale whether it took the target to zero itself (what
    /// lets it scale back from zero later); earlier releases have no such condition.
    fn mark_scaled_to_zero(&mut self, autoscaler: &Autoscaler, to: i32) {
        let kubernetes = autoscaler.settings.kubernetes;
        if !kubernetes.scale_to_zero() {
            if kubernetes.clears_scaled_to_zero() {
                conditions::remove(&mut self.status.conditions, conditions::SCALED_TO_ZERO);
            }
            return;
        }
        let to_zero = self.current_replicas > 0
            && to == 0
            && autoscaler.min_replicas == 0
            && autoscaler.sees_load_without_pods();
        if to_zero {
            self.set(
                conditions::SCALED_TO_ZERO,
                true,
                "ScaledToZero",
                "the HPA controller scaled the workload to zero",
            );
        } else {
            self.set(
                conditions::SCALED_TO_ZERO,
                false,
                "NotScaledToZero",
                "the HPA controller did not scale the workload to zero",
            );
        }
    }

    /// The reconcile's result. How much of status this decision may change depends on how
    /// far it got (`scope`), as in Kubernetes.
    fn into_reconciled(
        mut self,
        autoscaler: &Autoscaler,
        scaled_at: Option<Timestamp>,
    ) -> Reconciled {
        let current = self.current_replicas;
        let mut status = self.status;
        match self.scope {
            StatusScope::ConditionsOnly => {}
            StatusScope::CurrentOnly => {
                // Kubernetes keeps the previous desired count here; from 1.29 the metrics are
                // this reconcile's (failed ones empty), before that the previous ones.
                status.current_replicas = Some(current);
                if autoscaler
                    .settings
                    .kubernetes
                    .metrics_in_status_on_failure()
                {
                    status.current_metrics = self.metric_statuses.take().unwrap_or_default();
                    status.targets = self.explain.then(|| {
                        targets::summary(&targets::metric_targets(
                            &autoscaler.metrics,
                            &status.current_metrics,
                        ))
                    });
                }
            }
            StatusScope::Full => {
                status.current_replicas = Some(current);
                // Kubernetes reports the current count as desired when it does not rescale;
                // Preview reports what Auto would do.
                let desired = match autoscaler.strategy {
                    ScaleStrategy::Auto if scaled_at.is_none() => current,
                    ScaleStrategy::Auto | ScaleStrategy::Preview => self.desired_replicas,
                };
                status.desired_replicas = Some(desired);
                status.current_metrics = self.metric_statuses.take().unwrap_or_default();
                status.targets = self.explain.then(|| {
                    targets::summary(&targets::metric_targets(
                        &autoscaler.metrics,
                        &status.current_metrics,
                    ))
                });
                if scaled_at.is_some() {
                    status.last_scale_time = scaled_at;
                }
            }
        }
        status.expect_replicas = status.desired_replicas;
        status.last_decision = Some(self.record);
        Reconciled {
            status,
            events: self.events,
            history: self.history,
            error: self.error,
        }
    }

    /// Kubernetes' "recommended size matches current size" (nothing held the recommendation
    /// back) reads as "nothing to do" when Preview leaves the workload at another size: say
    /// what Preview holds instead.
    fn explain_preview_hold(&mut self, autoscaler: &Autoscaler) {
        let current = self.current_replicas;
        let desired = self.desired_replicas;
        if autoscaler.strategy != ScaleStrategy::Preview || desired == current {
            return;
        }
        let unheld = conditions::get(&self.status.conditions, ABLE_TO_SCALE)
            .is_some_and(|c| c.status == ConditionStatus::True && c.reason == "ReadyForNewScale");
        if unheld {
            self.set_parts(
                ABLE_TO_SCALE,
                true,
                "ReadyForNewScale",
                &[
                    "recommended size ",
                    &desired.to_string(),
                    " differs from current size ",
                    &current.to_string(),
                    "; the Preview strategy does not apply it",
                ],
            );
        }
    }

    fn rescale_reason_or_preview(&self, a: &Autoscaler) -> String {
        match a.strategy {
            ScaleStrategy::Auto => self.rescale_reason.clone(),
            ScaleStrategy::Preview => "Preview strategy holds specificReplicas".to_owned(),
        }
    }

    /// Foresight's `Ready` condition: false, with the failing condition's reason, when the
    /// autoscaler could not read its target, its metrics, or write the target.
    fn set_ready(&mut self) {
        let failing = [ABLE_TO_SCALE, SCALING_ACTIVE]
            .iter()
            .filter_map(|t| conditions::get(&self.status.conditions, t))
            .find(|c| {
                c.status == ConditionStatus::False
                    && !matches!(c.reason.as_str(), "ScalingDisabled" | "ScaledToIdle")
            })
            .or_else(|| {
                conditions::get(&self.status.conditions, FALLBACK_ACTIVE)
                    .filter(|c| c.status == ConditionStatus::True)
            })
            .map(|c| (c.reason.clone(), c.message.clone()));
        match failing {
            Some((reason, message)) => self.set(READY, false, &reason, &message),
            None => self.set(
                READY,
                true,
                "DecisionMade",
                "the autoscaler decided from its sources",
            ),
        }
    }
}

/// What an object whose spec cannot be compiled gets instead of a decision: `ScalingActive`
/// and `Ready` false with reason `InvalidSpec` and `message` (the field errors), the rest of
/// `prior` kept, and one warning event saying the same. The workload is not touched.
pub fn invalid_spec(
    prior: &EffectiveHorizontalPodAutoscalerStatus,
    message: &str,
    now: Timestamp,
) -> (EffectiveHorizontalPodAutoscalerStatus, Event) {
    const REASON: &str = "InvalidSpec";
    let mut status = prior.clone();
    for type_ in [conditions::SCALING_ACTIVE, conditions::READY] {
        conditions::set(
            &mut status.conditions,
            type_,
            ConditionStatus::False,
            REASON,
            message,
            now,
        );
    }
    let event = Event {
        type_: EventType::Warning,
        reason: REASON.to_owned(),
        message: message.to_owned(),
    };
    (status, event)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invalid_spec_turns_scaling_and_ready_off_and_keeps_the_rest() {
        let now = Timestamp::from_second(1_000).unwrap();
        let prior = EffectiveHorizontalPodAutoscalerStatus {
            desired_replicas: Some(7),
            ..Default::default()
        };
        let (status, event) = invalid_spec(&prior, "spec.crons[0].start: Invalid value", now);
        assert_eq!(
            status.desired_replicas,
            Some(7),
            "the last decision is kept"
        );
        for type_ in [conditions::SCALING_ACTIVE, conditions::READY] {
            let c = conditions::get(&status.conditions, type_).expect(type_);
            assert_eq!(
                (c.status, c.reason.as_str(), c.message.as_str()),
                (
                    ConditionStatus::False,
                    "InvalidSpec",
                    "spec.crons[0].start: Invalid value"
                )
            );
        }
        assert_eq!(event.type_, EventType::Warning);
        assert_eq!(event.reason, "InvalidSpec");
    }
}

//! The EffectiveHorizontalPodAutoscaler status: what the autoscaler saw, decided, and why,
//! plus the history that makes stabilization and rate limits survive a controller restart.

use jiff::Timestamp;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::hpa::MetricStatus;

/// Observed state of an EffectiveHorizontalPodAutoscaler.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::schema::drop_defaults)]
pub struct EffectiveHorizontalPodAutoscalerStatus {
    /// The generation of the spec this status was computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Replicas of the target when last observed (`scale.spec.replicas`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_replicas: Option<i32>,
    /// Replicas the autoscaler wants; what `Auto` applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desired_replicas: Option<i32>,
    /// Same as `desiredReplicas`; Crane's name, kept for compatibility.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect_replicas: Option<i32>,
    /// When the autoscaler last changed the target's replicas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub last_scale_time: Option<Timestamp>,
    /// The last observed value of each metric, in spec order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = crate::spec::MAX_METRICS))]
    pub current_metrics: Vec<MetricStatus>,
    /// Each metric's current value against its target, as `kubectl get hpa` shows them
    /// (`cpu: 45%/60%, rps: 120/100`); the TARGETS column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<String>,
    /// Ready, AbleToScale, ScalingActive, ScalingLimited, PredictionReady, CronActive, ...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The explanation of the last decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_decision: Option<DecisionRecord>,
    /// How prediction proposes, and how good its recent forecasts were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prediction: Option<PredictionStatus>,
    /// With `spec.objective`: the operating point the latest replay of the recent history
    /// chose, and its replayed figures. Absent until the first replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operating_point: Option<OperatingPointStatus>,
    /// Recommendations and scale events inside the longest window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<ScalingHistory>,
    /// The failure clock of `spec.fallback`: kept here so that a restart or a failover does
    /// not reset it. Absent while every metric reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<FallbackStatus>,
    /// With `spec.idle`: when a metric was last above its activation value (or a cron window
    /// held more than the idle size); the cooldown runs from here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub last_active_time: Option<Timestamp>,
}

/// A run of syncs on which a metric failed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FallbackStatus {
    /// The first sync of the run.
    #[schemars(with = "String")]
    pub failing_since: Timestamp,
    /// Syncs in the run, this one included.
    pub failed_syncs: i32,
    /// Whether the fallback size is applied.
    #[serde(default)]
    pub active: bool,
}

/// How prediction proposed in the last decision, and how its forecasts fared.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PredictionStatus {
    /// `LeadTime` or `Window`.
    pub horizon: String,
    /// How far ahead the proposal looked, seconds: the start-up time plus two sync periods
    /// (`LeadTime`), or `predictionWindowSeconds` (`Window`).
    pub horizon_seconds: i64,
    /// The start-up time used, seconds.
    pub startup_seconds: i64,
    /// Whether the start-up time was measured from the target's pods (else the spec's or 60).
    #[serde(default)]
    pub startup_measured: bool,
    /// One entry per predicted metric.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<ForecastAccuracyStatus>,
}

/// One predicted metric's forecast accuracy over `spec.prediction.accuracy.windowSeconds`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ForecastAccuracyStatus {
    /// The metric (`resource.cpu`, `pods.<name>`, ...).
    pub metric: String,
    /// Forecast values compared with observations.
    pub samples: i64,
    /// Σ|forecast − observed| / Σ observed, percent: what demotion looks at.
    pub error_percent: i64,
    /// Mean |forecast − observed| / observed, percent (MAPE).
    pub mape_percent: i64,
    /// Share of samples the forecast was below the observation, percent.
    pub under_forecast_percent: i64,
    /// Mean error of the forecast peak against the observed peak, percent.
    pub peak_error_percent: i64,
    /// How the `LeadTime` proposal corrected the forecast for its recent level error,
    /// percent (−20: forecasts ran 20% high and were discounted by that).
    pub correction_percent: i64,
    /// Whether prediction is demoted for this metric (`ForecastInaccurate`).
    #[serde(default)]
    pub demoted: bool,
    /// The latest self-evaluation: the recent history replayed with and without prediction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evaluation: Option<EvaluationStatus>,
}

/// What replaying the recent history with and without prediction showed (self-evaluation).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EvaluationStatus {
    /// When the replay was made.
    #[schemars(with = "String")]
    pub evaluated_at: Timestamp,
    /// Seconds of history replayed.
    pub replayed_seconds: i64,
    /// Whether prediction is kept: it was cheaper at equal shortfall.
    pub kept: bool,
    /// Its saving at equal shortfall, percent of the reactive cost (negative: a loss).
    pub saving_percent: i64,
    /// With prediction: seconds under-provisioned over the replay.
    pub predictive_under_seconds: i64,
    /// With prediction: replica-hours over the replay.
    pub predictive_replica_hours: i64,
    /// Without prediction, at a target exactly as short: replica-hours over the replay.
    pub reactive_replica_hours: i64,
}

/// The operating point `spec.objective` runs at, chosen by replaying the recent history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatingPointStatus {
    /// When the replay was made.
    #[schemars(with = "String")]
    pub chosen_at: Timestamp,
    /// Seconds of history replayed.
    pub replayed_seconds: i64,
    /// The first Utilization target it runs at, percent (absent without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_utilization: Option<i32>,
    /// The headroom risk budget it runs at, percent (absent without headroom).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk_budget_percent: Option<String>,
    /// Where the forecast carries the headroom at this point: the share of the lead stretches,
    /// percent, its margin may fall short in (absent elsewhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forecast_budget_percent: Option<String>,
    /// Whether prediction proposes at this point.
    pub prediction: bool,
    /// Whether its replay met the objective (when no candidate did, the safest runs).
    pub meets_objective: bool,
    /// Its replay: seconds under-provisioned.
    pub under_seconds: i64,
    /// Its replay: replica-hours.
    pub replica_hours: i64,
    /// The spec without prediction at its own targets, replayed: seconds under-provisioned.
    pub reactive_under_seconds: i64,
    /// ... and replica-hours.
    pub reactive_replica_hours: i64,
    /// The choice in one sentence.
    pub description: String,
    /// Where the point is a schedule over the day: the knobs of each block of hours (UTC), in
    /// order from midnight, which the decisions run at in place of the knobs above (the
    /// point the schedule was composed from). Absent: the knobs above all day.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<OperatingPointBlock>,
    /// Seconds under-provisioned carried into this choice from the days since earlier points
    /// were chosen: what the objective allowed on each of them less what the point in force
    /// was short (positive: unspent), added to this replay's allowance.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub carried_under_seconds: i64,
}

// Nothing carried is the common case, and status stays as it was before the carry existed.
fn is_zero(v: &i64) -> bool {
    *v == 0
}

/// The knobs of one block of hours of an operating point's schedule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatingPointBlock {
    /// The block's first hour of the day, UTC (0-23); it lasts until the next block's.
    pub from_hour: i32,
    /// The first Utilization target in the block, percent (absent without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_utilization: Option<i32>,
    /// The headroom risk budget in the block, percent (absent without headroom).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk_budget_percent: Option<String>,
    /// Where the forecast carries the headroom in the block: the share of the lead
    /// stretches, percent, its margin may fall short in (absent elsewhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forecast_budget_percent: Option<String>,
    /// Whether prediction proposes in the block.
    pub prediction: bool,
}

/// `True`, `False` or `Unknown`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ConditionStatus {
    /// The condition holds.
    True,
    /// The condition does not hold.
    False,
    /// Not known.
    #[default]
    Unknown,
}

impl ConditionStatus {
    /// `True` for `true`, `False` for `false`.
    pub fn from_bool(b: bool) -> Self {
        if b {
            ConditionStatus::True
        } else {
            ConditionStatus::False
        }
    }
}

/// One status condition.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// The condition type, e.g. `AbleToScale`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Whether it holds.
    pub status: ConditionStatus,
    /// When `status` last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub last_transition_time: Option<Timestamp>,
    /// A CamelCase reason.
    #[serde(default)]
    pub reason: String,
    /// A human-readable message.
    #[serde(default)]
    pub message: String,
}

/// A recorded recommendation (the replica count metrics asked for, before stabilization).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Recommendation {
    /// Recommended replicas.
    pub replicas: i32,
    /// When.
    #[schemars(with = "String")]
    pub timestamp: Timestamp,
}

/// A recorded change of the target's replicas, counted against rate-limit policies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScaleEvent {
    /// Size of the change (always positive; the list says the direction).
    pub replica_change: i32,
    /// When.
    #[schemars(with = "String")]
    pub timestamp: Timestamp,
    /// Older than the direction's longest policy period when last checked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub outdated: bool,
}

/// The memory behind stabilization windows and rate limits. Kubernetes keeps it in the
/// controller's memory and loses it on restart; Foresight keeps it in status.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScalingHistory {
    /// Recommendations, in the order Kubernetes keeps them.
    #[serde(default)]
    pub recommendations: Vec<Recommendation>,
    /// Scale-up events.
    #[serde(default)]
    pub scale_up_events: Vec<ScaleEvent>,
    /// Scale-down events.
    #[serde(default)]
    pub scale_down_events: Vec<ScaleEvent>,
}

/// One source's proposal in a decision.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProposalRecord {
    /// `metric`, `prediction` or `cron`.
    pub source: String,
    /// What proposed, e.g. `cpu resource utilization (percentage of request)`.
    pub name: String,
    /// The proposed replicas, when the source gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// The observed (or forecast) value, formatted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<String>,
    /// The target, formatted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Why the source gave no proposal (a failed metric, a predictor that is not ready, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Anything else worth knowing (tolerance applied, forecast peak time, active crons).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// One limit that shaped the decision, in the order applied.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LimitRecord {
    /// The stage: `failedMetrics`, `stabilization`, `policy`, `bounds`, `strategy`.
    pub stage: String,
    /// Replicas before the stage.
    pub from: i32,
    /// Replicas after it.
    pub to: i32,
    /// The reason, in Kubernetes' words where it has one (e.g. `ScaleUpLimit`).
    pub reason: String,
    /// Human-readable detail.
    #[serde(default)]
    pub message: String,
}

/// The explanation of one decision: every proposal and every limit that shaped the result.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DecisionRecord {
    /// When the decision was made.
    #[schemars(with = "String")]
    pub time: Timestamp,
    /// Replicas of the target at that time.
    pub current_replicas: i32,
    /// Every source's proposal.
    #[serde(default)]
    pub proposals: Vec<ProposalRecord>,
    /// The largest proposal, before behavior and bounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recommendation: Option<i32>,
    /// The stages that changed the count.
    #[serde(default)]
    pub limits: Vec<LimitRecord>,
    /// The final desired replicas.
    pub desired_replicas: i32,
    /// Whether the workload was (or, in Preview, would have been) rescaled.
    pub rescale: bool,
    /// `Auto` or `Preview`.
    pub strategy: String,
    /// One line saying what happened and why.
    pub summary: String,
}

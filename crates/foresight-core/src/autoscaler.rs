//! An autoscaler ready to decide: its spec defaulted, validated and compiled once (quantities
//! parsed, behavior resolved), so that each decision does no parsing.

use foresight_api::fallback::FallbackBehavior;
use foresight_api::hpa::{
    CrossVersionObjectReference, FormulaMetricSource, LabelSelector, MetricIdentifier, MetricSpec,
    MetricTarget,
};
use foresight_api::spec::{EffectiveHorizontalPodAutoscalerSpec, ScaleStrategy};
use foresight_api::validation::FieldError;
use jiff::SignedDuration;
use std::collections::BTreeMap;

use crate::behavior::{Behavior, LegacyScaleUpLimit};
use crate::cron::CronSet;
use crate::formula::{CompiledFormula, FormulaInput, InputSource};
use crate::pods::Readiness;
use crate::prediction::PredictorConfig;
use crate::replicas::Tolerance;
use crate::resources::ResourceName;
use crate::version::KubernetesVersion;

/// Cluster-wide defaults (Kubernetes' controller flags); each object may override them.
#[derive(Clone, Debug, PartialEq)]
pub struct ControllerConfig {
    /// `--horizontal-pod-autoscaler-tolerance`.
    pub tolerance: f64,
    /// `--horizontal-pod-autoscaler-cpu-initialization-period`, seconds.
    pub cpu_initialization_period_seconds: i64,
    /// `--horizontal-pod-autoscaler-initial-readiness-delay`, seconds.
    pub initial_readiness_delay_seconds: i64,
    /// `--horizontal-pod-autoscaler-downscale-stabilization`, seconds.
    pub downscale_stabilization_seconds: i64,
    /// `--horizontal-pod-autoscaler-sync-period`, seconds.
    pub sync_period_seconds: i64,
    /// The legacy path's scale-up limit.
    pub legacy_scale_up_limit: LegacyScaleUpLimit,
    /// The zone `timezone: Local` means (the controller's own zone).
    pub local_time_zone: jiff::tz::TimeZone,
    /// The Kubernetes release whose HPA the decision reproduces.
    pub kubernetes: KubernetesVersion,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        ControllerConfig {
            tolerance: 0.1,
            cpu_initialization_period_seconds: 300,
            initial_readiness_delay_seconds: 30,
            downscale_stabilization_seconds: 300,
            sync_period_seconds: 15,
            legacy_scale_up_limit: LegacyScaleUpLimit::default(),
            local_time_zone: jiff::tz::TimeZone::UTC,
            kubernetes: KubernetesVersion::default(),
        }
    }
}

/// A metric's target, with quantities parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Percent of the pods' requests.
    Utilization(i32),
    /// Per pod, thousandths.
    AverageValue(i64),
    /// Total, thousandths.
    Value(i64),
    /// Neither set (Kubernetes reports this when it evaluates the metric).
    Unset,
}

/// What a metric measures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MetricSource {
    /// A resource of the pods (`container` set for ContainerResource).
    Resource {
        /// `cpu`, `memory`, ...
        resource: ResourceName,
        /// The container, for ContainerResource.
        container: Option<String>,
    },
    /// A per-pod custom metric.
    Pods {
        /// The metric.
        metric: MetricIdentifier,
    },
    /// A metric of one object.
    Object {
        /// The metric.
        metric: MetricIdentifier,
        /// The object.
        described_object: CrossVersionObjectReference,
    },
    /// An external metric.
    External {
        /// The metric.
        metric: MetricIdentifier,
    },
    /// A PromQL query.
    Prometheus {
        /// The metric's name.
        name: String,
        /// The instant query.
        query: String,
        /// The range query for prediction history.
        history_query: String,
    },
    /// A formula over other metrics' values (KEDA's `scalingModifiers`).
    Formula {
        /// The metric's name.
        name: String,
        /// The formula and its inputs.
        formula: crate::formula::CompiledFormula,
    },
    /// A type this version does not know.
    Unknown {
        /// The type as written.
        type_: String,
    },
}

/// One metric of the spec, compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metric {
    /// What it measures.
    pub source: MetricSource,
    /// Its target.
    pub target: Target,
    /// With `spec.idle`, the value (thousandths) above which it wakes the target: its
    /// `activation`, else 0. `None` for metrics that cannot be read without pods.
    pub activation: Option<i64>,
    /// Kubernetes' name for it (see [`Metric::display_name`]), computed once.
    name: String,
    /// The readable name (see [`Metric::friendly_name`]), computed once.
    friendly: String,
}

/// Reads a metric spec's quantities, noting each that does not convert with its path.
struct Quantities<'a> {
    path: &'a str,
    errors: &'a mut Vec<FieldError>,
}

impl Quantities<'_> {
    /// The quantity at `field` (below the metric) in thousandths, if present and convertible.
    fn milli(&mut self, q: &Option<foresight_api::Quantity>, field: &str) -> Option<i64> {
        let q = q.as_ref()?;
        match q.milli_value() {
            Ok(v) => Some(v),
            Err(e) => {
                let path = format!("{}.{field}", self.path);
                self.errors
                    .push(FieldError::invalid(path, q, e.to_string()));
                None
            }
        }
    }

    /// A Resource or ContainerResource target: Kubernetes checks AverageValue before
    /// Utilization.
    fn resource_target(&mut self, t: &MetricTarget, at: &str) -> Target {
        match (
            self.milli(&t.average_value, &format!("{at}.averageValue")),
            t.average_utilization,
        ) {
            (Some(v), _) => Target::AverageValue(v),
            (None, Some(u)) => Target::Utilization(u),
            (None, None) => Target::Unset,
        }
    }

    /// An External or Prometheus target: AverageValue before Value, as for External in
    /// Kubernetes.
    fn value_target(&mut self, t: &MetricTarget, at: &str) -> Target {
        let average = self.milli(&t.average_value, &format!("{at}.averageValue"));
        let value = self.milli(&t.value, &format!("{at}.value"));
        match (average, value) {
            (Some(v), _) => Target::AverageValue(v),
            (None, Some(v)) => Target::Value(v),
            (None, None) => Target::Unset,
        }
    }

    /// An Object target goes by its type.
    fn object_target(&mut self, t: &MetricTarget, at: &str) -> Target {
        match t.type_.as_str() {
            "Value" => self
                .milli(&t.value, &format!("{at}.value"))
                .map(Target::Value),
            "AverageValue" => self
                .milli(&t.average_value, &format!("{at}.averageValue"))
                .map(Target::AverageValue),
            _ => None,
        }
        .unwrap_or(Target::Unset)
    }

    /// A formula metric's program and inputs; a formula that cannot be read is a problem at
    /// `formula.formula` (validation reports it first, with the same words).
    fn formula(&mut self, f: &FormulaMetricSource) -> CompiledFormula {
        let program = foresight_api::formula::parse(&f.formula);
        if let Err(e) = &program {
            self.errors.push(FieldError::invalid(
                format!("{}.formula.formula", self.path),
                &f.formula,
                format!("cannot be read: {e}"),
            ));
        }
        let inputs = f
            .inputs
            .iter()
            .map(|i| FormulaInput {
                name: i.name.clone(),
                source: match (&i.external, &i.prometheus) {
                    (Some(e), _) if i.type_ == "External" => InputSource::External {
                        metric: e.metric.clone(),
                    },
                    (_, Some(p)) => InputSource::Prometheus {
                        query: p.query.clone(),
                    },
                    (Some(e), None) => InputSource::External {
                        metric: e.metric.clone(),
                    },
                    (None, None) => InputSource::Prometheus {
                        query: String::new(),
                    },
                },
            })
            .collect();
        CompiledFormula { program, inputs }
    }

    fn source(&mut self, spec: &MetricSpec) -> Metric {
        let (source, target) = match spec.type_.as_str() {
            "Resource" => spec.resource.as_ref().map(|r| {
                let resource = ResourceName::from(r.name.as_str());
                let target = self.resource_target(&r.target, "resource.target");
                (
                    MetricSource::Resource {
                        resource,
                        container: None,
                    },
                    target,
                )
            }),
            "ContainerResource" => spec.container_resource.as_ref().map(|c| {
                let resource = ResourceName::from(c.name.as_str());
                let container = Some(c.container.clone());
                let target = self.resource_target(&c.target, "containerResource.target");
                (
                    MetricSource::Resource {
                        resource,
                        container,
                    },
                    target,
                )
            }),
            "Pods" => spec.pods.as_ref().map(|p| {
                let target = self
                    .milli(&p.target.average_value, "pods.target.averageValue")
                    .map_or(Target::Unset, Target::AverageValue);
                (
                    MetricSource::Pods {
                        metric: p.metric.clone(),
                    },
                    target,
                )
            }),
            "Object" => spec.object.as_ref().map(|o| {
                let source = MetricSource::Object {
                    metric: o.metric.clone(),
                    described_object: o.described_object.clone(),
                };
                (source, self.object_target(&o.target, "object.target"))
            }),
            "External" => spec.external.as_ref().map(|e| {
                let target = self.value_target(&e.target, "external.target");
                (
                    MetricSource::External {
                        metric: e.metric.clone(),
                    },
                    target,
                )
            }),
            "Prometheus" => spec.prometheus.as_ref().map(|p| {
                let source = MetricSource::Prometheus {
                    name: p.name.clone(),
                    query: p.query.clone(),
                    history_query: p.history_query.clone().unwrap_or_else(|| p.query.clone()),
                };
                (source, self.value_target(&p.target, "prometheus.target"))
            }),
            "Formula" => spec.formula.as_ref().map(|f| {
                let source = MetricSource::Formula {
                    name: f.name.clone(),
                    formula: self.formula(f),
                };
                (source, self.value_target(&f.target, "formula.target"))
            }),
            _ => None,
        }
        .unwrap_or_else(|| {
            let type_ = spec.type_.clone();
            (MetricSource::Unknown { type_ }, Target::Unset)
        });
        Metric::new(source, target)
    }
}

impl Metric {
    /// Compiles a metric spec. A quantity that does not convert leaves the target unset,
    /// which the decision reports as Kubernetes does; [`Metric::compile_checked`] rejects it.
    pub fn compile(spec: &MetricSpec) -> Metric {
        Self::compile_checked(spec, "", &mut Vec::new())
    }

    /// Compiles the metric at `path` (`spec.metrics[i]`), adding to `errors` every quantity
    /// that does not convert: the one place a metric's quantities are read, so what the
    /// validator accepts is exactly what compiles.
    pub fn compile_checked(spec: &MetricSpec, path: &str, errors: &mut Vec<FieldError>) -> Metric {
        let mut read = Quantities { path, errors };
        let mut m = read.source(spec);
        m.activation = foresight_api::idle::WAKING_METRIC_TYPES
            .contains(&spec.type_.as_str())
            .then(|| read.milli(&spec.activation, "activation").unwrap_or(0));
        m.name = m.describe_kubernetes();
        m.friendly = m.describe_readably();
        m
    }

    fn new(source: MetricSource, target: Target) -> Metric {
        Metric {
            source,
            target,
            activation: None,
            name: String::new(),
            friendly: String::new(),
        }
    }

    /// The name Kubernetes uses for this metric in reasons and conditions.
    pub fn display_name(&self) -> &str {
        &self.name
    }

    /// A readable name for explanations: `cpu utilization`, `pods metric qps`,
    /// `external metric queue{queue=orders}`.
    pub fn friendly_name(&self) -> &str {
        &self.friendly
    }

    fn describe_kubernetes(&self) -> String {
        match (&self.source, self.target) {
            (
                MetricSource::Resource {
                    resource,
                    container: None,
                },
                Target::Utilization(_),
            ) => {
                format!("{resource} resource utilization (percentage of request)")
            }
            (
                MetricSource::Resource {
                    resource,
                    container: Some(_),
                },
                Target::Utilization(_),
            ) => {
                format!("{resource} container resource utilization (percentage of request)")
            }
            (MetricSource::Resource { resource, .. }, _) => format!("{resource} resource"),
            (MetricSource::Pods { metric }, _) => format!("pods metric {}", metric.name),
            (
                MetricSource::Object {
                    metric,
                    described_object,
                },
                Target::Value(_),
            ) => {
                format!("{} metric {}", described_object.kind, metric.name)
            }
            // Kubernetes really says "external" for Object metrics with an AverageValue target.
            (MetricSource::Object { metric, .. } | MetricSource::External { metric }, _) => {
                format!(
                    "external metric {}({})",
                    metric.name,
                    LabelSelector::go_format(metric.selector.as_ref())
                )
            }
            (MetricSource::Prometheus { name, .. }, _) => format!("prometheus metric {name}"),
            (MetricSource::Formula { name, .. }, _) => format!("formula metric {name}"),
            (MetricSource::Unknown { type_ }, _) => format!("{type_} metric"),
        }
    }

    fn describe_readably(&self) -> String {
        let selector =
            |id: &MetricIdentifier| match id.selector.as_ref().map(LabelSelector::to_query) {
                Some(q) if !q.is_empty() => format!("{}{{{q}}}", id.name),
                _ => id.name.clone(),
            };
        match (&self.source, self.target) {
            (
                MetricSource::Resource {
                    resource,
                    container: None,
                },
                Target::Utilization(_),
            ) => format!("{resource} utilization"),
            (
                MetricSource::Resource {
                    resource,
                    container: Some(c),
                },
                Target::Utilization(_),
            ) => {
                format!("{resource} utilization of container {c}")
            }
            (
                MetricSource::Resource {
                    resource,
                    container: None,
                },
                _,
            ) => format!("{resource} usage"),
            (
                MetricSource::Resource {
                    resource,
                    container: Some(c),
                },
                _,
            ) => format!("{resource} usage of container {c}"),
            (MetricSource::Pods { metric }, _) => format!("pods metric {}", selector(metric)),
            (
                MetricSource::Object {
                    metric,
                    described_object,
                },
                _,
            ) => {
                format!(
                    "{} metric {} of {}/{}",
                    described_object.kind,
                    selector(metric),
                    described_object.kind,
                    described_object.name
                )
            }
            (MetricSource::External { metric }, _) => {
                format!("external metric {}", selector(metric))
            }
            (MetricSource::Prometheus { name, .. }, _) => format!("prometheus metric {name}"),
            (MetricSource::Formula { name, formula }, _) => match &formula.program {
                Ok(f) => format!("formula metric {name} = {}", f.text()),
                Err(_) => format!("formula metric {name}"),
            },
            (MetricSource::Unknown { type_ }, _) => format!("{type_} metric"),
        }
    }

    /// The key prediction history is stored under: `resource.cpu`, `pods.<name>`, ...
    /// Every decision with prediction asks for it: joined in one allocation, without the
    /// `fmt` machinery.
    pub fn identifier(&self) -> String {
        self.identifier_parts().concat()
    }

    /// Whether [`Metric::identifier`] is `id`, without building it.
    pub fn has_identifier(&self, id: &str) -> bool {
        let parts = self.identifier_parts();
        if parts.iter().map(|p| p.len()).sum::<usize>() != id.len() {
            return false;
        }
        // Byte by byte: the parts are a few bytes long, shorter than a call to `memcmp`.
        let mut id = id.bytes();
        parts
            .iter()
            .flat_map(|p| p.bytes())
            .all(|b| id.next() == Some(b))
    }

    /// The pieces [`Metric::identifier`] joins.
    fn identifier_parts(&self) -> [&str; 4] {
        match &self.source {
            MetricSource::Resource {
                resource,
                container: None,
            } => ["resource.", resource.as_str(), "", ""],
            MetricSource::Resource {
                resource,
                container: Some(c),
            } => ["container-resource.", c, ".", resource.as_str()],
            MetricSource::Pods { metric } => ["pods.", &metric.name, "", ""],
            MetricSource::Object { metric, .. } => ["object.", &metric.name, "", ""],
            MetricSource::External { metric } => ["external.", &metric.name, "", ""],
            MetricSource::Prometheus { name, .. } => ["prometheus.", name, "", ""],
            MetricSource::Formula { name, .. } => ["formula.", name, "", ""],
            MetricSource::Unknown { type_ } => ["unknown.", type_, "", ""],
        }
    }
}

/// Which stretch of the forecast a proposal covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Horizon {
    /// Until capacity asked for now is ready and the next decision can act.
    LeadTime,
    /// The whole prediction window (Crane's behaviour).
    Window,
}

/// `spec.prediction`, compiled: how forecasts become proposals and when they are demoted.
#[derive(Clone, Debug, PartialEq)]
pub struct PredictionPolicy {
    /// `predictionWindowSeconds`: how far the forecast must reach (the `Window` horizon).
    pub window_seconds: i64,
    /// Which stretch of the forecast is scaled for.
    pub horizon: Horizon,
    /// The start-up time to assume; `None` measures it from the pods.
    pub startup_seconds: Option<i64>,
    /// How far back forecasts are compared with observations.
    pub accuracy_window_seconds: i64,
    /// Demote above this error (percent); 0 never demotes.
    pub max_error_percent: i64,
    /// The predictor and its settings (`predictionAlgorithm`), compiled.
    pub predictor: PredictorConfig,
    /// `historyQueries`: PromQL per metric identifier, overriding the defaults.
    pub history_queries: BTreeMap<String, String>,
    /// `headroom`: the quantile of the learned rise to hold capacity for (1 − the risk
    /// budget); `None` learns none.
    pub headroom_quantile: Option<f64>,
    /// `selfEvaluation`: prediction proposes only where a replay of the recent history shows
    /// it pays.
    pub self_evaluation: bool,
    /// Set only by an operating point (`spec.objective`'s tuner): the forecast carries the
    /// headroom. It proposes for the load seen plus the rise it foresees to its peak plus
    /// the margin its own past errors call for at this budget (a share: the `1 − budget`
    /// quantile, adjusted online), at the pods' full capacity, in place of learned headroom; the observed metrics keep proposing at the
    /// point's (hotter) target as a safety net. `None`: as written.
    pub forecast_error_budget: Option<f64>,
    /// Set only by an operating point with prediction (`spec.objective`'s tuner): where
    /// learned headroom proposes for every metric, the scale-down stabilization window is not
    /// applied. The headroom holds capacity for the rise any moment of this hour has shown
    /// over the lead stretch, at the point's risk budget: the re-rise the window guards
    /// against, sized from the workload's own history instead of held for a fixed time.
    pub headroom_guards_scale_down: bool,
}

impl PredictionPolicy {
    /// Start-up time assumed until a pod of the target has been seen becoming Ready.
    pub const DEFAULT_STARTUP_SECONDS: i64 = 60;
    /// Default of `accuracy.windowSeconds`.
    pub const DEFAULT_ACCURACY_WINDOW_SECONDS: i64 = 86_400;
    /// Default of `accuracy.maxErrorPercent`.
    pub const DEFAULT_MAX_ERROR_PERCENT: i64 = 50;
    /// Default of `predictionWindowSeconds`.
    pub const DEFAULT_WINDOW_SECONDS: i64 = 3600;
    /// Default of `headroom.riskBudgetPercent`.
    pub const DEFAULT_RISK_BUDGET_PERCENT: f64 = 1.0;

    /// `None` when the spec predicts nothing (no `predictionAlgorithm`); `Err` when its
    /// predictor settings cannot be used.
    fn compile(
        p: &foresight_api::prediction::PredictionSpec,
    ) -> Result<Option<PredictionPolicy>, String> {
        let Some(algorithm) = &p.prediction_algorithm else {
            return Ok(None);
        };
        let predictor = PredictorConfig::from_spec(algorithm)?;
        let accuracy = p.accuracy.clone().unwrap_or_default();
        Ok(Some(PredictionPolicy {
            window_seconds: p
                .prediction_window_seconds
                .map_or(Self::DEFAULT_WINDOW_SECONDS, i64::from),
            horizon: match p.horizon.as_deref() {
                Some("Window") => Horizon::Window,
                _ => Horizon::LeadTime,
            },
            startup_seconds: p.startup_seconds.map(i64::from),
            accuracy_window_seconds: accuracy
                .window_seconds
                .map_or(Self::DEFAULT_ACCURACY_WINDOW_SECONDS, i64::from),
            max_error_percent: accuracy
                .max_error_percent
                .map_or(Self::DEFAULT_MAX_ERROR_PERCENT, i64::from),
            predictor,
            history_queries: p.history_queries.clone().unwrap_or_default(),
            headroom_quantile: headroom_quantile(p.headroom.as_ref())?,
            self_evaluation: p.self_evaluation.unwrap_or(true),
            forecast_error_budget: None,
            headroom_guards_scale_down: false,
        }))
    }
}

/// The quantile learned headroom holds capacity for (1 − the risk budget), or `None` when
/// headroom is off; on, at the default budget, when the spec says nothing.
fn headroom_quantile(
    spec: Option<&foresight_api::prediction::HeadroomSpec>,
) -> Result<Option<f64>, String> {
    if spec.and_then(|h| h.enabled) == Some(false) {
        return Ok(None);
    }
    let budget = spec
        .and_then(|h| h.risk_budget_percent.as_ref())
        .map_or(Ok(PredictionPolicy::DEFAULT_RISK_BUDGET_PERCENT), |q| {
            q.as_f64()
        })
        .map_err(|e| e.to_string())?;
    Ok(Some(1.0 - budget.clamp(0.0, 100.0) / 100.0))
}

/// Settings that Kubernetes has once per cluster and Foresight has per object.
#[derive(Clone, Debug, PartialEq)]
pub struct PerObjectSettings {
    /// The dead band.
    pub tolerance: Tolerance,
    /// CPU readiness rules.
    pub readiness: Readiness,
    /// Downscale stabilization when `behavior` leaves it unset, and on the legacy path.
    pub downscale_stabilization_seconds: i64,
    /// Seconds between decisions.
    pub sync_period_seconds: i64,
    /// The legacy path's scale-up limit.
    pub legacy_scale_up_limit: LegacyScaleUpLimit,
    /// The Kubernetes release whose HPA the decision reproduces.
    pub kubernetes: KubernetesVersion,
    /// Whether decisions explain themselves: the decision record (`status.lastDecision`, its
    /// proposals and limits), the targets' summary and the conditions' messages. A replay that keeps only
    /// scores turns it off, since it reads none of it and building the text was about a
    /// quarter of its time; every count, condition status and reason, and prediction's
    /// status are the same either way.
    pub explain: bool,
}

/// An autoscaler, compiled from its spec.
#[derive(Clone, Debug)]
pub struct Autoscaler {
    /// Namespace of the object (and of its target).
    pub namespace: String,
    /// Name of the object.
    pub name: String,
    /// The target.
    pub target: CrossVersionObjectReference,
    /// Lower bound.
    pub min_replicas: i32,
    /// Upper bound.
    pub max_replicas: i32,
    /// Metrics, in spec order.
    pub metrics: Vec<Metric>,
    /// `behavior`; `None` selects Kubernetes' legacy path.
    pub behavior: Option<Behavior>,
    /// Per-object settings.
    pub settings: PerObjectSettings,
    /// Auto or Preview.
    pub strategy: ScaleStrategy,
    /// Preview: the count to hold.
    pub specific_replicas: Option<i32>,
    /// How far ahead forecasts are scaled for, seconds; `None` when prediction is off.
    pub prediction_window_seconds: Option<i64>,
    /// How forecasts become proposals and are held to account; `None` when prediction is off.
    pub prediction: Option<PredictionPolicy>,
    /// The crons, compiled; `None` without crons.
    pub crons: Option<CronSet>,
    /// What to do when a metric keeps failing; `None` holds, as Kubernetes does.
    pub fallback: Option<Fallback>,
    /// Idle scaling; `None` scales to zero only as Kubernetes' HPAScaleToZero does.
    pub idle: Option<Idle>,
    /// `spec.objective`; `None` runs the spec as written.
    pub objective: Option<crate::objective::Objective>,
}

/// `spec.fallback`, defaulted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fallback {
    /// Applies after more than this many failed syncs in a row.
    pub failure_threshold: Option<i32>,
    /// ... or after this many seconds of failure.
    pub failure_duration_seconds: Option<i64>,
    /// The size to fall back to (0 for `CurrentReplicas` without one).
    pub replicas: i32,
    /// How the size is chosen.
    pub behavior: FallbackBehavior,
}

/// `spec.idle`, defaulted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Idle {
    /// The idle size.
    pub replicas: i32,
    /// Inactive seconds before going idle.
    pub cooldown_seconds: i64,
    /// Seconds after the autoscaler is created before it may go idle.
    pub initial_cooldown_seconds: i64,
}

impl Autoscaler {
    /// Whether a source can see load while the target has no pods (an Object, External or
    /// Prometheus metric, or a cron): what Kubernetes 1.37 asks before it scales a target to
    /// zero and back (its `hasObjectOrExternalMetrics`; Foresight's crons wake a target too).
    pub fn sees_load_without_pods(&self) -> bool {
        self.crons.is_some()
            || self.metrics.iter().any(|m| {
                matches!(
                    m.source,
                    MetricSource::Object { .. }
                        | MetricSource::External { .. }
                        | MetricSource::Prometheus { .. }
                        | MetricSource::Formula { .. }
                )
            })
    }

    /// The lowest size the metrics may decide: `minReplicas`, but at least 1 with
    /// `spec.idle`, where only inactivity takes the target below it (as KEDA sets its HPA's
    /// `minReplicas`).
    pub fn active_min_replicas(&self) -> i32 {
        match self.idle {
            Some(_) => self.min_replicas.max(1),
            None => self.min_replicas,
        }
    }
}

impl Autoscaler {
    /// Defaults, validates and compiles `spec`. Every problem is returned, with its path.
    pub fn new(
        namespace: &str,
        name: &str,
        spec: &EffectiveHorizontalPodAutoscalerSpec,
        config: &ControllerConfig,
    ) -> Result<Autoscaler, Vec<FieldError>> {
        let errors = foresight_api::validation::validate_spec(spec);
        if !errors.is_empty() {
            return Err(errors);
        }
        // The predictor's own check, in case validation let through settings it cannot use.
        if let Some(Err(e)) = spec.prediction.as_ref().map(PredictionPolicy::compile) {
            return Err(vec![FieldError::invalid(
                "spec.prediction.predictionAlgorithm",
                "",
                e,
            )]);
        }
        let mut problems = Vec::new();
        let mut autoscaler = Self::compile(namespace, name, spec, config, &mut problems);
        if !problems.is_empty() {
            return Err(problems);
        }
        if !spec.crons.is_empty() {
            let crons =
                CronSet::compile(&spec.crons, &config.local_time_zone).map_err(|errors| {
                    errors
                        .into_iter()
                        .map(|mut e| {
                            e.field = format!("spec.{}", e.field);
                            e
                        })
                        .collect::<Vec<_>>()
                })?;
            autoscaler.crons = Some(crons);
        }
        Ok(autoscaler)
    }

    /// Compiles without validating, for objects already accepted elsewhere (the Kubernetes
    /// conformance cases validate with Kubernetes' own rules). Crons are compiled only by
    /// [`Autoscaler::new`], which can report their problems.
    pub fn compile_unchecked(
        namespace: &str,
        name: &str,
        spec: &EffectiveHorizontalPodAutoscalerSpec,
        config: &ControllerConfig,
    ) -> Autoscaler {
        // What does not convert stays unset, and the decision reports it as Kubernetes does.
        Self::compile(namespace, name, spec, config, &mut Vec::new())
    }

    /// Compiles `spec`, adding to `problems` every value that does not convert.
    fn compile(
        namespace: &str,
        name: &str,
        spec: &EffectiveHorizontalPodAutoscalerSpec,
        config: &ControllerConfig,
        problems: &mut Vec<FieldError>,
    ) -> Autoscaler {
        let mut spec = spec.clone();
        foresight_api::defaults::default_spec(&mut spec);
        // Validation has checked the predictor's settings; unusable ones predict nothing.
        let prediction = spec
            .prediction
            .as_ref()
            .and_then(|p| PredictionPolicy::compile(p).ok().flatten());
        let downscale = spec
            .downscale_stabilization_window_seconds
            .map(i64::from)
            .unwrap_or(config.downscale_stabilization_seconds);
        let tolerance = compile_tolerance(&spec, config, problems);
        let readiness = Readiness {
            cpu_initialization_period: SignedDuration::from_secs(
                spec.cpu_initialization_period_seconds
                    .map(i64::from)
                    .unwrap_or(config.cpu_initialization_period_seconds),
            ),
            initial_readiness_delay: SignedDuration::from_secs(
                spec.initial_readiness_delay_seconds
                    .map(i64::from)
                    .unwrap_or(config.initial_readiness_delay_seconds),
            ),
        };
        Autoscaler {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            target: spec.scale_target_ref.clone(),
            min_replicas: spec.min_replicas_or_default(),
            max_replicas: spec.max_replicas,
            metrics: spec
                .metrics
                .iter()
                .enumerate()
                .map(|(i, m)| Metric::compile_checked(m, &format!("spec.metrics[{i}]"), problems))
                .collect(),
            behavior: spec
                .behavior
                .as_ref()
                .map(|b| Behavior::from_api(b, downscale)),
            settings: PerObjectSettings {
                tolerance,
                readiness,
                downscale_stabilization_seconds: downscale,
                sync_period_seconds: spec
                    .sync_period_seconds
                    .map(i64::from)
                    .unwrap_or(config.sync_period_seconds),
                legacy_scale_up_limit: config.legacy_scale_up_limit,
                kubernetes: config.kubernetes,
                explain: true,
            },
            strategy: spec.strategy(),
            specific_replicas: spec.specific_replicas,
            prediction_window_seconds: prediction.as_ref().map(|p| p.window_seconds),
            prediction,
            crons: None,
            fallback: spec.fallback.as_ref().map(|f| Fallback {
                failure_threshold: f.failure_threshold_or_default(),
                failure_duration_seconds: f.failure_duration_seconds.map(i64::from),
                replicas: f.replicas.unwrap_or(0),
                behavior: f.behavior_or_default(),
            }),
            idle: spec.idle.as_ref().map(|i| Idle {
                replicas: i.replicas_or_default(),
                cooldown_seconds: i64::from(
                    i.cooldown_seconds
                        .unwrap_or(foresight_api::idle::DEFAULT_COOLDOWN_SECONDS),
                ),
                initial_cooldown_seconds: i64::from(i.initial_cooldown_seconds.unwrap_or(0)),
            }),
            objective: spec
                .objective
                .as_ref()
                .and_then(crate::objective::Objective::compile),
        }
    }

    /// `Kind/namespace/name` of the target, as Kubernetes names it in errors.
    pub fn target_reference(&self) -> String {
        format!(
            "{}/{}/{}",
            self.target.kind, self.namespace, self.target.name
        )
    }
}

/// The dead band: the object's `tolerance` (or the controller's), overridden per direction by
/// `behavior.scaleUp/scaleDown.tolerance`. A tolerance that does not convert is a problem.
///
/// Kubernetes 1.33+ tests `1 − down ≤ ratio ≤ 1 + up` always; 1.28–1.32 test `|1 − ratio| ≤
/// tol` and had no per-direction field, so there the bounds test is used only for the
/// directions an object configures (Foresight's field at every release).
fn compile_tolerance(
    spec: &EffectiveHorizontalPodAutoscalerSpec,
    config: &ControllerConfig,
    problems: &mut Vec<FieldError>,
) -> Tolerance {
    let default = config.tolerance;
    let mut read = |q: Option<&foresight_api::Quantity>, path: &str| {
        let q = q?;
        q.as_f64()
            .map_err(|e| problems.push(FieldError::invalid(path, q, e.to_string())))
            .ok()
    };
    let base = read(spec.tolerance.as_ref(), "spec.tolerance").unwrap_or(default);
    let behavior = spec.behavior.as_ref();
    let up = read(
        behavior
            .and_then(|b| b.scale_up.as_ref())
            .and_then(|r| r.tolerance.as_ref()),
        "spec.behavior.scaleUp.tolerance",
    );
    let down = read(
        behavior
            .and_then(|b| b.scale_down.as_ref())
            .and_then(|r| r.tolerance.as_ref()),
        "spec.behavior.scaleDown.tolerance",
    );
    if up.is_none() && down.is_none() {
        return Tolerance::symmetric(base, config.kubernetes);
    }
    Tolerance {
        up: up.unwrap_or(base),
        down: down.unwrap_or(base),
        bounds: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn external_spec(name: &str) -> serde_json::Value {
        serde_json::json!({
            "type": "External",
            "external": {"metric": {"name": name}, "target": {"type": "Value", "value": "1"}},
        })
    }

    fn external(value: &str) -> MetricSpec {
        serde_json::from_value(serde_json::json!({
            "type": "External",
            "external": {"metric": {"name": "queue"}, "target": {"type": "Value", "value": value}},
        }))
        .unwrap()
    }

    #[test]
    fn identifiers_name_the_source_and_the_metric() {
        let identifier = |spec: serde_json::Value| {
            let spec: MetricSpec = serde_json::from_value(spec).unwrap();
            let mut problems = Vec::new();
            let m = Metric::compile_checked(&spec, "spec.metrics[0]", &mut problems);
            assert!(problems.is_empty(), "{problems:?}");
            m.identifier()
        };
        let utilization = serde_json::json!({"type": "Utilization", "averageUtilization": 60});
        assert_eq!(
            identifier(serde_json::json!({
                "type": "Resource",
                "resource": {"name": "cpu", "target": utilization},
            })),
            "resource.cpu"
        );
        assert_eq!(
            identifier(serde_json::json!({
                "type": "ContainerResource",
                "containerResource": {"name": "memory", "container": "app", "target": utilization},
            })),
            "container-resource.app.memory"
        );
        assert_eq!(identifier(external_spec("queue")), "external.queue");
    }

    #[test]
    fn a_quantity_that_does_not_convert_is_a_problem_with_its_path() {
        let mut problems = Vec::new();
        let malformed = external("twelve");
        let m = Metric::compile_checked(&malformed, "spec.metrics[2]", &mut problems);
        assert_eq!(m.target, Target::Unset);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].field, "spec.metrics[2].external.target.value");
        // Unchecked, the same metric compiles to an unset target, reported by the decision.
        assert_eq!(Metric::compile(&malformed).target, Target::Unset);

        let mut problems = Vec::new();
        let m = Metric::compile_checked(&external("250m"), "spec.metrics[0]", &mut problems);
        assert_eq!(m.target, Target::Value(250));
        assert!(problems.is_empty());
    }
}

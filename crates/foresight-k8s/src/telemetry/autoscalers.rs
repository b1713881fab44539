//! Series per autoscaler (`namespace`, `name` labels): replicas, bounds, each metric's value
//! and target, each source's proposal, the limit that held, prediction and cron state.
//!
//! Cardinality is bounded by what exists: one series per autoscaler and metric (or source),
//! written after each reconcile, and removed when the object is deleted, when a metric
//! leaves its spec, or when this replica stops leading (a follower exports none).

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;

use parking_lot::Mutex;

use foresight_api::status::{ConditionStatus, DecisionRecord, OperatingPointStatus};
use foresight_api::EffectiveHorizontalPodAutoscalerStatus;
use foresight_core::autoscaler::Autoscaler;
use foresight_core::conditions::{
    self, ACTIVE, CRON_ACTIVE, FALLBACK_ACTIVE, PAUSED, PREDICTION_READY, READY,
};
use foresight_core::targets::{metric_targets, Amount};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::autoscaler_key::{AutoscalerKey, PerAutoscaler};

type Value = Gauge<f64, AtomicU64>;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Object {
    namespace: String,
    name: String,
}

impl Object {
    /// The labels of one of this autoscaler's metrics.
    fn with_metric(&self, metric: String) -> ObjectMetric {
        ObjectMetric {
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            metric,
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ObjectMetric {
    namespace: String,
    name: String,
    /// `resource.cpu`, `pods.<name>`, `external.<name>`, `prometheus.<name>`, ...
    metric: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ObjectSource {
    namespace: String,
    name: String,
    /// `metric`, `prediction` or `cron`.
    source: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ObjectReason {
    namespace: String,
    name: String,
    /// `ScaleDownStabilized`, `ScaleUpLimit`, `TooManyReplicas`, ...
    reason: String,
}

/// What one autoscaler exports, to remove exactly that later.
#[derive(Clone, Debug, Default)]
struct Published {
    metrics: Vec<String>,
    forecasts: Vec<String>,
    evaluations: Vec<String>,
    sources: Vec<String>,
    limit: Option<String>,
    prediction: bool,
    cron: bool,
    operating_point: bool,
    /// The condition gauges published (fallback_active, paused, active).
    conditions: Vec<&'static str>,
}

/// The per-autoscaler families.
#[derive(Debug, Default)]
pub struct AutoscalerSeries {
    current_replicas: Family<Object, Value>,
    desired_replicas: Family<Object, Value>,
    min_replicas: Family<Object, Value>,
    max_replicas: Family<Object, Value>,
    ready: Family<Object, Value>,
    metric_value: Family<ObjectMetric, Value>,
    metric_target: Family<ObjectMetric, Value>,
    forecast_error: Family<ObjectMetric, Value>,
    prediction_saving: Family<ObjectMetric, Value>,
    prediction_kept: Family<ObjectMetric, Value>,
    operating_point_saving: Family<Object, Value>,
    operating_point_meets: Family<Object, Value>,
    operating_point_target: Family<Object, Value>,
    proposed_replicas: Family<ObjectSource, Value>,
    limited: Family<ObjectReason, Value>,
    prediction_ready: Family<Object, Value>,
    cron_active: Family<Object, Value>,
    fallback_active: Family<Object, Value>,
    paused: Family<Object, Value>,
    active: Family<Object, Value>,
    published: Mutex<HashMap<AutoscalerKey, Published>>,
}

impl AutoscalerSeries {
    /// Registers the families in `registry` (prefixed `foresight_autoscaler_`).
    pub fn register(&self, registry: &mut Registry) {
        let r = registry.sub_registry_with_prefix("autoscaler");
        let families: [(&str, &str, &Family<Object, Value>); 10] = [
            (
                "current_replicas",
                "Replicas of the target when last observed",
                &self.current_replicas,
            ),
            (
                "desired_replicas",
                "Replicas the autoscaler wants (what Auto applies)",
                &self.desired_replicas,
            ),
            ("min_replicas", "spec.minReplicas", &self.min_replicas),
            ("max_replicas", "spec.maxReplicas", &self.max_replicas),
            (
                "ready",
                "1 when the Ready condition is True: the autoscaler read its sources and acted",
                &self.ready,
            ),
            (
                "prediction_ready",
                "1 when prediction gives forecasts to the decision (PredictionReady=True); \
                 only for autoscalers that predict",
                &self.prediction_ready,
            ),
            (
                "cron_active",
                "1 while a cron window holds replicas (CronActive=True); only for \
                 autoscalers with crons",
                &self.cron_active,
            ),
            (
                "fallback_active",
                "1 while spec.fallback decides because a metric keeps failing \
                 (FallbackActive=True); only for autoscalers with a fallback",
                &self.fallback_active,
            ),
            (
                "paused",
                "1 while a pause annotation holds or bounds the autoscaler (Paused=True); \
                 only for autoscalers that were paused",
                &self.paused,
            ),
            (
                "active",
                "With spec.idle: 1 while a metric is above its activation value \
                 (Active=True), 0 while cooling down or idle",
                &self.active,
            ),
        ];
        for (name, help, family) in families {
            r.register(name, help, family.clone());
        }
        r.register(
            "metric_value",
            "Each metric's last observed value, in its target's terms (percent of requests \
             for utilization, the quantity's base unit otherwise)",
            self.metric_value.clone(),
        );
        r.register(
            "metric_target",
            "Each metric's target, in the same unit as foresight_autoscaler_metric_value",
            self.metric_target.clone(),
        );
        r.register(
            "forecast_error_percent",
            "Each predicted metric's forecast error over the accuracy window: sum of \
             |forecast - observed| over sum of observed, percent (what demotion compares with \
             spec.prediction.accuracy.maxErrorPercent)",
            self.forecast_error.clone(),
        );
        r.register(
            "prediction_saving_percent",
            "Self-evaluation: how much cheaper each predicted metric's replay of the recent \
             history was with prediction than without it at equal shortfall, percent \
             (negative: dearer)",
            self.prediction_saving.clone(),
        );
        r.register(
            "prediction_kept",
            "Self-evaluation: 1 while the replay keeps prediction for the metric, 0 while it \
             holds prediction off (PredictionReady reason NoSavingInReplay)",
            self.prediction_kept.clone(),
        );
        r.register(
            "operating_point_saving_percent",
            "With spec.objective: how much cheaper the operating point in use was than the \
             spec without prediction in the replay that chose it, percent (negative: dearer)",
            self.operating_point_saving.clone(),
        );
        r.register(
            "operating_point_meets_objective",
            "With spec.objective: 1 when the operating point in use met the objective in its \
             replay, 0 when none did and the safest runs",
            self.operating_point_meets.clone(),
        );
        r.register(
            "operating_point_target_utilization_percent",
            "With spec.objective: the first Utilization target at the operating point in use \
             (for a schedule over the day, the block's the last decision ran in)",
            self.operating_point_target.clone(),
        );
        r.register(
            "proposed_replicas",
            "The replicas each source proposed in the last decision (the largest metric \
             proposal, the forecast's, the active cron's)",
            self.proposed_replicas.clone(),
        );
        r.register(
            "limited",
            "1, labelled with the reason of the last limit that changed the last decision \
             (stabilization, rate policy, bounds); absent when none did",
            self.limited.clone(),
        );
    }

    /// Publishes the series of one autoscaler after a reconcile: `autoscaler` as compiled,
    /// `status` as just decided.
    pub fn record(&self, autoscaler: &Autoscaler, status: &EffectiveHorizontalPodAutoscalerStatus) {
        let key = AutoscalerKey::of(autoscaler);
        let object = Object {
            namespace: key.namespace.clone(),
            name: key.name.clone(),
        };
        let mut now = Published::default();
        self.record_gauges(&object, autoscaler, status, &mut now);
        self.record_metrics(&object, autoscaler, status, &mut now);
        self.record_prediction(&object, status, &mut now);
        self.record_operating_point(&object, status, &mut now);
        if let Some(record) = &status.last_decision {
            self.record_decision(&object, record, &mut now);
        }
        let before = self
            .published
            .lock()
            .insert(key, now.clone())
            .unwrap_or_default();
        self.remove_stale(&object, &before, &now);
    }

    /// Replicas, bounds and the condition gauges.
    fn record_gauges(
        &self,
        object: &Object,
        autoscaler: &Autoscaler,
        status: &EffectiveHorizontalPodAutoscalerStatus,
        now: &mut Published,
    ) {
        let set = |family: &Family<Object, Value>, v: f64| {
            family.get_or_create(object).set(v);
        };
        if let Some(n) = status.current_replicas {
            set(&self.current_replicas, f64::from(n));
        }
        if let Some(n) = status.desired_replicas {
            set(&self.desired_replicas, f64::from(n));
        }
        set(&self.min_replicas, f64::from(autoscaler.min_replicas));
        set(&self.max_replicas, f64::from(autoscaler.max_replicas));
        set(&self.ready, condition_value(status, READY).unwrap_or(0.0));
        if let Some(v) = condition_value(status, PREDICTION_READY) {
            set(&self.prediction_ready, v);
            now.prediction = true;
        }
        if let Some(v) = condition_value(status, CRON_ACTIVE) {
            set(&self.cron_active, v);
            now.cron = true;
        }
        for (condition, family) in self.condition_gauges() {
            if let Some(v) = condition_value(status, condition) {
                set(family, v);
                now.conditions.push(condition);
            }
        }
    }

    /// Each metric's current value and target.
    fn record_metrics(
        &self,
        object: &Object,
        autoscaler: &Autoscaler,
        status: &EffectiveHorizontalPodAutoscalerStatus,
        now: &mut Published,
    ) {
        for t in metric_targets(&autoscaler.metrics, &status.current_metrics) {
            let labels = object.with_metric(t.metric);
            // A metric not read this sync has no value: its series goes rather than
            // repeating a stale one.
            match t.current {
                Some(v) => {
                    self.metric_value.get_or_create(&labels).set(v.as_f64());
                }
                None => {
                    self.metric_value.remove(&labels);
                }
            }
            if let Some(v) = t.target.map(Amount::as_f64) {
                self.metric_target.get_or_create(&labels).set(v);
            }
            now.metrics.push(labels.metric);
        }
    }

    /// Each predicted metric's forecast error and self-evaluation verdict.
    fn record_prediction(
        &self,
        object: &Object,
        status: &EffectiveHorizontalPodAutoscalerStatus,
        now: &mut Published,
    ) {
        for m in status.prediction.iter().flat_map(|p| &p.metrics) {
            let labels = object.with_metric(m.metric.clone());
            if m.samples > 0 {
                self.forecast_error
                    .get_or_create(&labels)
                    .set(m.error_percent as f64);
                now.forecasts.push(m.metric.clone());
            }
            if let Some(e) = &m.evaluation {
                self.prediction_saving
                    .get_or_create(&labels)
                    .set(e.saving_percent as f64);
                self.prediction_kept
                    .get_or_create(&labels)
                    .set(if e.kept { 1.0 } else { 0.0 });
                now.evaluations.push(m.metric.clone());
            }
        }
    }

    /// The operating point in use and its replay, with `spec.objective`.
    fn record_operating_point(
        &self,
        object: &Object,
        status: &EffectiveHorizontalPodAutoscalerStatus,
        now: &mut Published,
    ) {
        let Some(p) = &status.operating_point else {
            return;
        };
        let saving = if p.reactive_replica_hours > 0 {
            (p.reactive_replica_hours - p.replica_hours) as f64 / p.reactive_replica_hours as f64
                * 100.0
        } else {
            0.0
        };
        self.operating_point_saving
            .get_or_create(object)
            .set(saving);
        self.operating_point_meets
            .get_or_create(object)
            .set(if p.meets_objective { 1.0 } else { 0.0 });
        match target_in_force(p, status.last_decision.as_ref()) {
            Some(u) => {
                self.operating_point_target
                    .get_or_create(object)
                    .set(f64::from(u));
            }
            None => {
                self.operating_point_target.remove(object);
            }
        }
        now.operating_point = true;
    }

    /// Each source's largest proposal, and the last limit that shaped the decision.
    fn record_decision(&self, object: &Object, record: &DecisionRecord, now: &mut Published) {
        let mut by_source: Vec<(&str, i32)> = Vec::new();
        for p in &record.proposals {
            let Some(n) = p.replicas else { continue };
            match by_source.iter_mut().find(|(s, _)| *s == p.source) {
                Some((_, best)) => *best = (*best).max(n),
                None => by_source.push((&p.source, n)),
            }
        }
        for (source, n) in by_source {
            self.proposed_replicas
                .get_or_create(&ObjectSource {
                    namespace: object.namespace.clone(),
                    name: object.name.clone(),
                    source: source.to_owned(),
                })
                .set(f64::from(n));
            now.sources.push(source.to_owned());
        }
        if let Some(limit) = record.limits.last() {
            self.limited
                .get_or_create(&ObjectReason {
                    namespace: object.namespace.clone(),
                    name: object.name.clone(),
                    reason: limit.reason.clone(),
                })
                .set(1.0);
            now.limit = Some(limit.reason.clone());
        }
    }

    /// Publishes only readiness, for an autoscaler whose spec does not compile.
    pub fn record_invalid(&self, key: &AutoscalerKey) {
        self.forget(key);
        self.ready
            .get_or_create(&Object {
                namespace: key.namespace.clone(),
                name: key.name.clone(),
            })
            .set(0.0);
        self.published
            .lock()
            .insert(key.clone(), Published::default());
    }

    /// How many autoscalers have series.
    pub fn len(&self) -> usize {
        self.published.lock().len()
    }

    /// Whether none has.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl PerAutoscaler for AutoscalerSeries {
    /// Removes every series of one autoscaler (deleted).
    fn forget(&self, key: &AutoscalerKey) {
        let before = self.published.lock().remove(key).unwrap_or_default();
        let object = Object {
            namespace: key.namespace.clone(),
            name: key.name.clone(),
        };
        for family in [
            &self.current_replicas,
            &self.desired_replicas,
            &self.min_replicas,
            &self.max_replicas,
            &self.ready,
        ] {
            family.remove(&object);
        }
        self.remove_stale(&object, &before, &Published::default());
    }

    /// Removes the series of every autoscaler `keep` refuses (not in a full list), or of all
    /// when this replica stops leading.
    fn retain(&self, keep: &dyn Fn(&AutoscalerKey) -> bool) {
        let gone: Vec<AutoscalerKey> = self
            .published
            .lock()
            .keys()
            .filter(|k| !keep(k))
            .cloned()
            .collect();
        for key in gone {
            self.forget(&key);
        }
    }
}

impl AutoscalerSeries {
    fn remove_stale(&self, object: &Object, before: &Published, now: &Published) {
        for metric in before.metrics.iter().filter(|m| !now.metrics.contains(m)) {
            let labels = ObjectMetric {
                namespace: object.namespace.clone(),
                name: object.name.clone(),
                metric: metric.clone(),
            };
            self.metric_value.remove(&labels);
            self.metric_target.remove(&labels);
        }
        for metric in before
            .forecasts
            .iter()
            .filter(|m| !now.forecasts.contains(m))
        {
            self.forecast_error.remove(&ObjectMetric {
                namespace: object.namespace.clone(),
                name: object.name.clone(),
                metric: metric.clone(),
            });
        }
        for metric in before
            .evaluations
            .iter()
            .filter(|m| !now.evaluations.contains(m))
        {
            let labels = ObjectMetric {
                namespace: object.namespace.clone(),
                name: object.name.clone(),
                metric: metric.clone(),
            };
            self.prediction_saving.remove(&labels);
            self.prediction_kept.remove(&labels);
        }
        for source in before.sources.iter().filter(|s| !now.sources.contains(s)) {
            self.proposed_replicas.remove(&ObjectSource {
                namespace: object.namespace.clone(),
                name: object.name.clone(),
                source: source.clone(),
            });
        }
        if let Some(reason) = &before.limit {
            if now.limit.as_ref() != Some(reason) {
                self.limited.remove(&ObjectReason {
                    namespace: object.namespace.clone(),
                    name: object.name.clone(),
                    reason: reason.clone(),
                });
            }
        }
        if before.prediction && !now.prediction {
            self.prediction_ready.remove(object);
        }
        if before.cron && !now.cron {
            self.cron_active.remove(object);
        }
        if before.operating_point && !now.operating_point {
            for family in [
                &self.operating_point_saving,
                &self.operating_point_meets,
                &self.operating_point_target,
            ] {
                family.remove(object);
            }
        }
        for (condition, family) in self.condition_gauges() {
            if before.conditions.contains(&condition) && !now.conditions.contains(&condition) {
                family.remove(object);
            }
        }
    }

    /// The gauges that follow one condition each, published only while it is set.
    fn condition_gauges(&self) -> [(&'static str, &Family<Object, Value>); 3] {
        [
            (FALLBACK_ACTIVE, &self.fallback_active),
            (PAUSED, &self.paused),
            (ACTIVE, &self.active),
        ]
    }
}

/// 1 for a True condition, 0 for False or Unknown, `None` when absent.
fn condition_value(status: &EffectiveHorizontalPodAutoscalerStatus, type_: &str) -> Option<f64> {
    conditions::get(&status.conditions, type_).map(|c| {
        if c.status == ConditionStatus::True {
            1.0
        } else {
            0.0
        }
    })
}

/// The first Utilization target of `point` in force at the `last` decision: its block's when
/// the point is a schedule over the day (the last block beginning at or before that hour,
/// UTC), the point's own otherwise.
fn target_in_force(point: &OperatingPointStatus, last: Option<&DecisionRecord>) -> Option<i32> {
    match last {
        Some(d) if !point.blocks.is_empty() => {
            let hour = d.time.as_second().rem_euclid(86_400) / 3_600;
            point
                .blocks
                .iter()
                .rev()
                .find(|b| i64::from(b.from_hour) <= hour)
                .and_then(|b| b.target_utilization)
        }
        _ => point.target_utilization,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use foresight_api::status::OperatingPointBlock;
    use jiff::Timestamp;

    fn block(from_hour: i32, target: i32) -> OperatingPointBlock {
        OperatingPointBlock {
            from_hour,
            target_utilization: Some(target),
            risk_budget_percent: None,
            forecast_budget_percent: None,
            prediction: false,
        }
    }

    #[test]
    fn a_schedule_shows_the_target_of_the_block_the_last_decision_ran_in() {
        let point = OperatingPointStatus {
            chosen_at: Timestamp::UNIX_EPOCH,
            replayed_seconds: 86_400,
            target_utilization: Some(75),
            risk_budget_percent: None,
            forecast_budget_percent: None,
            prediction: false,
            meets_objective: true,
            under_seconds: 0,
            replica_hours: 90,
            reactive_under_seconds: 0,
            reactive_replica_hours: 100,
            description: String::new(),
            blocks: vec![block(0, 90), block(8, 75), block(20, 82)],
            carried_under_seconds: 0,
        };
        let at = |hour: i64| DecisionRecord {
            // 2026-01-01 plus `hour` hours, UTC.
            time: Timestamp::from_second(1_767_225_600 + hour * 3_600).unwrap(),
            ..DecisionRecord::default()
        };
        assert_eq!(target_in_force(&point, Some(&at(3))), Some(90));
        assert_eq!(target_in_force(&point, Some(&at(8))), Some(75));
        assert_eq!(target_in_force(&point, Some(&at(23))), Some(82));
        assert_eq!(target_in_force(&point, Some(&at(24 + 1))), Some(90));
        // No decision yet, or no schedule: the point's own.
        assert_eq!(target_in_force(&point, None), Some(75));
        let single = OperatingPointStatus {
            blocks: Vec::new(),
            ..point
        };
        assert_eq!(target_in_force(&single, Some(&at(3))), Some(75));
    }
}

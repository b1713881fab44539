//! What KEDA users rely on, end to end through `decide` and `finish` over several syncs:
//! fallback when a metric keeps failing, scaling to and from an idle size, and the pause
//! annotations.

use foresight_api::spec::EffectiveHorizontalPodAutoscalerSpec;
use foresight_api::status::{
    ConditionStatus, EffectiveHorizontalPodAutoscalerStatus, ScalingHistory,
};
use foresight_core::autoscaler::{Autoscaler, ControllerConfig};
use foresight_core::conditions;
use foresight_core::decision::{decide, Event, Observation, ScaleOutcome};
use foresight_core::metrics::{MetricData, ValueSample};
use foresight_core::pause::{self, Pause};
use foresight_core::proposals::Scale;
use foresight_core::version::KubernetesVersion;
use jiff::{SignedDuration, Timestamp};

fn spec(json: serde_json::Value) -> EffectiveHorizontalPodAutoscalerSpec {
    let mut base = serde_json::json!({
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "worker"},
        "maxReplicas": 20,
        "metrics": [{"type": "External", "external": {
            "metric": {"name": "queue_depth"},
            "target": {"type": "AverageValue", "averageValue": "10"}}}],
    });
    base.as_object_mut()
        .unwrap()
        .extend(json.as_object().unwrap().clone());
    serde_json::from_value(base).expect("spec")
}

/// One autoscaler and its workload, synced every 15 s; `Auto` applies every decision.
struct Loop {
    autoscaler: Autoscaler,
    status: EffectiveHorizontalPodAutoscalerStatus,
    history: ScalingHistory,
    replicas: i32,
    now: Timestamp,
    events: Vec<Event>,
    pause: Pause,
}

impl Loop {
    fn new(spec: EffectiveHorizontalPodAutoscalerSpec, replicas: i32) -> Loop {
        Loop {
            autoscaler: Autoscaler::new("jobs", "worker", &spec, &ControllerConfig::default())
                .expect("valid spec"),
            status: Default::default(),
            history: Default::default(),
            replicas,
            now: "2026-03-02T07:30:00Z".parse().unwrap(),
            events: Vec::new(),
            pause: Pause::default(),
        }
    }

    /// One sync with the queue at `queue` (`None`: the metric API fails).
    fn sync(&mut self, queue: Option<i64>) {
        let reading = match queue {
            Some(v) => MetricData::Values(vec![ValueSample {
                value: v * 1000,
                timestamp: self.now,
            }]),
            None => MetricData::Failed("external metrics API unavailable".into()),
        };
        self.sync_reading(reading);
    }

    /// One sync with the metric read as `reading`.
    fn sync_reading(&mut self, reading: MetricData) {
        let obs = Observation {
            scale: Ok(Scale {
                spec_replicas: self.replicas,
                status_replicas: self.replicas,
                selector: "app=worker".into(),
            }),
            metrics: vec![reading.into()],
            pause: self.pause.clone(),
            ..Default::default()
        };
        let d = decide(
            &self.autoscaler,
            &obs,
            std::mem::take(&mut self.status),
            std::mem::take(&mut self.history),
            self.now,
        );
        let outcome = match d.scale_to {
            Some(n) => {
                self.replicas = n;
                ScaleOutcome::Applied { at: self.now }
            }
            None => ScaleOutcome::NotAttempted,
        };
        let r = d.finish(&self.autoscaler, outcome);
        self.status = r.status;
        self.history = r.history;
        self.events = r.events;
        self.now += SignedDuration::from_secs(15);
    }

    fn condition(&self, type_: &str) -> (ConditionStatus, String) {
        let c = conditions::get(&self.status.conditions, type_)
            .unwrap_or_else(|| panic!("no {type_} condition"));
        (c.status, c.reason.clone())
    }

    fn emitted(&self, reason: &str) -> bool {
        self.events.iter().any(|e| e.reason == reason)
    }
}

#[test]
fn a_failing_metric_falls_back_after_the_threshold_and_recovers() {
    let mut l = Loop::new(
        spec(serde_json::json!({"fallback": {"failureThreshold": 2, "replicas": 8}})),
        3,
    );
    l.sync(Some(30));
    assert_eq!(l.replicas, 3, "30 queued at 10 per pod");
    l.sync(None);
    l.sync(None);
    assert_eq!(
        l.replicas, 3,
        "two failures are tolerated: hold, as Kubernetes does"
    );
    assert_eq!(
        l.condition(conditions::FALLBACK_ACTIVE).0,
        ConditionStatus::False
    );
    assert_eq!(l.status.fallback.as_ref().unwrap().failed_syncs, 2);
    l.sync(None);
    assert_eq!(
        l.replicas, 6,
        "the third failure applies the fallback, as a proposal: at most double per sync (no behavior: the legacy limit)"
    );
    assert!(l.emitted("FallbackStarted"));
    assert_eq!(
        l.condition(conditions::FALLBACK_ACTIVE),
        (ConditionStatus::True, "MetricsFailing".into())
    );
    assert_eq!(l.condition(conditions::READY).0, ConditionStatus::False);
    let explained = l.status.last_decision.as_ref().unwrap();
    assert!(explained
        .proposals
        .iter()
        .any(|p| p.source == "fallback" && p.replicas == Some(8)));
    l.sync(None);
    assert_eq!(l.replicas, 8);
    assert!(
        !l.emitted("FallbackStarted"),
        "the event marks the start only"
    );
    l.sync(Some(30));
    assert!(l.emitted("FallbackEnded"));
    assert!(l.status.fallback.is_none(), "the clock is reset");
    assert_eq!(
        l.condition(conditions::FALLBACK_ACTIVE).0,
        ConditionStatus::False
    );
}

#[test]
fn the_failure_clock_survives_a_restart_through_status() {
    let mut l = Loop::new(
        spec(serde_json::json!({"fallback": {"failureDurationSeconds": 60, "replicas": 5}})),
        3,
    );
    l.sync(None);
    let since = l.status.fallback.as_ref().unwrap().failing_since;
    // A new controller: fresh history and autoscaler, status read back from the API server.
    let status = serde_json::to_value(&l.status).unwrap();
    let mut restarted = Loop::new(
        spec(serde_json::json!({"fallback": {"failureDurationSeconds": 60, "replicas": 5}})),
        3,
    );
    restarted.status = serde_json::from_value(status).unwrap();
    restarted.now = l.now + SignedDuration::from_secs(45);
    restarted.sync(None);
    assert_eq!(
        restarted.status.fallback.as_ref().unwrap().failing_since,
        since
    );
    assert_eq!(
        restarted.replicas, 5,
        "60 s after the first failure, across the restart"
    );
}

#[test]
fn the_four_fallback_behaviours() {
    for (behavior, from, to) in [
        ("Static", 9, 4),
        ("CurrentReplicas", 9, 9),
        ("CurrentReplicasIfHigher", 9, 9),
        ("CurrentReplicasIfHigher", 2, 4),
        ("CurrentReplicasIfLower", 9, 4),
        ("CurrentReplicasIfLower", 2, 2),
    ] {
        let mut l = Loop::new(
            spec(serde_json::json!({
                "fallback": {"failureThreshold": 0, "replicas": 4, "behavior": behavior},
                "behavior": {"scaleDown": {"stabilizationWindowSeconds": 0}},
            })),
            from,
        );
        l.sync(None);
        assert_eq!(l.replicas, to, "{behavior} from {from}");
    }
}

#[test]
fn without_fallback_a_failed_metric_holds_as_kubernetes_does() {
    let mut l = Loop::new(spec(serde_json::json!({})), 6);
    for _ in 0..10 {
        l.sync(None);
    }
    assert_eq!(l.replicas, 6);
    assert!(l.status.fallback.is_none());
    assert!(conditions::get(&l.status.conditions, conditions::FALLBACK_ACTIVE).is_none());
}

#[test]
fn idle_scales_to_zero_after_the_cooldown_and_wakes_above_activation() {
    let mut l = Loop::new(
        spec(serde_json::json!({
            "minReplicas": 0,
            "idle": {"cooldownSeconds": 60},
            "metrics": [{"type": "External", "activation": "5", "external": {
                "metric": {"name": "queue_depth"},
                "target": {"type": "AverageValue", "averageValue": "10"}}}],
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 0}},
        })),
        3,
    );
    l.sync(Some(30));
    assert_eq!(l.replicas, 3);
    l.sync(Some(4));
    assert_eq!(
        l.replicas, 1,
        "at or below activation, the metrics decide, down to 1"
    );
    assert_eq!(
        l.condition(conditions::ACTIVE),
        (ConditionStatus::False, "CoolingDown".into())
    );
    for _ in 0..2 {
        l.sync(Some(4));
        assert_eq!(l.replicas, 1, "still cooling down");
    }
    l.sync(Some(4));
    assert_eq!(l.replicas, 0, "60 s after the last activity");
    assert!(l.emitted("TargetIdle"));
    l.sync(Some(5));
    assert_eq!(l.replicas, 0, "5 is not above the activation value 5");
    assert_eq!(
        l.condition(conditions::ACTIVE),
        (ConditionStatus::False, "ScaledToIdle".into())
    );
    assert_eq!(
        l.condition(conditions::READY).0,
        ConditionStatus::True,
        "idle is not a fault"
    );
    l.sync(Some(6));
    assert_eq!(l.replicas, 1, "woken to the active minimum");
    assert!(l.emitted("TargetActivated"));
    l.sync(Some(60));
    assert_eq!(
        l.replicas, 5,
        "then the metrics decide, within behavior (4 pods per 15 s)"
    );
    l.sync(Some(60));
    assert_eq!(l.replicas, 6);
}

#[test]
fn an_idle_target_stays_idle_while_its_metric_cannot_be_read() {
    let mut l = Loop::new(
        spec(serde_json::json!({"minReplicas": 0, "idle": {"cooldownSeconds": 0}})),
        0,
    );
    l.sync(Some(0));
    assert_eq!(l.replicas, 0);
    l.sync(None);
    assert_eq!(l.replicas, 0);
    assert_eq!(l.condition(conditions::ACTIVE).1, "ActivityUnknown");
}

#[test]
fn idle_replicas_below_min_and_a_cron_that_wakes() {
    let mut l = Loop::new(
        spec(serde_json::json!({
            "minReplicas": 2,
            "idle": {"replicas": 0, "cooldownSeconds": 0},
            "crons": [{"name": "office", "timezone": "UTC", "start": "0 8 * * *", "end": "0 18 * * *", "targetReplicas": 4}],
        })),
        2,
    );
    // 07:30 UTC: no window open, no queue.
    l.sync(Some(0));
    assert_eq!(l.replicas, 0);
    l.now = "2026-03-02T08:00:00Z".parse().unwrap();
    l.sync(Some(0));
    assert_eq!(
        l.replicas, 2,
        "the open window wakes the target to minReplicas"
    );
    l.sync(Some(0));
    assert_eq!(l.replicas, 4, "then holds its replicas");
}

#[test]
fn without_idle_min_zero_is_kubernetes_scale_to_zero() {
    let mut l = Loop::new(
        spec(serde_json::json!({
            "minReplicas": 0,
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 0}},
        })),
        2,
    );
    l.sync(Some(0));
    assert_eq!(l.replicas, 0, "the metric's proposal of 0 applies at once");
    l.sync(Some(1));
    assert_eq!(l.replicas, 1, "ceil(1 / 10) from zero");
}

/// Kubernetes 1.36+ scales from zero only a target it took to zero itself (never, with
/// HPAScaleToZero off as in 1.36): one someone else scaled to zero stays there; 1.28–1.35
/// scale it from its metrics.
#[test]
fn a_target_someone_else_took_to_zero_stays_there_from_1_37() {
    let spec = spec(serde_json::json!({"minReplicas": 0}));
    for (minor, woken) in [(28, 1), (35, 1), (36, 0), (37, 0)] {
        let mut l = Loop::new(spec.clone(), 0);
        l.autoscaler = Autoscaler::new(
            "jobs",
            "worker",
            &spec,
            &ControllerConfig {
                kubernetes: KubernetesVersion::new(minor).unwrap(),
                ..Default::default()
            },
        )
        .unwrap();
        l.sync(Some(5));
        assert_eq!(l.replicas, woken, "Kubernetes 1.{minor}");
        let active = l.condition(conditions::SCALING_ACTIVE);
        if woken == 0 {
            assert_eq!(active, (ConditionStatus::False, "ScalingDisabled".into()));
        } else {
            assert_eq!(active.0, ConditionStatus::True, "Kubernetes 1.{minor}");
        }
    }
}

#[test]
fn scaled_to_zero_is_said_on_every_rescale_from_1_37() {
    let mut l = Loop::new(
        spec(serde_json::json!({
            "minReplicas": 0,
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 0}},
        })),
        3,
    );
    l.sync(Some(0));
    assert_eq!(l.replicas, 0);
    assert_eq!(
        l.condition(conditions::SCALED_TO_ZERO),
        (ConditionStatus::True, "ScaledToZero".into())
    );
    l.sync(Some(25));
    assert_eq!(l.replicas, 3, "ceil(25 / 10) from zero");
    assert_eq!(
        l.condition(conditions::SCALED_TO_ZERO),
        (ConditionStatus::False, "NotScaledToZero".into())
    );
}

#[test]
fn pause_holds_and_paused_replicas_sets_the_size() {
    let mut l = Loop::new(spec(serde_json::json!({})), 3);
    l.pause = Pause::from_annotations([(pause::PAUSED, "true")]);
    l.sync(Some(100));
    assert_eq!(l.replicas, 3);
    assert_eq!(
        l.condition(conditions::PAUSED),
        (ConditionStatus::True, "Paused".into())
    );
    let explained = l.status.last_decision.as_ref().unwrap();
    assert_eq!(
        explained.recommendation,
        Some(10),
        "the decision still says what it would do"
    );
    assert!(explained.limits.iter().any(|x| x.stage == "pause"));
    l.pause = Pause::from_annotations([(pause::PAUSED_REPLICAS, "7")]);
    l.sync(Some(100));
    assert_eq!(l.replicas, 7);
    assert_eq!(l.condition(conditions::PAUSED).1, "PausedAtReplicas");
    l.pause = Pause::default();
    l.sync(Some(0));
    assert_eq!(
        l.condition(conditions::PAUSED),
        (ConditionStatus::False, "NotPaused".into())
    );
}

#[test]
fn paused_scale_in_and_out_bound_one_direction() {
    let mut l = Loop::new(
        spec(serde_json::json!({"behavior": {"scaleDown": {"stabilizationWindowSeconds": 0}}})),
        5,
    );
    l.pause = Pause::from_annotations([(pause::PAUSED_SCALE_IN, "true")]);
    l.sync(Some(10));
    assert_eq!(l.replicas, 5, "no scale-in");
    l.sync(Some(80));
    assert_eq!(l.replicas, 8, "scale-out goes on");
    l.pause = Pause::from_annotations([(pause::PAUSED_SCALE_OUT, "true")]);
    l.sync(Some(200));
    assert_eq!(l.replicas, 8, "no scale-out");
    l.sync(Some(20));
    assert_eq!(l.replicas, 2, "scale-in goes on");
}

#[test]
fn resuming_a_pause_moves_no_faster_than_behavior_allows() {
    let mut l = Loop::new(
        spec(serde_json::json!({"behavior": {"scaleUp": {
            "stabilizationWindowSeconds": 0,
            "policies": [{"type": "Pods", "value": 2, "periodSeconds": 60}]}}})),
        2,
    );
    l.pause = Pause::from_annotations([(pause::PAUSED, "true")]);
    for _ in 0..4 {
        l.sync(Some(200));
    }
    assert_eq!(l.replicas, 2);
    l.pause = Pause::default();
    l.sync(Some(200));
    assert_eq!(
        l.replicas, 4,
        "the Pods policy's 2 per minute, not 20 at once"
    );
}

/// A formula's readings: each input's value, `None` for one whose API fails.
fn inputs(values: &[Option<i64>], now: Timestamp) -> MetricData {
    MetricData::Inputs(
        values
            .iter()
            .map(|v| match v {
                Some(v) => MetricData::Values(vec![ValueSample {
                    value: v * 1000,
                    timestamp: now,
                }]),
                None => MetricData::Failed("connection refused".into()),
            })
            .collect(),
    )
}

#[test]
fn a_formula_wakes_above_its_activation_target_and_falls_back_when_an_input_fails() {
    let mut l = Loop::new(
        spec(serde_json::json!({
            "minReplicas": 0,
            "idle": {"cooldownSeconds": 0},
            "fallback": {"failureThreshold": 1, "replicas": 7},
            "metrics": [{"type": "Formula", "activation": "5", "formula": {
                "name": "composite",
                "formula": "max(queue, backlog / 2)",
                "inputs": [
                    {"name": "queue", "type": "External", "external": {"metric": {"name": "queue_depth"}}},
                    {"name": "backlog", "type": "Prometheus", "prometheus": {"query": "sum(backlog)"}},
                ],
                "target": {"type": "AverageValue", "averageValue": "10"}}}],
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 0}},
        })),
        0,
    );
    let now = l.now;
    l.sync_reading(inputs(&[Some(2), Some(10)], now));
    assert_eq!(
        l.replicas, 0,
        "max(2, 10 / 2) = 5 is not above the activation target 5"
    );
    let now = l.now;
    l.sync_reading(inputs(&[Some(2), Some(12)], now));
    assert_eq!(l.replicas, 1, "6 is above it: woken to the active minimum");
    assert!(l.emitted("TargetActivated"));
    let now = l.now;
    l.sync_reading(inputs(&[Some(40), Some(12)], now));
    assert_eq!(l.replicas, 4, "max(40, 6) = 40 at 10 per pod");
    let now = l.now;
    l.sync_reading(inputs(&[Some(40), None], now));
    assert_eq!(l.replicas, 4, "one failure is tolerated: hold");
    assert!(l.emitted("FailedGetFormulaMetric"));
    let now = l.now;
    l.sync_reading(inputs(&[Some(40), None], now));
    assert_eq!(l.replicas, 7, "past the threshold, the fallback size");
    let now = l.now;
    l.sync_reading(inputs(&[Some(30), Some(0)], now));
    assert!(
        l.emitted("FallbackEnded"),
        "recovered once every input reads"
    );
    assert!(l.status.fallback.is_none());
}

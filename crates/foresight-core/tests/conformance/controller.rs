//! Kind `controller`: one whole reconcile (`reconcileAutoscaler`), end to end — the decision,
//! the scale write (with injected failures), status, events and the controller's memory.

use foresight_api::hpa::HorizontalPodAutoscaler;
use foresight_api::import::{spec_from_hpa, status_from_hpa};
use foresight_api::status::{
    EffectiveHorizontalPodAutoscalerStatus, Recommendation, ScaleEvent, ScalingHistory,
};
use foresight_core::autoscaler::{Autoscaler, ControllerConfig};
use foresight_core::decision::{decide, ScaleOutcome};
use foresight_core::snapshot::{self, MetricsJson, PodJson, ScaleJson};
use foresight_core::version::KubernetesVersion;
use jiff::Timestamp;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::common::{self, expect_eq, same_instant};

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct StateJson {
    #[serde(default)]
    recommendations: Option<Vec<Recommendation>>,
    #[serde(default)]
    scale_up_events: Option<Vec<ScaleEvent>>,
    #[serde(default)]
    scale_down_events: Option<Vec<ScaleEvent>>,
}

const HPA_CONDITIONS: [&str; 4] = [
    "AbleToScale",
    "ScalingActive",
    "ScalingLimited",
    "ScaledToZero",
];

/// The HPA status fields Kubernetes compares, projected from Foresight's status.
fn project(s: &EffectiveHorizontalPodAutoscalerStatus) -> Value {
    let conditions: Vec<Value> = s
        .conditions
        .iter()
        .filter(|c| HPA_CONDITIONS.contains(&c.type_.as_str()))
        .map(|c| json!({"type": c.type_, "status": c.status, "reason": c.reason, "message": c.message}))
        .collect();
    json!({
        "currentReplicas": s.current_replicas.unwrap_or(0),
        "desiredReplicas": s.desired_replicas.unwrap_or(0),
        "lastScaleTime": s.last_scale_time.map(|t| t.to_string()),
        "currentMetrics": if s.current_metrics.is_empty() { Value::Null } else { json!(s.current_metrics) },
        "conditions": if conditions.is_empty() { Value::Null } else { json!(conditions) },
    })
}

fn compare_history(
    field: &str,
    expected: &Value,
    actual: &[(i32, Timestamp)],
    key: &str,
) -> Result<(), String> {
    let exp = expected.as_array().cloned().unwrap_or_default();
    let same = exp.len() == actual.len()
        && exp.iter().zip(actual).all(|(e, (v, t))| {
            e.get(key) == Some(&json!(v)) && same_instant(&e["timestamp"], &json!(t.to_string()))
        });
    if same {
        Ok(())
    } else {
        let got: Vec<String> = actual.iter().map(|(v, t)| format!("{v}@{t}")).collect();
        Err(format!(
            "{field}: expected {expected}, got [{}]",
            got.join(", ")
        ))
    }
}

pub fn check(input: &Value, expect: &Value, kubernetes: KubernetesVersion) -> Result<(), String> {
    let cfg = common::config(input);
    let now = common::now(input)?;
    let hpa: HorizontalPodAutoscaler = common::field(input, "hpa")?;
    let config = ControllerConfig {
        tolerance: cfg.tolerance,
        cpu_initialization_period_seconds: cfg.readiness.cpu_initialization_period.as_secs(),
        initial_readiness_delay_seconds: cfg.readiness.initial_readiness_delay.as_secs(),
        downscale_stabilization_seconds: cfg.downscale_window,
        kubernetes,
        ..Default::default()
    };
    let namespace = hpa
        .metadata
        .namespace
        .clone()
        .unwrap_or_else(|| "test-namespace".to_owned());
    let name = hpa.metadata.name.clone().unwrap_or_default();
    let autoscaler =
        Autoscaler::compile_unchecked(&namespace, &name, &spec_from_hpa(&hpa.spec), &config);
    let scale: ScaleJson = common::field(input, "scale")?;
    let pods: Vec<PodJson> =
        common::field::<Option<Vec<PodJson>>>(input, "pods")?.unwrap_or_default();
    let metrics: MetricsJson =
        common::field::<Option<MetricsJson>>(input, "metrics")?.unwrap_or_default();
    let observation =
        snapshot::observation(&autoscaler, &scale, &pods, &metrics).map_err(|e| e.to_string())?;
    let prior = hpa.status.as_ref().map(status_from_hpa).unwrap_or_default();
    let state: StateJson = common::field::<Option<StateJson>>(input, "state")?.unwrap_or_default();
    let history = ScalingHistory {
        recommendations: state.recommendations.unwrap_or_default(),
        scale_up_events: state.scale_up_events.unwrap_or_default(),
        scale_down_events: state.scale_down_events.unwrap_or_default(),
    };

    let decision = decide(&autoscaler, &observation, prior.clone(), history, now);
    let (outcome, written) = match (decision.scale_to, &scale.update_error) {
        (None, _) => (ScaleOutcome::NotAttempted, None),
        (Some(_), Some(e)) => (ScaleOutcome::Failed(e.clone()), None),
        (Some(n), None) => (ScaleOutcome::Applied { at: now }, Some(n)),
    };
    let result = decision.finish(&autoscaler, outcome);

    expect_eq(
        "reconcileError",
        &expect["reconcileError"],
        &json!(result.error),
    )?;
    expect_eq("scaleUpdate", &expect["scaleUpdate"], &json!(written))?;
    let before = project(&prior);
    let after = project(&result.status);
    expect_eq(
        "statusWritten",
        &expect["statusWritten"],
        &json!(before != after),
    )?;
    let exp_status = &expect["status"];
    for key in [
        "currentReplicas",
        "desiredReplicas",
        "currentMetrics",
        "conditions",
    ] {
        expect_eq(&format!("status.{key}"), &exp_status[key], &after[key])?;
    }
    if !same_instant(&exp_status["lastScaleTime"], &after["lastScaleTime"]) {
        return Err(format!(
            "status.lastScaleTime: expected {}, got {}",
            exp_status["lastScaleTime"], after["lastScaleTime"]
        ));
    }
    let events: Vec<Value> = result
        .events
        .iter()
        .map(|e| json!({"type": e.type_.as_str(), "reason": e.reason, "message": e.message}))
        .collect();
    expect_eq(
        "events",
        &expect["events"],
        &if events.is_empty() {
            Value::Null
        } else {
            json!(events)
        },
    )?;
    let state_after = &expect["stateAfter"];
    let h = &result.history;
    let recs: Vec<(i32, Timestamp)> = h
        .recommendations
        .iter()
        .map(|r| (r.replicas, r.timestamp))
        .collect();
    compare_history(
        "stateAfter.recommendations",
        &state_after["recommendations"],
        &recs,
        "replicas",
    )?;
    let up: Vec<(i32, Timestamp)> = h
        .scale_up_events
        .iter()
        .map(|e| (e.replica_change, e.timestamp))
        .collect();
    compare_history(
        "stateAfter.scaleUpEvents",
        &state_after["scaleUpEvents"],
        &up,
        "replicaChange",
    )?;
    let down: Vec<(i32, Timestamp)> = h
        .scale_down_events
        .iter()
        .map(|e| (e.replica_change, e.timestamp))
        .collect();
    compare_history(
        "stateAfter.scaleDownEvents",
        &state_after["scaleDownEvents"],
        &down,
        "replicaChange",
    )
}

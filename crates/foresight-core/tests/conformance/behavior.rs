//! Kind `behavior`: normalization stages (stabilization, rate limits, legacy clamp, scale
//! events), alone and end to end.

use foresight_api::hpa::HorizontalPodAutoscalerBehavior;
use foresight_api::status::{Recommendation, ScaleEvent};
use foresight_core::behavior::{
    changed_within, legacy_clamp, legacy_stabilize, normalize, rate_limit, record_rescale,
    scale_limit, stabilize, store_scale_event, Behavior, Direction, LegacyScaleUpLimit,
    NormalizeArgs, Rules,
};
use jiff::Timestamp;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::common::{self, expect_eq, same_instant};

fn events(input: &Value, key: &str) -> Result<Vec<ScaleEvent>, String> {
    Ok(common::field::<Option<Vec<ScaleEvent>>>(input, key)?.unwrap_or_default())
}

fn recommendations(input: &Value) -> Result<Vec<Recommendation>, String> {
    Ok(common::field::<Option<Vec<Recommendation>>>(input, "recommendations")?.unwrap_or_default())
}

fn api_behavior(input: &Value) -> Result<Option<HorizontalPodAutoscalerBehavior>, String> {
    common::field(input, "behavior")
}

fn downscale_window(input: &Value) -> i64 {
    input
        .get("downscaleStabilizationWindowSeconds")
        .and_then(Value::as_i64)
        .unwrap_or(300)
}

fn legacy_limit(input: &Value) -> LegacyScaleUpLimit {
    LegacyScaleUpLimit {
        factor: input
            .get("scaleUpLimitFactor")
            .and_then(Value::as_f64)
            .unwrap_or(2.0),
        minimum: input
            .get("scaleUpLimitMinimum")
            .and_then(Value::as_f64)
            .unwrap_or(4.0),
    }
}

fn compare_list(
    field: &str,
    expected: &Value,
    actual: &[(i32, Timestamp)],
    key: &str,
) -> Result<(), String> {
    let exp = expected.as_array().cloned().unwrap_or_default();
    let fail = || {
        let got: Vec<String> = actual.iter().map(|(v, t)| format!("{v}@{t}")).collect();
        Err(format!(
            "{field}: expected {expected}, got [{}]",
            got.join(", ")
        ))
    };
    if exp.len() != actual.len() {
        return fail();
    }
    for (e, (v, t)) in exp.iter().zip(actual) {
        if e.get(key) != Some(&json!(v)) || !same_instant(&e["timestamp"], &json!(t.to_string())) {
            return fail();
        }
    }
    Ok(())
}

fn compare_events(field: &str, expected: &Value, actual: &[ScaleEvent]) -> Result<(), String> {
    let pairs: Vec<(i32, Timestamp)> = actual
        .iter()
        .map(|e| (e.replica_change, e.timestamp))
        .collect();
    compare_list(field, expected, &pairs, "replicaChange")?;
    for (e, a) in expected.as_array().into_iter().flatten().zip(actual) {
        if let Some(o) = e.get("outdated") {
            expect_eq(&format!("{field}.outdated"), o, &json!(a.outdated))?;
        }
    }
    Ok(())
}

/// The state one `normalize` step works on.
struct State {
    recommendations: Vec<Recommendation>,
    up: Vec<ScaleEvent>,
    down: Vec<ScaleEvent>,
}

/// One reconcile's normalization, as the schema describes `normalize`.
fn normalize_step(
    state: &mut State,
    behavior: Option<&Behavior>,
    input: &Value,
    current: i32,
    desired: i32,
    now: Timestamp,
    expect: &Value,
) -> Result<i32, String> {
    if state.recommendations.is_empty() {
        state.recommendations.push(Recommendation {
            replicas: current,
            timestamp: now,
        });
    }
    let n = normalize(
        &mut state.recommendations,
        &state.up,
        &state.down,
        NormalizeArgs {
            behavior,
            current,
            desired,
            min_replicas: common::field(input, "minReplicas")?,
            max_replicas: common::field(input, "maxReplicas")?,
            legacy_window_seconds: downscale_window(input),
            legacy_limit: legacy_limit(input),
            hold_scale_down: true,
            now,
        },
    );
    if n.replicas != current {
        record_rescale(
            &mut state.up,
            &mut state.down,
            behavior,
            current,
            n.replicas,
            now,
        );
    }
    expect_eq("replicas", &expect["replicas"], &json!(n.replicas))?;
    expect_eq(
        "ableToScaleReason",
        &expect["ableToScaleReason"],
        &json!(n.stabilization.reason()),
    )?;
    let limited = if n.replicas != n.stabilized {
        "True"
    } else {
        "False"
    };
    expect_eq(
        "scalingLimitedStatus",
        &expect["scalingLimitedStatus"],
        &json!(limited),
    )?;
    expect_eq(
        "scalingLimitedReason",
        &expect["scalingLimitedReason"],
        &json!(n.limit.reason()),
    )?;
    expect_eq(
        "scalingLimitedMessage",
        &expect["scalingLimitedMessage"],
        &json!(n.limit.message()),
    )?;
    let recs: Vec<(i32, Timestamp)> = state
        .recommendations
        .iter()
        .map(|r| (r.replicas, r.timestamp))
        .collect();
    compare_list(
        "recommendationsAfter",
        &expect["recommendationsAfter"],
        &recs,
        "replicas",
    )?;
    compare_events(
        "scaleUpEventsAfter",
        &expect["scaleUpEventsAfter"],
        &state.up,
    )?;
    compare_events(
        "scaleDownEventsAfter",
        &expect["scaleDownEventsAfter"],
        &state.down,
    )?;
    Ok(n.replicas)
}

pub fn check(input: &Value, expect: &Value) -> Result<(), String> {
    let op = input
        .get("operation")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let now = common::now(input)?;
    let api = api_behavior(input)?;
    let behavior = api
        .as_ref()
        .map(|b| Behavior::from_api(b, downscale_window(input)));
    match op {
        "normalize" => {
            let mut state = State {
                recommendations: recommendations(input)?,
                up: events(input, "scaleUpEvents")?,
                down: events(input, "scaleDownEvents")?,
            };
            let current = common::field(input, "currentReplicas")?;
            let desired = common::field(input, "desiredReplicas")?;
            normalize_step(
                &mut state,
                behavior.as_ref(),
                input,
                current,
                desired,
                now,
                expect,
            )
            .map(|_| ())
        }
        "sequence" => {
            #[derive(Deserialize)]
            #[serde(rename_all = "camelCase")]
            struct Step {
                now: Timestamp,
                desired_replicas: i32,
            }
            let steps: Vec<Step> = common::field(input, "steps")?;
            let expected = expect["steps"].as_array().cloned().unwrap_or_default();
            if expected.len() != steps.len() {
                return Err(format!(
                    "expected {} steps, case has {}",
                    expected.len(),
                    steps.len()
                ));
            }
            let mut state = State {
                recommendations: Vec::new(),
                up: Vec::new(),
                down: Vec::new(),
            };
            let mut current: i32 = common::field(input, "initialReplicas")?;
            for (i, (step, exp)) in steps.iter().zip(&expected).enumerate() {
                current = normalize_step(
                    &mut state,
                    behavior.as_ref(),
                    input,
                    current,
                    step.desired_replicas,
                    step.now,
                    exp,
                )
                .map_err(|e| format!("step {i}: {e}"))?;
            }
            Ok(())
        }
        "rate_limit" => {
            let b = behavior.ok_or("rate_limit needs a behavior")?;
            let (replicas, reason) = rate_limit(
                common::field(input, "currentReplicas")?,
                common::field(input, "desiredReplicas")?,
                common::field(input, "minReplicas")?,
                common::field(input, "maxReplicas")?,
                &b,
                &events(input, "scaleUpEvents")?,
                &events(input, "scaleDownEvents")?,
                now,
            );
            expect_eq("replicas", &expect["replicas"], &json!(replicas))?;
            expect_eq(
                "scalingLimitedReason",
                &expect["scalingLimitedReason"],
                &json!(reason.reason()),
            )
        }
        "stabilize" => {
            let b = api.ok_or("stabilize needs a behavior")?;
            let window = |r: &Option<foresight_api::hpa::HpaScalingRules>| {
                r.as_ref()
                    .and_then(|r| r.stabilization_window_seconds)
                    .map(i64::from)
                    .unwrap_or(0)
            };
            let mut recs = recommendations(input)?;
            let (replicas, _) = stabilize(
                &mut recs,
                common::field(input, "currentReplicas")?,
                common::field(input, "desiredReplicas")?,
                window(&b.scale_up),
                window(&b.scale_down),
                now,
            );
            expect_eq("replicas", &expect["replicas"], &json!(replicas))?;
            if let Some(after) = expect.get("recommendationsAfter") {
                let values: Vec<i32> = recs.iter().map(|r| r.replicas).collect();
                expect_eq("recommendationsAfter", after, &json!(values))?;
            }
            Ok(())
        }
        "legacy_stabilize" => {
            let mut recs = recommendations(input)?;
            let replicas = legacy_stabilize(
                &mut recs,
                common::field(input, "desiredReplicas")?,
                downscale_window(input),
                now,
            );
            expect_eq("replicas", &expect["replicas"], &json!(replicas))?;
            expect_eq(
                "recommendationsCountAfter",
                &expect["recommendationsCountAfter"],
                &json!(recs.len()),
            )
        }
        "legacy_clamp" => {
            let (replicas, reason) = legacy_clamp(
                common::field(input, "currentReplicas")?,
                common::field(input, "desiredReplicas")?,
                common::field(input, "minReplicas")?,
                common::field(input, "maxReplicas")?,
                legacy_limit(input),
            );
            expect_eq("replicas", &expect["replicas"], &json!(replicas))?;
            expect_eq(
                "scalingLimitedReason",
                &expect["scalingLimitedReason"],
                &json!(reason.reason()),
            )
        }
        "scale_limit" => {
            let b = api.ok_or("scale_limit needs a behavior")?;
            let direction: String = common::field(input, "direction")?;
            let (dir, rules) = match direction.as_str() {
                "up" => (Direction::Up, b.scale_up),
                _ => (Direction::Down, b.scale_down),
            };
            let rules = Rules::from_api(&rules.ok_or("the direction's rules are missing")?, 0);
            let limit = scale_limit(
                dir,
                common::field(input, "currentReplicas")?,
                &rules,
                &events(input, "scaleUpEvents")?,
                &events(input, "scaleDownEvents")?,
                now,
            );
            expect_eq("limit", &expect["limit"], &json!(limit))
        }
        "store_event" => {
            let direction: String = common::field(input, "direction")?;
            let key = if direction == "up" {
                "scaleUpEvents"
            } else {
                "scaleDownEvents"
            };
            let mut list = events(input, key)?;
            let rules = api.and_then(|b| {
                if direction == "up" {
                    b.scale_up
                } else {
                    b.scale_down
                }
            });
            if let Some(before) = expect.get("replicaChangeInPeriodBefore") {
                let period = before["periodSeconds"].as_i64().unwrap_or(0) as i32;
                expect_eq(
                    "replicaChangeInPeriodBefore",
                    &before["value"],
                    &json!(changed_within(&list, period, now)),
                )?;
            }
            if let Some(rules) = rules {
                let rules = Rules::from_api(&rules, 0);
                let prev: i32 = common::field(input, "prevReplicas")?;
                let new: i32 = common::field(input, "newReplicas")?;
                store_scale_event(&mut list, &rules, (new - prev).abs(), now);
            }
            let after: Vec<Value> = list
                .iter()
                .map(|e| json!({"replicaChange": e.replica_change, "outdated": e.outdated}))
                .collect();
            // A list Kubernetes never created serializes as null.
            let actual = if after.is_empty() {
                Value::Null
            } else {
                json!(after)
            };
            let expected = if expect["eventsAfter"] == json!([]) {
                Value::Null
            } else {
                expect["eventsAfter"].clone()
            };
            expect_eq("eventsAfter", &expected, &actual)
        }
        other => Err(format!("unknown behavior operation {other:?}")),
    }
}

//! Kind `validation`: `ValidateHorizontalPodAutoscaler`, error for error.

use foresight_api::hpa::HorizontalPodAutoscaler;
use foresight_api::validation::{validate_hpa_spec, ValidationOptions};
use serde_json::{json, Value};

use crate::common::{self, expect_eq};

pub fn check(input: &Value, expect: &Value) -> Result<(), String> {
    let hpa: HorizontalPodAutoscaler = common::field(input, "object")?;
    let scale_to_zero = input
        .pointer("/featureGates/HPAScaleToZero")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let opts = ValidationOptions {
        min_replicas_lower_bound: if scale_to_zero { 0 } else { 1 },
        allow_prometheus: false,
    };
    let errors = validate_hpa_spec(&hpa.spec, opts);
    expect_eq("valid", &expect["valid"], &json!(errors.is_empty()))?;
    let actual: Vec<Value> = errors
        .iter()
        .map(|e| {
            let mut v = json!({"field": e.field, "type": e.type_});
            if !e.detail.is_empty() {
                v["detail"] = json!(e.detail);
            }
            v
        })
        .collect();
    expect_eq(
        "errors",
        expect.get("errors").unwrap_or(&json!([])),
        &json!(actual),
    )
}

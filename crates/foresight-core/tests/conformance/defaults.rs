//! Kind `defaults`: API defaulting of behavior directions and whole HPAs.

use foresight_api::defaults::{
    default_hpa_spec, generate_scale_down_rules, generate_scale_up_rules,
};
use foresight_api::hpa::{HorizontalPodAutoscaler, HorizontalPodAutoscalerBehavior};
use serde_json::{json, Value};

use crate::common::{self, expect_eq};

pub fn check(input: &Value, expect: &Value) -> Result<(), String> {
    if let Some(object) = input.get("object") {
        let mut hpa: HorizontalPodAutoscaler =
            serde_json::from_value(object.clone()).map_err(|e| e.to_string())?;
        default_hpa_spec(&mut hpa.spec);
        let actual = serde_json::to_value(&hpa.spec).map_err(|e| e.to_string())?;
        return expect_eq("object.spec", &expect["object"]["spec"], &actual);
    }
    let behavior: HorizontalPodAutoscalerBehavior = common::field(input, "behavior")?;
    let direction = expect["direction"].as_str().unwrap_or_default();
    let rules = match direction {
        "up" => generate_scale_up_rules(behavior.scale_up.as_ref()),
        _ => generate_scale_down_rules(behavior.scale_down.as_ref()),
    };
    expect_eq("rules", &expect["rules"], &json!(rules))
}

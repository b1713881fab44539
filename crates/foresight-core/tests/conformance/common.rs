//! Helpers shared by the kind checkers.

#![allow(dead_code)]

use foresight_core::pods::Readiness;
use foresight_core::replicas::Tolerance;
use foresight_core::version::KubernetesVersion;
use jiff::{SignedDuration, Timestamp};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Compares one expected field with the actual value, naming the field on mismatch.
pub fn expect_eq(field: &str, expected: &Value, actual: &Value) -> Result<(), String> {
    if expected == actual {
        Ok(())
    } else {
        Err(format!("{field}: expected {expected}, got {actual}"))
    }
}

/// Deserializes `v[key]` (or `null` when absent) into `T`.
pub fn field<T: DeserializeOwned>(v: &Value, key: &str) -> Result<T, String> {
    serde_json::from_value(v.get(key).cloned().unwrap_or(Value::Null))
        .map_err(|e| format!("input.{key}: {e}"))
}

/// `now`.
pub fn now(input: &Value) -> Result<Timestamp, String> {
    field(input, "now")
}

/// The controller flags of `input.config`.
pub struct Config {
    pub tolerance: f64,
    pub readiness: Readiness,
    pub downscale_window: i64,
}

pub fn config(input: &Value) -> Config {
    let c = input.get("config").cloned().unwrap_or(Value::Null);
    let num = |k: &str, d: f64| c.get(k).and_then(Value::as_f64).unwrap_or(d);
    Config {
        tolerance: num("tolerance", 0.1),
        readiness: Readiness {
            cpu_initialization_period: SignedDuration::from_secs(num(
                "cpuInitializationPeriodSeconds",
                300.0,
            ) as i64),
            initial_readiness_delay: SignedDuration::from_secs(num(
                "delayOfInitialReadinessStatusSeconds",
                30.0,
            ) as i64),
        },
        downscale_window: num("downscaleStabilizationWindowSeconds", 300.0) as i64,
    }
}

impl Config {
    pub fn tolerance(&self, kubernetes: KubernetesVersion) -> Tolerance {
        Tolerance::symmetric(self.tolerance, kubernetes)
    }
}

/// Two timestamps given as JSON strings denote the same instant.
pub fn same_instant(a: &Value, b: &Value) -> bool {
    match (
        a.as_str().and_then(|s| s.parse::<Timestamp>().ok()),
        b.as_str().and_then(|s| s.parse::<Timestamp>().ok()),
    ) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// Sorted copy of a JSON string array.
pub fn sorted_strings(v: &Value) -> Vec<String> {
    let mut out: Vec<String> = v
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_owned))
        .collect();
    out.sort();
    out
}

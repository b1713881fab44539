//! Helpers shared by the kind checkers.

#![allow(dead_code)]

use serde_json::Value;

/// Compares one expected field with the actual value, naming the field on mismatch.
pub fn expect_eq(field: &str, expected: &Value, actual: &Value) -> Result<(), String> {
    if expected == actual {
        Ok(())
    } else {
        Err(format!("{field}: expected {expected}, got {actual}"))
    }
}

//! Kind `cron`: which crons are active at `now`, the cron proposal, and the next transition;
//! or, for invalid crons, the path of the offending field.
//!
//! `Local` is read as UTC here: the cases are meant to be independent of the machine.

use foresight_api::cron::CronSpec;
use foresight_core::cron::{cron_proposal, CronSet};
use jiff::tz::TimeZone;
use jiff::Timestamp;
use serde_json::{json, Value};

use crate::common::expect_eq;

/// Runs one `cron` case.
pub fn check(input: &Value, expect: &Value) -> Result<(), String> {
    let crons: Vec<CronSpec> =
        serde_json::from_value(input.get("crons").cloned().unwrap_or(Value::Null))
            .map_err(|e| format!("input.crons: {e}"))?;
    let now: Timestamp = input
        .get("now")
        .and_then(Value::as_str)
        .ok_or("input.now: missing")?
        .parse()
        .map_err(|e| format!("input.now: {e}"))?;
    let current = input
        .get("currentReplicas")
        .and_then(Value::as_i64)
        .ok_or("input.currentReplicas: missing")?;
    let current = i32::try_from(current).map_err(|e| format!("input.currentReplicas: {e}"))?;
    let cron_only = input
        .get("cronOnly")
        .and_then(Value::as_bool)
        .unwrap_or(false);

    let compiled = CronSet::compile(&crons, &TimeZone::UTC);
    if let Some(expected) = expect.get("error") {
        let expected_path = expected.get("path").cloned().unwrap_or(Value::Null);
        return match compiled {
            Ok(_) => Err(format!("expected an error at {expected_path}, got none")),
            Err(errs) => {
                // Each invalid case has exactly one offending field: every error must be on it.
                let paths: Vec<Value> = errs.iter().map(|e| json!(e.field)).collect();
                match paths.iter().find(|p| **p != expected_path) {
                    None => Ok(()),
                    Some(_) => Err(format!(
                        "error.path: expected only {expected_path}, got {}",
                        json!(paths)
                    )),
                }
            }
        };
    }
    let set = compiled.map_err(|errs| {
        let messages: Vec<String> = errs.iter().map(ToString::to_string).collect();
        format!("unexpected validation errors: {}", messages.join("; "))
    })?;
    let state = set.evaluate(now);
    let active: Vec<&str> = state.active.iter().map(|a| a.name.as_str()).collect();
    expect_eq(
        "active",
        expect.get("active").unwrap_or(&Value::Null),
        &json!(active),
    )?;
    expect_eq(
        "proposal",
        expect.get("proposal").unwrap_or(&Value::Null),
        &json!(cron_proposal(&state, current, cron_only)),
    )?;
    expect_eq(
        "nextTransition",
        expect.get("nextTransition").unwrap_or(&Value::Null),
        &json!(state.next_transition.map(|t| t.to_string())),
    )
}

/// The `cron` cases alone, so that the cron source can be checked while other kinds are
/// still unimplemented in the shared `conformance` test.
#[test]
fn cron_cases() {
    let mut files = Vec::new();
    for dir in crate::case_dirs() {
        crate::collect(&dir, &mut files);
    }
    let mut passed = 0usize;
    let mut failures = Vec::new();
    for path in &files {
        let case = match crate::load(path) {
            Ok(case) => case,
            Err(e) => {
                failures.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        if case.kind != "cron" {
            continue;
        }
        match check(&case.input, &case.expect) {
            Ok(()) => passed += 1,
            Err(e) => failures.push(format!("{} ({}): {e}", case.name, path.display())),
        }
    }
    for f in &failures {
        println!("FAIL {f}");
    }
    println!(
        "cron conformance: {passed} passed, {} failed",
        failures.len()
    );
    assert!(passed > 0, "no cron cases found");
    assert!(
        failures.is_empty(),
        "{} cron case(s) failed; see FAIL lines above",
        failures.len()
    );
}

//! The conformance harness: runs every decision case under `tests/conformance/` (and, when
//! `FORESIGHT_CONFORMANCE_DIR` is set, every case file under that directory too) against the
//! decision core, reports each failing case by name with expected vs actual, and prints
//! `conformance: N passed, M failed`.
//!
//! Expected outputs were produced by the real Kubernetes controller code (kinds `replicas`,
//! `grouping`, `behavior`, `controller`, `defaults`, `validation`) or by an independent oracle
//! of Foresight's cron contract (kind `cron`). A case decides as the Kubernetes release its
//! top-level `"kubernetes"` names ("1.37"); a case that names none is v1.28.4's and is run as
//! 1.28. A kind this harness does not know counts as failed, never as skipped.

use std::path::{Path, PathBuf};

use foresight_core::version::KubernetesVersion;
use serde_json::Value;

mod behavior;
mod common;
mod controller;
mod cron;
mod defaults;
mod grouping;
mod replicas;
mod validation;

/// One case file.
struct Case {
    path: PathBuf,
    name: String,
    kind: String,
    /// The release the case's expectations are that of.
    kubernetes: KubernetesVersion,
    input: Value,
    expect: Value,
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
}

fn load(path: &Path) -> Result<Case, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("not JSON: {e}"))?;
    let name = v
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| {
            path.file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        });
    let kubernetes = match v.get("kubernetes") {
        None | Some(Value::Null) => KubernetesVersion::V1_28,
        Some(Value::String(s)) => s.parse().map_err(|e| format!("kubernetes: {e}"))?,
        Some(other) => return Err(format!("kubernetes: expected a string, got {other}")),
    };
    Ok(Case {
        path: path.to_owned(),
        kubernetes,
        name,
        kind: v
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        input: v.get("input").cloned().unwrap_or(Value::Null),
        expect: v.get("expect").cloned().unwrap_or(Value::Null),
    })
}

fn check(case: &Case) -> Result<(), String> {
    match case.kind.as_str() {
        "replicas" => replicas::check(&case.input, &case.expect, case.kubernetes),
        "grouping" => grouping::check(&case.input, &case.expect),
        "behavior" => behavior::check(&case.input, &case.expect),
        "controller" => controller::check(&case.input, &case.expect, case.kubernetes),
        "defaults" => defaults::check(&case.input, &case.expect),
        "validation" => validation::check(&case.input, &case.expect),
        "cron" => cron::check(&case.input, &case.expect),
        other => Err(format!("kind {other:?} is not handled by the harness")),
    }
}

fn case_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance")];
    if let Some(extra) = std::env::var_os("FORESIGHT_CONFORMANCE_DIR") {
        dirs.push(PathBuf::from(extra));
    }
    dirs
}

#[test]
fn conformance() {
    let mut files = Vec::new();
    for dir in case_dirs() {
        assert!(
            dir.is_dir(),
            "conformance directory {} does not exist",
            dir.display()
        );
        collect(&dir, &mut files);
    }
    let mut passed = std::collections::BTreeMap::<KubernetesVersion, usize>::new();
    let mut failures = Vec::new();
    for path in &files {
        let outcome = load(path).and_then(|case| {
            std::panic::catch_unwind(|| check(&case))
                .unwrap_or_else(|_| Err("panicked".to_owned()))
                .map(|()| case.kubernetes)
                .map_err(|e| {
                    format!(
                        "{} (Kubernetes {}, {}): {e}",
                        case.name,
                        case.kubernetes,
                        case.path.display()
                    )
                })
        });
        match outcome {
            Ok(version) => *passed.entry(version).or_default() += 1,
            Err(e) => failures.push(e),
        }
    }
    for f in &failures {
        println!("FAIL {f}");
    }
    for (version, n) in &passed {
        println!("conformance at Kubernetes {version}: {n} passed");
    }
    let passed: usize = passed.values().sum();
    println!("conformance: {passed} passed, {} failed", failures.len());
    assert!(passed + failures.len() > 0, "no conformance cases found");
    assert!(
        failures.is_empty(),
        "{} conformance case(s) failed; see FAIL lines above",
        failures.len()
    );
}

//! `foresight validate` against a table of hand-written bad manifests: each must be rejected
//! with the field path of its problem, the valid examples accepted, and malformed YAML
//! reported with its line and column.

// Each test crate uses a part of the shared cases.
#[allow(dead_code)]
mod validation_cases;

use std::io::Write;
use std::process::Command;

use validation_cases::{manifest, BAD, BASE};

fn validate(text: &str) -> (bool, String) {
    let mut file = tempfile::Builder::new()
        .suffix(".yaml")
        .tempfile()
        .expect("temp file");
    file.write_all(text.as_bytes()).expect("write manifest");
    let out = Command::new(env!("CARGO_BIN_EXE_foresight"))
        .arg("validate")
        .arg(file.path())
        .output()
        .expect("run foresight validate");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn rejects_every_bad_manifest_with_its_field_path() {
    assert!(BAD.len() >= 30);
    let mut failures = Vec::new();
    for case in BAD {
        let (ok, out) = validate(&manifest(case.spec));
        let (case, path) = (case.name, case.path);
        if ok || !out.contains(&format!(": {path}:")) {
            failures.push(format!("{case}: expected a problem at {path}, got:\n{out}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn accepts_valid_manifests() {
    let (ok, out) = validate(BASE);
    assert!(ok, "{out}");
    let full = format!(
        "{BASE}  metrics:\n  - type: Resource\n    resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 60}}}}\n  behavior:\n    scaleDown: {{stabilizationWindowSeconds: 120}}\n---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {{name: api}}\nspec:\n  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: api}}\n  maxReplicas: 5\n"
    );
    let (ok, out) = validate(&full);
    assert!(ok, "{out}");
    assert!(out.contains("2 document(s) valid"), "{out}");
}

#[test]
fn scale_to_zero_needs_a_source_that_sees_load_without_pods() {
    let cpu_only = "  minReplicas: 0\n  metrics:\n  - type: Resource\n    resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}\n";
    let (ok, out) = validate(&manifest(cpu_only));
    assert!(!ok && out.contains("spec.metrics"), "{out}");
    assert!(out.contains("scaling to zero"), "says why: {out}");
    let prometheus = "  minReplicas: 0\n  metrics:\n  - type: Prometheus\n    prometheus: {name: rps, query: 'sum(rate(http_requests_total[1m]))', target: {type: AverageValue, averageValue: '10'}}\n";
    let (ok, out) = validate(&manifest(prometheus));
    assert!(ok, "a Prometheus metric sees load without pods: {out}");
    let cron = "  minReplicas: 0\n  crons:\n  - {name: office, timezone: Europe/Paris, start: '0 8 * * 1-5', end: '0 18 * * 1-5', targetReplicas: 3}\n";
    let (ok, out) = validate(&manifest(cron));
    assert!(ok, "a cron wakes the target: {out}");
    let keda_like = "  minReplicas: 0\n  idle: {cooldownSeconds: 300}\n  fallback: {failureThreshold: 3, replicas: 4, behavior: CurrentReplicasIfHigher}\n  metrics:\n  - type: External\n    activation: '5'\n    external: {metric: {name: queue}, target: {type: AverageValue, averageValue: '10'}}\n";
    let (ok, out) = validate(&manifest(keda_like));
    assert!(ok, "{out}");
}

#[test]
fn reports_every_problem_of_a_document() {
    let (ok, out) = validate(&manifest("  maxReplicas: 0\n  syncPeriodSeconds: 0\n"));
    assert!(!ok);
    assert!(
        out.contains("spec.maxReplicas") && out.contains("spec.syncPeriodSeconds"),
        "{out}"
    );
}

#[test]
fn malformed_yaml_gives_line_and_column() {
    let (ok, out) = validate("spec:\n  maxReplicas: [1, 2\n  minReplicas: 3\n");
    assert!(!ok);
    assert!(out.contains("line ") && out.contains("column "), "{out}");
}

//! Formula metrics from the command line: a KEDA ScaledObject with `scalingModifiers` imports
//! to a formula metric that `validate` accepts and that `simulate` runs exactly as the same
//! autoscaler written by hand; a formula that cannot be read is refused with its field and
//! column, by `import` and by `validate`; `explain --snapshot` evaluates it, and names the
//! input that failed.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn foresight(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_foresight"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the foresight binary runs");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stdin.as_bytes())
        .expect("stdin accepts the manifest");
    child.wait_with_output().expect("the command finishes")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The issue's ScaledObject: two Prometheus triggers and their mean against a target of 2.
const SCALED_OBJECT: &str = r#"
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: worker}
spec:
  scaleTargetRef: {name: worker}
  minReplicaCount: 1
  maxReplicaCount: 40
  advanced:
    scalingModifiers:
      formula: "(trig_one + trig_two) / 2"
      target: "2"
  triggers:
  - type: prometheus
    name: trig_one
    metadata: {query: "sum(rate(jobs_total[1m]))", threshold: "8"}
  - type: prometheus
    name: trig_two
    metadata: {query: "sum(rate(requests_total[1m]))", threshold: "3"}
"#;

/// The same autoscaler written by hand as a Foresight formula metric.
const BY_HAND: &str = r#"
apiVersion: autoscaling.foresight.dev/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata: {name: worker}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: worker}
  minReplicas: 1
  maxReplicas: 40
  metrics:
  - type: Formula
    formula:
      name: mean
      formula: "(jobs + requests) / 2"
      inputs:
      - {name: jobs, type: Prometheus, prometheus: {query: "sum(rate(jobs_total[1m]))"}}
      - {name: requests, type: Prometheus, prometheus: {query: "sum(rate(requests_total[1m]))"}}
      target: {type: AverageValue, averageValue: "2"}
"#;

/// `foresight simulate --json` scores of `spec` on two synthetic days with an hour-long
/// metric outage (so a formula whose inputs fail is exercised too).
fn simulated(dir: &Path, spec: &str) -> serde_json::Value {
    let path = dir.join("spec.yaml");
    std::fs::write(&path, spec).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_foresight"))
        .args([
            "simulate",
            "--synthetic",
            "--days",
            "2",
            "--outage",
            "1d,1h",
        ])
        .args(["--no-frontier", "--quiet", "--json", "--spec"])
        .arg(&path)
        .arg("--out")
        .arg(dir.join("r"))
        .output()
        .expect("simulate runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    summary["policies"].clone()
}

#[test]
fn scaling_modifiers_import_validate_and_simulate_as_written_by_hand() {
    let out = foresight(&["import", "-"], SCALED_OBJECT);
    let imported = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(imported.contains("type: Formula"), "{imported}");
    assert!(!stderr.contains("scalingModifiers dropped"), "{stderr}");

    let valid = foresight(&["validate", "-"], &imported);
    assert!(
        valid.status.success(),
        "the imported manifest validates: {}{}",
        text(&valid.stdout),
        text(&valid.stderr)
    );

    let dir = tempfile::tempdir().unwrap();
    let from_keda = simulated(dir.path(), &imported);
    let by_hand = simulated(dir.path(), BY_HAND);
    assert_eq!(from_keda, by_hand);
    assert!(from_keda[0]["replica_hours"].as_f64().unwrap() > 0.0);

    // The formula is evaluated, not passed over: the simulation feeds every input the served
    // load, so the mean scales as that load would against the same target, and the sum (twice
    // the load) scales differently.
    let one_query = BY_HAND.replace(
        "  - type: Formula\n    formula:\n      name: mean\n      formula: \"(jobs + requests) / 2\"\n      inputs:\n      - {name: jobs, type: Prometheus, prometheus: {query: \"sum(rate(jobs_total[1m]))\"}}\n      - {name: requests, type: Prometheus, prometheus: {query: \"sum(rate(requests_total[1m]))\"}}\n      target: {type: AverageValue, averageValue: \"2\"}\n",
        "  - type: Prometheus\n    prometheus: {name: jobs, query: \"sum(rate(jobs_total[1m]))\", target: {type: AverageValue, averageValue: \"2\"}}\n",
    );
    assert_ne!(one_query, BY_HAND);
    assert_eq!(simulated(dir.path(), &one_query), by_hand);
    let sum = BY_HAND.replace("(jobs + requests) / 2", "jobs + requests");
    assert_ne!(simulated(dir.path(), &sum), by_hand);
}

#[test]
fn a_formula_that_cannot_be_read_is_refused_with_its_field_and_column() {
    let bad = SCALED_OBJECT.replace("(trig_one + trig_two) / 2", "(trig_one + ) / 2");
    let out = foresight(&["import", "-"], &bad);
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing to apply");
    assert!(
        stderr.contains("spec.advanced.scalingModifiers.formula"),
        "{stderr}"
    );
    assert!(
        stderr.contains("column 13: cannot read \")\" here: an operand"),
        "{stderr}"
    );

    let bad = BY_HAND.replace("(jobs + requests) / 2", "(jobs + requests) / 2 *");
    let out = foresight(&["validate", "-"], &bad);
    let report = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(!out.status.success(), "{report}");
    assert!(
        report.contains("spec.metrics[0].formula.formula"),
        "{report}"
    );
    assert!(
        report.contains("column 24: the formula ends after \"*\""),
        "{report}"
    );

    let unknown = BY_HAND.replace("(jobs + requests) / 2", "(jobs + queue) / 2");
    let out = foresight(&["validate", "-"], &unknown);
    let report = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(!out.status.success(), "{report}");
    assert!(
        report.contains("reads \"queue\", which is not one of its inputs (jobs, requests)"),
        "{report}"
    );
}

/// `foresight explain --snapshot PATH --json`, parsed.
fn explained(path: &Path) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_foresight"))
        .args(["explain", "--json", "--snapshot"])
        .arg(path)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("explain runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn explain_evaluates_a_snapshot_formula_and_names_a_failed_input() {
    let example =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/snapshots/formula-metric.yaml");
    let decided = explained(&example);
    // (40 + 20) / 2 = 30 over 10 replicas is 3 per replica against 2: 15 replicas.
    assert_eq!(decided["decision"]["desiredReplicas"], 15, "{decided}");
    assert_eq!(
        decided["decision"]["proposals"][0]["current"],
        "3 per replica"
    );
    let status = &decided["status"]["currentMetrics"][0];
    assert_eq!(status["type"], "Formula", "{status}");
    assert_eq!(status["formula"]["name"], "composite");
    assert_eq!(status["formula"]["current"]["averageValue"], "3");

    let dir = tempfile::tempdir().unwrap();
    let failing = std::fs::read_to_string(&example).unwrap().replace(
        "metrics:\n  prometheusMetrics:",
        "metrics:\n  errors:\n    prometheus/trig_two: \"connection refused\"\n  prometheusMetrics:",
    );
    let path = dir.path().join("failing.yaml");
    std::fs::write(&path, failing).unwrap();
    let held = explained(&path);
    assert_eq!(held["decision"]["desiredReplicas"], 10, "held: {held}");
    let held = held.to_string();
    assert!(
        held.contains("input trig_two: connection refused"),
        "the failed input is named: {held}"
    );
    assert!(held.contains("FailedGetFormulaMetric"), "{held}");
}

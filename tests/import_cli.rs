//! `foresight import` end to end: a multi-document file in, YAML out, problems on stderr.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn import(input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_foresight"))
        .args(["import", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the foresight binary runs");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(input.as_bytes())
        .expect("stdin accepts the manifest");
    child.wait_with_output().expect("the command finishes")
}

const MULTI: &str = r#"
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
---
apiVersion: autoscaling.crane.io/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata: {name: batch}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: batch}
  maxReplicas: 5
  crons:
  - {name: night, timezone: UTC, start: "0 22 * * *", end: "0 6 * * *", targetReplicas: 3}
"#;

#[test]
fn converts_every_autoscaler_of_a_multi_document_file() {
    let out = import(MULTI);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}");
    assert_eq!(
        stdout
            .matches("kind: EffectiveHorizontalPodAutoscaler")
            .count(),
        2,
        "{stdout}"
    );
    assert_eq!(stdout.matches("\n---\n").count(), 1, "{stdout}");
    assert!(stdout.contains("apiVersion: autoscaling.foresight.dev/v1alpha1"));
    assert!(stdout.contains("# note: delete the HorizontalPodAutoscaler web"));
    assert!(
        stderr.contains("document 2: skipped apps/v1 Deployment"),
        "{stderr}"
    );
    // The output is itself a valid multi-document manifest.
    let docs = foresight_api::manifest::parse_documents(&stdout).expect("output parses");
    assert_eq!(docs.len(), 2);
}

#[test]
fn invalid_results_fail_with_field_paths() {
    let out = import(
        r#"
apiVersion: autoscaling.crane.io/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata: {name: bad}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: bad}
  maxReplicas: 0
"#,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("document 1: invalid after conversion: spec.maxReplicas"),
        "{stderr}"
    );
    // Nothing reaches stdout, so `import x | kubectl apply -f -` applies nothing.
    assert!(out.stdout.is_empty());
}

#[test]
fn a_file_without_autoscalers_is_an_error() {
    let out = import("apiVersion: v1\nkind: ConfigMap\n");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no HorizontalPodAutoscaler"));
}

const SCALED_OBJECT: &str = r#"
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: worker}
spec:
  scaleTargetRef: {name: worker}
  minReplicaCount: 2
  maxReplicaCount: 40
  fallback: {failureThreshold: 3, replicas: 10}
  advanced:
    horizontalPodAutoscalerConfig:
      behavior: {scaleDown: {stabilizationWindowSeconds: 120}}
  triggers:
  - type: cpu
    metricType: Utilization
    metadata: {value: "60"}
  - type: prometheus
    metadata: {serverAddress: "http://prometheus:9090", query: "sum(rate(jobs_total[1m]))", threshold: "8"}
  - type: rabbitmq
    metadata: {queueName: orders}
"#;

/// The same autoscaler written by hand in Foresight's terms.
const BY_HAND: &str = r#"
apiVersion: autoscaling.foresight.dev/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata: {name: worker}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: worker}
  minReplicas: 2
  maxReplicas: 40
  fallback: {failureThreshold: 3, replicas: 10, behavior: Static}
  behavior: {scaleDown: {stabilizationWindowSeconds: 120}}
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
  - type: Prometheus
    prometheus: {name: jobs, query: "sum(rate(jobs_total[1m]))", target: {type: AverageValue, averageValue: "8"}}
"#;

/// `foresight simulate --json` scores of `spec` on two synthetic days with an hour-long
/// metric outage (so the fallback acts too).
fn simulated(dir: &std::path::Path, spec: &str) -> serde_json::Value {
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
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    summary["policies"].clone()
}

#[test]
fn a_scaled_object_imports_to_a_valid_manifest_that_simulates_as_written_by_hand() {
    let out = import(SCALED_OBJECT);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("spec.triggers[2] (rabbitmq) dropped"),
        "what cannot be carried over is named: {stderr}"
    );
    let dir = tempfile::tempdir().unwrap();
    let imported = simulated(dir.path(), &stdout);
    let by_hand = simulated(dir.path(), BY_HAND);
    assert_eq!(imported, by_hand);
    assert!(imported[0]["replica_hours"].as_f64().unwrap() > 0.0);
}

#[test]
fn an_invalid_scaled_object_writes_nothing() {
    // KEDA's default minReplicaCount is 0, which a CPU trigger alone cannot wake from.
    let out = import(
        "apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata: {name: web}\nspec:\n  scaleTargetRef: {name: web}\n  triggers:\n  - type: cpu\n    metricType: Utilization\n    metadata: {value: \"60\"}\n",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("spec.idle"), "{stderr}");
    assert!(out.stdout.is_empty());
}

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

//! `foresight simulate` as a user runs it: byte-identical JSON for the same inputs and seed,
//! and clear errors for bad traces (with the line) and bad specs (with the field path). The
//! run without arguments is checked in `report_browser.rs`, together with its report.

use std::path::Path;
use std::process::{Command, Output};

fn simulate(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_foresight"))
        .arg("simulate")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the foresight binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const POLICY: &str = r#"apiVersion: autoscaling.foresight.dev/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 30
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
"#;

const NATIVE_HPA: &str = r#"apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: native}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 30
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}
"#;

#[test]
fn json_output_is_byte_identical_for_the_same_inputs_and_seed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("web.yaml"), POLICY).unwrap();
    std::fs::write(dir.path().join("native.yaml"), NATIVE_HPA).unwrap();
    let args = |seed: &'static str| {
        vec![
            "--spec",
            "web.yaml",
            "--spec",
            "native.yaml",
            "--synthetic",
            "--days",
            "2",
            "--startup-jitter",
            "40s",
            "--seed",
            seed,
            "--json",
            "--out",
            "out",
        ]
    };
    let first = simulate(&args("5"), dir.path());
    assert!(first.status.success(), "{}", text(&first.stderr));
    let second = simulate(&args("5"), dir.path());
    assert_eq!(first.stdout, second.stdout);
    let other = simulate(&args("6"), dir.path());
    assert_ne!(first.stdout, other.stdout);

    let json: serde_json::Value = serde_json::from_slice(&first.stdout).unwrap();
    let policies = json["policies"].as_array().unwrap();
    let names: Vec<&str> = policies
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["web", "native"]);
    for p in policies {
        for field in [
            "under_provisioned_minutes",
            "overload_integral",
            "replica_hours",
            "scale_events",
            "pods_started",
            "p95_utilization",
        ] {
            assert!(p[field].is_number(), "{field} in {p}");
        }
        assert!(p["replica_hours"].as_f64().unwrap() > 0.0);
    }
    // The report path goes to stderr, keeping stdout pure JSON.
    assert!(text(&first.stderr).contains("report.html"));
    // The release the policies decided as: the newest unless --kubernetes-version says.
    assert_eq!(json["model"]["kubernetes"], "1.37", "{json}");
    let mut at_1_28 = args("5");
    at_1_28.extend(["--kubernetes-version", "v1.28.4"]);
    let old = simulate(&at_1_28, dir.path());
    assert!(old.status.success(), "{}", text(&old.stderr));
    let old: serde_json::Value = serde_json::from_slice(&old.stdout).unwrap();
    assert_eq!(old["model"]["kubernetes"], "1.28", "{old}");
}

#[test]
fn a_kubernetes_release_outside_the_range_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("web.yaml"), POLICY).unwrap();
    let out = simulate(
        &[
            "--spec",
            "web.yaml",
            "--synthetic",
            "--kubernetes-version",
            "1.27",
        ],
        dir.path(),
    );
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("--kubernetes-version")
            && stderr.contains("Kubernetes 1.27 is not supported")
            && stderr.contains("1.28 to 1.37"),
        "{stderr}"
    );
}

fn trace_error(csv: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("web.yaml"), POLICY).unwrap();
    std::fs::write(dir.path().join("load.csv"), csv).unwrap();
    let out = simulate(&["--spec", "web.yaml", "--trace", "load.csv"], dir.path());
    assert!(!out.status.success(), "accepted: {csv:?}");
    assert!(
        !dir.path().join("foresight-report").exists(),
        "wrote a report for a bad trace"
    );
    text(&out.stderr)
}

#[test]
fn bad_traces_are_rejected_with_the_line_number() {
    let unsorted = trace_error("ts,value\n1000,1\n1060,2\n1030,3\n");
    assert!(
        unsorted.contains("load.csv") && unsorted.contains("line 4"),
        "{unsorted}"
    );
    let nan = trace_error("ts,value\n1000,1\n1060,NaN\n");
    assert!(nan.contains("line 3"), "{nan}");
    let empty = trace_error("");
    assert!(empty.contains("line 1"), "{empty}");
    let header_only = trace_error("ts,value\n");
    assert!(header_only.contains("line"), "{header_only}");
    let words = trace_error("ts,value\n1000,1\n1060,lots\n");
    assert!(
        words.contains("line 3") && words.contains("lots"),
        "{words}"
    );
}

#[test]
fn bad_specs_are_rejected_with_the_field_path() {
    let dir = tempfile::tempdir().unwrap();
    let bad = POLICY.replace("averageUtilization: 60", "averageUtilization: 0");
    std::fs::write(dir.path().join("bad.yaml"), bad).unwrap();
    let out = simulate(&["--spec", "bad.yaml", "--synthetic"], dir.path());
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("spec.metrics[0].resource.target.averageUtilization"),
        "{stderr}"
    );
    let typo = POLICY.replace("maxReplicas: 30", "maxReplicas: thirty");
    std::fs::write(dir.path().join("typo.yaml"), typo).unwrap();
    let out = simulate(&["--spec", "typo.yaml", "--synthetic"], dir.path());
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("spec.maxReplicas"),
        "{}",
        text(&out.stderr)
    );
}

/// The web policy with prediction and an objective: what the tuned frontier sweeps.
const TUNED_POLICY: &str = r#"apiVersion: autoscaling.foresight.dev/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata: {name: tuned}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 30
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
  prediction:
    predictionAlgorithm: {algorithmType: dsp, dsp: {sampleInterval: 60s, historyLength: 7d}}
  objective: {shortfall: AsReactive, maxUtilization: 90}
"#;

#[test]
fn a_policy_with_an_objective_is_swept_beside_the_reactive_frontier() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tuned.yaml"), TUNED_POLICY).unwrap();
    let out = simulate(
        &[
            "--spec",
            "tuned.yaml",
            "--synthetic",
            "--days",
            "3",
            "--frontier-step",
            "20",
            "--json",
            "--quiet",
            "--out",
            "r",
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let comparison = &summary["frontier"];
    let tuned = comparison["tuned"].as_array().expect("a tuned frontier");
    assert_eq!(tuned.len(), 1, "{tuned:?}");
    assert_eq!(tuned[0]["policy"], "tuned");
    let shortfalls: Vec<&str> = tuned[0]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["shortfall"].as_str().unwrap())
        .collect();
    assert_eq!(
        shortfalls,
        ["AsReactive", "0.25%", "0.5%", "1%", "2%", "4%"]
    );
    // Judged against the reactive policy at its own target, 60%.
    let own = comparison["frontier"]["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["level"] == 60)
        .expect("the baseline's own replay");
    let against = &comparison["tuned_against_reactive"][0];
    assert_eq!(
        against["reactive_replica_hours"], own["replica_hours"],
        "{against}"
    );
    assert_eq!(
        against["reactive_under_minutes"],
        own["under_provisioned_minutes"]
    );
    // The report draws it beside the reactive frontier and says it in words.
    let report = std::fs::read_to_string(dir.path().join("r/report.html")).unwrap();
    assert!(report.contains("class=\"tuned-frontier\""));
    assert!(report.contains("id=\"tuned-frontier\""));
    assert!(report.contains("at the reactive policy&#39;s risk: "));

    // Without the sweep, no tuned frontier.
    let out = simulate(
        &[
            "--spec",
            "tuned.yaml",
            "--synthetic",
            "--days",
            "3",
            "--frontier-step",
            "20",
            "--no-tuned-frontier",
            "--json",
            "--quiet",
            "--out",
            "r2",
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(summary["frontier"].get("tuned").is_none());
}

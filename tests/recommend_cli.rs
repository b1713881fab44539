//! `foresight recommend` against a real Prometheus (Debian's `prometheus` and `promtool`):
//! five workloads' CPU usage (drawn by the project's own generator) and the kube-state-metrics
//! series kube-prometheus-stack records are backfilled, and a fleet of HPAs (autoscaling/v2
//! and v1) and KEDA ScaledObjects (a cpu and a prometheus trigger) is recommended for: five
//! rows and the fleet's totals, the fleet report and each workload's page, and one manifest
//! per workload that `foresight validate` accepts.
//!
//! Without Prometheus the test is skipped (recorded in the skip log), unless
//! `FORESIGHT_REQUIRE_PROMETHEUS=1` makes that a failure.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Output};

use foresight_envtest::prometheus::PrometheusServer;
use foresight_sim::synthetic::{generate, SyntheticConfig};

const DAY: i64 = 86_400;
const STEP: i64 = 60;
const DAYS: i64 = 3;

const FLEET: &str = r#"
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 60
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
---
apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata: {name: api, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}
  minReplicas: 1
  maxReplicas: 40
  targetCPUUtilizationPercentage: 70
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: search, namespace: shop}
spec:
  scaleTargetRef: {name: search}
  minReplicaCount: 1
  maxReplicaCount: 40
  triggers:
  - type: cpu
    metricType: Utilization
    metadata: {value: "65"}
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: worker, namespace: jobs}
spec:
  scaleTargetRef: {name: worker}
  minReplicaCount: 1
  maxReplicaCount: 50
  triggers:
  - type: prometheus
    metadata: {serverAddress: "http://prometheus:9090", query: 'sum(queue_jobs{app="worker"})', threshold: "20"}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: checkout, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: checkout}
  minReplicas: 1
  maxReplicas: 30
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
  - type: Resource
    resource: {name: memory, target: {type: AverageValue, averageValue: 500Mi}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
"#;

/// The workloads whose pods' CPU is recorded: namespace, deployment, peak cores, seed.
const CPU_WORKLOADS: [(&str, &str, f64, u64); 4] = [
    ("shop", "web", 9.0, 11),
    ("shop", "api", 5.0, 12),
    ("shop", "search", 6.0, 13),
    ("shop", "checkout", 3.0, 14),
];

/// `DAYS` of generated load ending at `end`, times `peak`.
fn load(end: i64, peak: f64, seed: u64) -> Vec<(i64, f64)> {
    let start = end - DAYS * DAY;
    generate(&SyntheticConfig {
        start,
        days: DAYS as u32,
        step_seconds: STEP,
        seed,
        ..Default::default()
    })
    .into_iter()
    .map(|p| (p.ts, p.value.max(0.0) * peak))
    .collect()
}

/// What kube-prometheus-stack would hold: cAdvisor's CPU counters of each workload's pod
/// (one pod's series carries the whole workload's usage: the queries sum over pods),
/// kube-state-metrics' CPU requests and replicas, and the worker's queue.
fn history(end: i64) -> String {
    let mut counters = String::from("# TYPE container_cpu_usage_seconds counter\n");
    let mut requests = String::from("# TYPE kube_pod_container_resource_requests gauge\n");
    let mut replicas = String::from("# TYPE kube_deployment_status_replicas gauge\n");
    for (ns, name, peak, seed) in CPU_WORKLOADS {
        let pod = format!("{name}-7d9f8b6c5-x2x4z");
        let mut used = 0.0;
        for (ts, cores) in load(end, peak, seed) {
            used += cores * STEP as f64;
            let _ = writeln!(
                counters,
                "container_cpu_usage_seconds_total{{namespace=\"{ns}\",pod=\"{pod}\",container=\"app\"}} {used:.3} {ts}"
            );
            let _ = writeln!(
                requests,
                "kube_pod_container_resource_requests{{namespace=\"{ns}\",pod=\"{pod}\",container=\"app\",resource=\"cpu\",unit=\"core\"}} 0.5 {ts}"
            );
            let _ = writeln!(
                replicas,
                "kube_deployment_status_replicas{{namespace=\"{ns}\",deployment=\"{name}\"}} {} {ts}",
                (cores / 0.3).ceil().max(1.0)
            );
        }
    }
    let mut queue = String::from("# TYPE queue_jobs gauge\n");
    for (ts, jobs) in load(end, 400.0, 15) {
        let _ = writeln!(queue, "queue_jobs{{app=\"worker\"}} {jobs:.2} {ts}");
    }
    format!("{counters}{requests}{replicas}{queue}# EOF\n")
}

fn foresight(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_foresight"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the foresight binary runs")
}

/// Whether `program` is on the PATH.
fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

#[test]
fn recommends_for_a_fleet_from_a_real_prometheus() {
    if !(installed("prometheus") && installed("promtool")) {
        let why = "Debian's prometheus package (prometheus, promtool) is not installed";
        if std::env::var("FORESIGHT_REQUIRE_PROMETHEUS").as_deref() == Ok("1") {
            panic!("{why} (FORESIGHT_REQUIRE_PROMETHEUS=1)");
        }
        foresight_fixtures::skip("recommends_for_a_fleet_from_a_real_prometheus", why);
        return;
    }
    let now = jiff::Timestamp::now().as_second();
    let end = now - now.rem_euclid(STEP) - STEP;
    let server = PrometheusServer::start(&history(end));
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("fleet.yaml"), FLEET).expect("write the fleet");
    let end_flag = end.to_string();
    let range = format!("{DAYS}d");
    let out = foresight(
        &[
            "recommend",
            "-f",
            "fleet.yaml",
            "--prometheus-url",
            server.url(),
            "--range",
            &range,
            "--end",
            &end_flag,
            "-o",
            "recommended",
            "--report",
            "fleet.html",
        ],
        dir.path(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "recommend failed: {stderr}\n{stdout}");
    // Shown with --nocapture: what a user sees.
    println!("{stdout}");

    // Five rows, one per workload, and the fleet's totals.
    let workloads = [
        ("shop/web", "HorizontalPodAutoscaler"),
        ("shop/api", "HorizontalPodAutoscaler"),
        ("shop/search", "ScaledObject"),
        ("jobs/worker", "ScaledObject"),
        ("shop/checkout", "HorizontalPodAutoscaler"),
    ];
    for (workload, kind) in workloads {
        let row = stdout
            .lines()
            .find(|l| l.starts_with(&format!("{workload} ")))
            .unwrap_or_else(|| panic!("no row for {workload}:\n{stdout}"));
        assert!(row.contains(kind), "{row}");
        assert!(row.contains("kept"), "{row}");
    }
    assert!(
        stdout.contains("fleet (5 workloads)"),
        "no totals:\n{stdout}"
    );
    // The memory metric is named as not replayed, with the series it would come from.
    assert!(
        stdout.contains("shop/checkout: spec.metrics[1] (Resource memory): not replayed")
            && stdout.contains("container_memory_working_set_bytes"),
        "{stdout}"
    );

    // The fleet report links every workload's page, and each page exists.
    let report = std::fs::read_to_string(dir.path().join("fleet.html")).expect("the report");
    for (workload, _) in workloads {
        let file = workload.replace('/', "_");
        let link = format!("fleet-workloads/{file}.html");
        assert!(report.contains(&link), "no link to {link}");
        let page = std::fs::read_to_string(dir.path().join(&link)).expect("the workload's page");
        assert!(page.contains("<svg"), "{link} has no charts");
    }

    // One manifest per workload, each valid by `foresight validate`.
    for (workload, _) in workloads {
        let file = format!("recommended/{}.yaml", workload.replace('/', "_"));
        let text = std::fs::read_to_string(dir.path().join(&file)).expect("the manifest");
        assert!(text.contains("# note: foresight recommend:"), "{text}");
        let out = foresight(&["validate", &file], dir.path());
        assert!(
            out.status.success(),
            "{file} is invalid: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    // --json: the same rows and totals as one object.
    let out = foresight(
        &[
            "recommend",
            "-f",
            "fleet.yaml",
            "--prometheus-url",
            server.url(),
            "--range",
            &range,
            "--end",
            &end_flag,
            "--json",
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    println!("{json}");
    assert_eq!(
        json["workloads"].as_array().map(Vec::len),
        Some(5),
        "{json}"
    );
    assert_eq!(json["totals"]["workloads"], 5);
    let current: f64 = json["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["current_replica_hours"].as_f64().unwrap())
        .sum();
    let total = json["totals"]["current_replica_hours"].as_f64().unwrap();
    assert!((current - total).abs() < 1e-6, "{current} != {total}");
    // The recommendation is never less safe than the current policy.
    for w in json["workloads"].as_array().unwrap() {
        assert!(
            w["recommended_under_minutes"].as_f64().unwrap()
                <= w["current_under_minutes"].as_f64().unwrap() + 1e-6,
            "{w}"
        );
    }
}

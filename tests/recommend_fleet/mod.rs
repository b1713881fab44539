//! The fleet `foresight recommend` is tested on (`tests/recommend_cli.rs` with manifests,
//! `tests/cluster_recommend.rs` with the HPAs applied to a real control plane): its manifests,
//! and the history a kube-prometheus-stack would hold of it, drawn by the project's own
//! generator.

#![allow(dead_code)] // each suite uses its own part

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Output};

use foresight_sim::synthetic::{generate, SyntheticConfig};

pub const DAY: i64 = 86_400;
pub const STEP: i64 = 60;
pub const DAYS: i64 = 3;

pub const FLEET: &str = r#"
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
pub const CPU_WORKLOADS: [(&str, &str, f64, u64); 4] = [
    ("shop", "web", 9.0, 11),
    ("shop", "api", 5.0, 12),
    ("shop", "search", 6.0, 13),
    ("shop", "checkout", 3.0, 14),
];

/// `DAYS` of generated load ending at `end`, times `peak`.
pub fn load(end: i64, peak: f64, seed: u64) -> Vec<(i64, f64)> {
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
pub fn history(end: i64) -> String {
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

pub fn foresight(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_foresight"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the foresight binary runs")
}

/// Whether `program` is on the PATH.
pub fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// Whether Debian's Prometheus is installed; when not, the test `test` is recorded as skipped
/// (or fails, with `FORESIGHT_REQUIRE_PROMETHEUS=1`).
pub fn prometheus_or_skip(test: &str) -> bool {
    if installed("prometheus") && installed("promtool") {
        return true;
    }
    let why = "Debian's prometheus package (prometheus, promtool) is not installed";
    if std::env::var("FORESIGHT_REQUIRE_PROMETHEUS").as_deref() == Ok("1") {
        panic!("{why} (FORESIGHT_REQUIRE_PROMETHEUS=1)");
    }
    foresight_fixtures::skip(test, why);
    false
}

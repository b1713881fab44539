//! `simulate` and `backtest` replaying a series from a real Prometheus (`--prometheus-url`,
//! `--query`, `--range`, `--end`), through the controller's client: the test backfills three
//! days of a daily load into its own server and reads them back through the command line.
//!
//! Needs Debian's `prometheus` package; fails, not skips, without it.

use std::fmt::Write as _;
use std::process::{Command, Output};

use foresight_envtest::prometheus::PrometheusServer;

const DAY: i64 = 86_400;
const STEP: i64 = 60;

/// Three days of a daily rhythm (0.5 to 3.5 cores) for two apps, ending at `end`.
fn history(end: i64) -> String {
    let mut om = String::from("# TYPE workload_cpu gauge\n");
    for (app, share) in [("web", 1.0), ("api", 0.5)] {
        let mut t = end - 3 * DAY;
        while t <= end {
            let phase = (t.rem_euclid(DAY)) as f64 / DAY as f64 * std::f64::consts::TAU;
            let cores = (2.0 - 1.5 * phase.cos()) * share;
            let _ = writeln!(om, "workload_cpu{{app=\"{app}\"}} {cores:.4} {t}");
            t += STEP;
        }
    }
    om.push_str("# EOF\n");
    om
}

fn foresight(args: &[&str], dir: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_foresight"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the foresight binary runs")
}

const POLICY: &str = "apiVersion: autoscaling.foresight.dev/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 30
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
";

#[test]
fn simulate_and_backtest_replay_a_prometheus_series() {
    let now = jiff::Timestamp::now().as_second();
    let end = now - now.rem_euclid(STEP) - STEP;
    let server = PrometheusServer::start(&history(end));
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("web.yaml"), POLICY).expect("write the policy");
    let end_flag = end.to_string();
    let source = [
        "--prometheus-url",
        server.url(),
        "--query",
        "sum(workload_cpu{app=\"web\"})",
        "--range",
        "3d",
        "--end",
        &end_flag,
    ];

    let mut args = vec!["simulate", "--spec", "web.yaml", "--json", "--quiet"];
    args.extend(source);
    let out = foresight(&args, dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "simulate failed: {stderr}");
    let summary: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("simulate --json prints JSON");
    assert!(
        summary["trace"]["source"]
            .as_str()
            .is_some_and(|s| s.contains("workload_cpu") && s.contains(server.url())),
        "{}",
        summary["trace"]
    );
    // Three days at one point a minute, replayed from the first to the last.
    let start = jiff::Timestamp::from_second(end - 3 * DAY).unwrap();
    assert_eq!(summary["trace"]["start"], start.to_string());
    assert!(summary["policies"][0]["replica_hours"].as_f64().unwrap() > 0.0);

    let mut args = vec!["backtest", "--json", "--history", "2d", "--refit", "6h"];
    args.extend(source);
    let out = foresight(&args, dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "backtest failed: {stderr}");
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("backtest --json prints JSON");
    assert_eq!(
        report["samples"],
        3 * DAY / STEP + 1,
        "{}",
        report["samples"]
    );
    // The daily rhythm is found once two days of history are there.
    assert_eq!(report["period_seconds"], DAY, "{report}");

    // A query that keeps one series per app cannot be replayed: the error says so.
    let mut args = vec!["backtest"];
    args.extend(source);
    args[4] = "workload_cpu";
    let out = foresight(&args, dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("returned 2 series") && stderr.contains("sum(...)"),
        "{stderr}"
    );
}

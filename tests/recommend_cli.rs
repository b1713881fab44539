//! `foresight recommend` against a real Prometheus (Debian's `prometheus` and `promtool`):
//! five workloads' CPU usage (drawn by the project's own generator) and the kube-state-metrics
//! series kube-prometheus-stack records are backfilled, and a fleet of HPAs (autoscaling/v2
//! and v1) and KEDA ScaledObjects (a cpu and a prometheus trigger) is recommended for: five
//! rows and the fleet's totals, the fleet report and each workload's page, and one manifest
//! per workload that `foresight validate` accepts.
//!
//! Without Prometheus the test is skipped (recorded in the skip log), unless
//! `FORESIGHT_REQUIRE_PROMETHEUS=1` makes that a failure.

mod recommend_fleet;

use foresight_envtest::prometheus::PrometheusServer;
use recommend_fleet::*;
use std::process::Command;

#[test]
fn recommends_for_a_fleet_from_a_real_prometheus() {
    if !prometheus_or_skip("recommends_for_a_fleet_from_a_real_prometheus") {
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

    // FORESIGHT_KEEP_RECOMMEND=DIR keeps the outputs for a look (in a browser).
    if let Some(keep) = std::env::var_os("FORESIGHT_KEEP_RECOMMEND") {
        let copied = Command::new("cp")
            .arg("-r")
            .arg(dir.path())
            .arg(&keep)
            .status()
            .expect("cp runs");
        assert!(copied.success());
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

#[test]
fn manifests_without_an_autoscaler_are_refused_before_any_query() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(
        dir.path().join("svc.yaml"),
        "apiVersion: v1\nkind: Service\nmetadata: {name: web}\n",
    )
    .expect("write the manifest");
    // Nothing listens on port 9 (discard): the error must come before any query.
    let out = foresight(
        &[
            "recommend",
            "-f",
            "svc.yaml",
            "--prometheus-url",
            "http://127.0.0.1:9",
        ],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("no HorizontalPodAutoscaler, KEDA ScaledObject"),
        "{stderr}"
    );
}

#[test]
fn an_unreachable_prometheus_is_named_for_each_workload() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("fleet.yaml"), FLEET).expect("write the fleet");
    let out = foresight(
        &[
            "recommend",
            "-f",
            "fleet.yaml",
            "--prometheus-url",
            "http://127.0.0.1:9",
            "--range",
            "1d",
        ],
        dir.path(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("fleet (0 workloads)"), "{stdout}");
    for workload in [
        "shop/web",
        "shop/api",
        "shop/search",
        "jobs/worker",
        "shop/checkout",
    ] {
        let line = stdout
            .lines()
            .find(|l| {
                l.trim_start()
                    .starts_with(&format!("{workload} (fleet.yaml"))
            })
            .unwrap_or_else(|| panic!("{workload} is not listed as not replayed:\n{stdout}"));
        assert!(line.contains("could be read"), "{line}");
    }
}

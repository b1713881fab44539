//! `foresight recommend` in cluster mode, on a real control plane: the fleet's HPAs
//! (autoscaling/v2 and v1) are applied, and `recommend -A --kubeconfig ...` reads them from the
//! API server, their history from a real Prometheus (Debian's package, backfilled with
//! promtool), and prints a row for each; the kinds the cluster does not serve (KEDA, Crane, and
//! Foresight's own CRD, not installed here) are named as not read.
//!
//! Skipped without the control plane's assets or without Prometheus (see
//! `tests/recommend_fleet`).

mod cluster;
mod recommend_fleet;

use foresight_envtest::prometheus::PrometheusServer;
use foresight_envtest::{apply_json, workload, Options};
use recommend_fleet::*;

const TEST: &str = "recommends_for_the_hpas_of_a_real_cluster";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recommends_for_the_hpas_of_a_real_cluster() {
    if !prometheus_or_skip(TEST) {
        return;
    }
    let options = Options {
        controller_manager: false,
        ..Options::default()
    };
    let Some(cluster) = cluster::start(TEST, options).await else {
        return;
    };
    let client = cluster.client().await.expect("an administrator's client");
    workload::namespace(&client, "shop")
        .await
        .expect("namespace shop");
    workload::namespace(&client, "jobs")
        .await
        .expect("namespace jobs");
    let documents: Vec<serde_json::Value> =
        serde_saphyr::from_multiple(FLEET).expect("the fleet parses");
    let hpas: Vec<&serde_json::Value> = documents
        .iter()
        .filter(|d| d["kind"] == "HorizontalPodAutoscaler")
        .collect();
    assert_eq!(hpas.len(), 3);
    for hpa in &hpas {
        apply_json(&client, hpa).await.expect("the HPA applies");
    }

    let now = jiff::Timestamp::now().as_second();
    let end = now - now.rem_euclid(STEP) - STEP;
    let server = PrometheusServer::start(&history(end));
    let dir = tempfile::tempdir().expect("a temporary directory");
    let kubeconfig = cluster
        .control_plane
        .admin_kubeconfig()
        .display()
        .to_string();
    let (end_flag, range) = (end.to_string(), format!("{DAYS}d"));
    let out = tokio::task::block_in_place(|| {
        foresight(
            &[
                "recommend",
                "-A",
                "--kubeconfig",
                &kubeconfig,
                "--prometheus-url",
                server.url(),
                "--range",
                &range,
                "--end",
                &end_flag,
                "-o",
                "recommended",
            ],
            dir.path(),
        )
    });
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "recommend failed: {stderr}\n{stdout}");
    println!("{stdout}");
    for workload in ["shop/web", "shop/api", "shop/checkout"] {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(&format!("{workload} "))
                    && l.contains("HorizontalPodAutoscaler")),
            "no row for {workload}:\n{stdout}"
        );
        let file = format!("recommended/{}.yaml", workload.replace('/', "_"));
        let check = foresight(&["validate", &file], dir.path());
        assert!(
            check.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&check.stdout)
        );
    }
    assert!(stdout.contains("fleet (3 workloads)"), "{stdout}");
    assert!(
        stdout.contains("ScaledObject (keda.sh/v1alpha1)")
            && stdout.contains("not served by this cluster"),
        "{stdout}"
    );

    // One namespace, as kubectl's -n: only its autoscalers.
    let out = tokio::task::block_in_place(|| {
        foresight(
            &[
                "recommend",
                "-n",
                "jobs",
                "--kubeconfig",
                &kubeconfig,
                "--prometheus-url",
                server.url(),
                "--range",
                &range,
                "--end",
                &end_flag,
            ],
            dir.path(),
        )
    });
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("fleet (0 workloads)"), "{stdout}");
}

//! `scripts/e2e.sh` itself, against the real control plane: what a user runs against their
//! own cluster must pass here, with kubectl and the controller's service account.

mod cluster;

use std::process::Command;

use cluster::*;
use foresight_envtest::Options;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_e2e_script_passes_against_a_real_api_server() {
    let Some(cluster) = start(
        "the_e2e_script_passes_against_a_real_api_server",
        Options::default(),
    )
    .await
    else {
        return;
    };
    let port = foresight_envtest::process::free_port().unwrap();
    let log = cluster.control_plane.dir().join("e2e-controller.log");
    let out = tokio::task::spawn_blocking({
        let kubeconfig = cluster.control_plane.admin_kubeconfig().to_owned();
        let log = log.clone();
        move || {
            Command::new("bash")
                .arg(root().join("scripts/e2e.sh"))
                .env("KUBECONFIG", kubeconfig)
                .env("FORESIGHT_BIN", BIN)
                .env("E2E_PORT", port.to_string())
                .env("E2E_TIMEOUT", "60")
                .env("E2E_LOG", &log)
                .output()
                .expect("bash runs")
        }
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "scripts/e2e.sh failed:\n{stderr}\n--- controller log ---\n{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    assert!(stderr.contains("PASS"), "{stderr}");
    assert!(log.exists(), "the controller log is kept after a pass");
}

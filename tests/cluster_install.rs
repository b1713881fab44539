//! Installing Foresight on a real API server: the CRD from `foresight crd`, from `deploy/`
//! (`kubectl apply -k`, server-side) and from the Helm chart rendered by real Helm is accepted
//! and Established, and status writes go through the status subresource; every CEL rule of
//! the CRD rejects a bad manifest with its message.

mod cluster;

use std::process::Command;

use cluster::*;
use foresight_envtest::{apply_yaml, Options};
use kube::api::{Patch, PatchParams};
use kube::Client;
use serde_json::json;

/// Creates an autoscaler, writes its status through `/status` as the controller does, and
/// reads it back.
async fn status_round_trip(client: &Client, ns: &str) -> anyhow::Result<()> {
    foresight_envtest::workload::namespace(client, ns).await?;
    apply_ehpa(
        client,
        ns,
        "metadata: {name: web}\nspec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, minReplicas: 1, maxReplicas: 5, metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]}",
    )
    .await?;
    let patch = json!({"status": {"currentReplicas": 2, "desiredReplicas": 3}});
    ehpas(client, ns)
        .patch_status("web", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|e| anyhow::anyhow!("status write through the subresource: {e}"))?;
    let status = ehpa_status(client, ns, "web").await?;
    anyhow::ensure!(
        status["desiredReplicas"] == 3,
        "status not stored: {status}"
    );
    // A write to the main resource must not change status (that is what the subresource is).
    let main = json!({"status": {"desiredReplicas": 9}});
    ehpas(client, ns)
        .patch("web", &PatchParams::default(), &Patch::Merge(&main))
        .await?;
    let status = ehpa_status(client, ns, "web").await?;
    anyhow::ensure!(
        status["desiredReplicas"] == 3,
        "the main resource wrote status: {status}"
    );
    Ok(())
}

/// The chart rendered by real Helm (helm-python-sdk), CRDs first, as `helm install` does.
fn helm_rendered(values: &serde_json::Value) -> String {
    let out = Command::new("python3")
        .arg(root().join("scripts/helm-render.py"))
        .arg(root().join("charts/foresight"))
        .arg(values.to_string())
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "helm rendering failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// The documents `kubectl apply -k deploy/` applies, in the kustomization's order.
fn kustomized() -> String {
    let dir = root().join("deploy");
    let k: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string(dir.join("kustomization.yaml")).unwrap())
            .unwrap();
    let mut out = String::new();
    for r in k["resources"].as_array().expect("resources") {
        out.push_str(&std::fs::read_to_string(dir.join(r.as_str().unwrap())).unwrap());
        out.push_str("\n---\n");
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_crd_installs_three_ways_and_its_rules_hold() {
    let Some(cluster) = start(
        "the_crd_installs_three_ways_and_its_rules_hold",
        Options {
            controller_manager: false,
            ..Options::default()
        },
    )
    .await
    else {
        return;
    };
    let client = cluster.client().await.unwrap();

    // 1. foresight crd | kubectl apply --server-side -f -
    install_crd(&client).await.expect("foresight crd installs");
    status_round_trip(&client, "from-binary")
        .await
        .expect("foresight crd: status subresource");
    let stored: serde_json::Value = serde_json::to_value(
        kube::Api::<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition>::all(client.clone())
            .get(CRD_NAME)
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        stored["spec"]["versions"][0]["subresources"],
        json!({"status": {}}),
        "the API server stored the subresources as given"
    );

    // 2. kubectl apply --server-side -k deploy/
    delete_crd(&client).await.unwrap();
    apply_yaml(&client, &kustomized())
        .await
        .expect("deploy/ applies");
    wait_established(&client).await.unwrap();
    status_round_trip(&client, "from-deploy")
        .await
        .expect("deploy/: status subresource");

    // 3. helm install (rendered by Helm's own engine, every optional feature on)
    delete_crd(&client).await.unwrap();
    foresight_envtest::workload::namespace(&client, "foresight-system")
        .await
        .unwrap();
    let rendered = helm_rendered(&json!({}));
    apply_yaml(&client, &rendered)
        .await
        .expect("the chart's manifests apply");
    wait_established(&client).await.unwrap();
    status_round_trip(&client, "from-helm")
        .await
        .expect("chart: status subresource");
}

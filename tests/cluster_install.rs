//! Installing Foresight on a real API server: the CRD from `foresight crd`, from `deploy/`
//! (`kubectl apply -k`, server-side) and from the Helm chart rendered by real Helm is accepted
//! and Established, and status writes go through the status subresource; every CEL rule of
//! the CRD rejects a bad manifest with its message.

mod cluster;
// Each test crate uses a part of the shared cases.
#[allow(dead_code)]
mod validation_cases;

use std::process::Command;
use std::time::Duration;

use cluster::*;
use foresight_api::status::EffectiveHorizontalPodAutoscalerStatus;
use foresight_api::EffectiveHorizontalPodAutoscaler;
use foresight_envtest::{apply_yaml, Options};
use foresight_k8s::telemetry::{Call, Telemetry};
use kube::api::{Patch, PatchParams};
use kube::{Api, Client};
use serde_json::json;

/// Creates an autoscaler and writes its status through `/status` with the controller's own
/// write (server-side apply), over a status an older writer left by merge patch: what that
/// writer set and the controller's status lacks is gone after one write, and the main
/// resource cannot write status.
async fn status_round_trip(client: &Client, ns: &str) -> anyhow::Result<()> {
    foresight_envtest::workload::namespace(client, ns).await?;
    apply_ehpa(
        client,
        ns,
        "metadata: {name: web}\nspec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, minReplicas: 1, maxReplicas: 5, metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]}",
    )
    .await?;
    // As Foresight 0.x wrote it (merge patch), with a fallback clock since recovered.
    let older = json!({"status": {"currentReplicas": 2, "desiredReplicas": 3,
        "fallback": {"failingSince": "2026-06-01T12:00:00Z", "failedSyncs": 4, "active": true}}});
    ehpas(client, ns)
        .patch_status("web", &PatchParams::default(), &Patch::Merge(&older))
        .await
        .map_err(|e| anyhow::anyhow!("merge patch through the subresource: {e}"))?;

    let typed: Api<EffectiveHorizontalPodAutoscaler> = Api::namespaced(client.clone(), ns);
    let telemetry = std::sync::Arc::new(Telemetry::default());
    let calls = telemetry.calls();
    let mut now = EffectiveHorizontalPodAutoscalerStatus {
        current_replicas: Some(2),
        desired_replicas: Some(4),
        ..Default::default()
    };
    foresight_k8s::status::write(&typed, "web", &now, &calls)
        .await
        .map_err(|e| anyhow::anyhow!("status write through the subresource: {e}"))?;
    let status = ehpa_status(client, ns, "web").await?;
    anyhow::ensure!(
        status == json!({"currentReplicas": 2, "desiredReplicas": 4}),
        "the older writer's fallback is still there: {status}"
    );
    anyhow::ensure!(
        telemetry.requests(Call::PatchStatus) == 2,
        "apply, then the clean-up"
    );
    let object = ehpas(client, ns).get("web").await?;
    let applied = object.metadata.managed_fields.iter().flatten().any(|f| {
        f.manager.as_deref() == Some("foresight")
            && f.operation.as_deref() == Some("Apply")
            && f.subresource.as_deref() == Some("status")
    });
    anyhow::ensure!(
        applied,
        "no status apply by foresight in {:?}",
        object.metadata.managed_fields
    );

    // A field this manager applied and now omits goes with the apply alone.
    now.desired_replicas = None;
    foresight_k8s::status::write(&typed, "web", &now, &calls)
        .await
        .map_err(|e| anyhow::anyhow!("second status write: {e}"))?;
    let status = ehpa_status(client, ns, "web").await?;
    anyhow::ensure!(status == json!({"currentReplicas": 2}), "{status}");
    anyhow::ensure!(
        telemetry.requests(Call::PatchStatus) == 3,
        "the apply alone"
    );

    // A write to the main resource must not change status (that is what the subresource is).
    let main = json!({"status": {"currentReplicas": 9}});
    ehpas(client, ns)
        .patch("web", &PatchParams::default(), &Patch::Merge(&main))
        .await?;
    let status = ehpa_status(client, ns, "web").await?;
    anyhow::ensure!(
        status["currentReplicas"] == 2,
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

/// A manifest every rule accepts (the spec is shared with the offline CEL tests).
fn good(name: &str) -> serde_json::Value {
    let fixture = root().join("testdata/manifests/every-rule-holds.json");
    let mut obj: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    obj["apiVersion"] = json!("autoscaling.foresight.dev/v1alpha1");
    obj["kind"] = json!("EffectiveHorizontalPodAutoscaler");
    obj["metadata"] = json!({"name": name, "namespace": "cel"});
    obj
}

/// `good` with the value at `pointer` (a JSON pointer under `spec`) replaced, or removed for
/// null.
fn breaking(pointer: &str, value: serde_json::Value) -> serde_json::Value {
    let mut obj = good("bad");
    let full = format!("/spec{pointer}");
    let (parent, key) = full.rsplit_once('/').expect("a pointer");
    let target = obj.pointer_mut(parent).expect("the parent exists");
    match (target, value.is_null()) {
        (serde_json::Value::Object(m), true) => {
            m.remove(key);
        }
        (serde_json::Value::Object(m), false) => {
            m.insert(key.to_owned(), value);
        }
        (serde_json::Value::Array(a), _) => a[key.parse::<usize>().expect("an index")] = value,
        _ => panic!("{pointer} is not under an object or array"),
    }
    obj
}

/// One bad manifest per CEL rule of the CRD, each rejected with that rule's message.
async fn cel_rules_reject_with_their_messages(client: &Client) {
    foresight_envtest::workload::namespace(client, "cel")
        .await
        .unwrap();
    foresight_envtest::apply_json(client, &good("good"))
        .await
        .expect("the good manifest is accepted");
    let util = |v: serde_json::Value| json!({"name": "cpu", "target": v});
    let table: Vec<(&str, serde_json::Value, &str)> = vec![
        (
            "/minReplicas",
            json!(11),
            "minReplicas must be less than or equal to maxReplicas",
        ),
        (
            "/specificReplicas",
            json!(3),
            "specificReplicas may only be set with scaleStrategy: Preview",
        ),
        (
            "/minReplicas",
            json!(0),
            "minReplicas: 0 needs an Object, External, Prometheus or Formula metric, or a cron",
        ),
        (
            "/metrics/0",
            json!({"type": "Pods", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}),
            "the source named by type must be set",
        ),
        (
            "/metrics/0",
            json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}},
            "external": {"metric": {"name": "q"}, "target": {"type": "Value", "value": "1"}}}),
            "a metric sets exactly one source",
        ),
        (
            "/metrics/0",
            json!({"type": "Resource", "resource": util(json!({"type": "Utilization", "averageUtilization": 60, "averageValue": "100m"}))}),
            "set exactly one of target.averageUtilization and target.averageValue",
        ),
        (
            "/metrics/0",
            json!({"type": "ContainerResource", "containerResource": {"name": "cpu", "container": "app", "target": {"type": "Utilization"}}}),
            "set exactly one of target.averageUtilization and target.averageValue",
        ),
        (
            "/metrics/0",
            json!({"type": "Pods", "pods": {"metric": {"name": "rps"}, "target": {"type": "Value", "value": "1"}}}),
            "Pods metrics need target.averageValue",
        ),
        (
            "/metrics/0",
            json!({"type": "Object", "object": {"describedObject": {"kind": "Service", "name": "web"}, "metric": {"name": "rps"}, "target": {"type": "Utilization", "averageUtilization": 50}}}),
            "Object metrics need target.value or target.averageValue",
        ),
        (
            "/metrics/1/external/target",
            json!({"type": "Value", "value": "1", "averageValue": "2"}),
            "set exactly one of target.value and target.averageValue",
        ),
        (
            "/metrics/2/prometheus/target",
            json!({"type": "Value"}),
            "set exactly one of target.value and target.averageValue",
        ),
        (
            "/metrics/2/prometheus/target",
            json!({"type": "Utilization", "value": "1"}),
            "Prometheus metrics take a Value or AverageValue target",
        ),
        (
            "/crons/1",
            json!({"name": "morning", "start": "0 18 * * *", "end": "0 20 * * *", "targetReplicas": 2}),
            "cron names must be unique",
        ),
        (
            "/crons/0/end",
            json!("0 6 ? * 1-5"),
            "start and end must differ",
        ),
        (
            "/prediction/predictionAlgorithm",
            serde_json::Value::Null,
            "prediction needs predictionAlgorithm",
        ),
    ];
    let mut failures = Vec::new();
    for (pointer, value, message) in table {
        let object = if pointer == "/minReplicas" && value == 0 {
            // Only a CPU metric: nothing would see load at zero pods.
            let mut o = breaking(pointer, value);
            o["spec"]["metrics"].as_array_mut().unwrap().truncate(1);
            o["spec"].as_object_mut().unwrap().remove("crons");
            o
        } else {
            breaking(pointer, value)
        };
        match foresight_envtest::apply_json(client, &object).await {
            Ok(()) => failures.push(format!("{pointer}: accepted, expected {message:?}")),
            Err(e) if format!("{e:#}").contains(message) => {}
            Err(e) => failures.push(format!(
                "{pointer}: rejected with {e:#}, expected {message:?}"
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The differential test of the two validators: every bad manifest of the shared table is
/// rejected by Foresight's own validation (`validate_spec`, what `foresight validate` and the
/// controller run), and the real API server with the CRD installed rejects exactly those
/// whose rule its schema and CEL can say; each it accepts carries the reason it cannot.
async fn rust_and_the_api_server_agree(client: &Client) {
    use foresight_api::manifest::{classify, Document};
    use validation_cases::{manifest, Server, BAD};
    foresight_envtest::workload::namespace(client, "agree")
        .await
        .unwrap();
    let mut disagreements = Vec::new();
    for (i, case) in BAD.iter().enumerate() {
        let docs = foresight_api::manifest::parse_documents(&manifest(case.spec)).unwrap();
        let mut object = docs.into_iter().next().expect("one document");
        object["metadata"] = json!({"name": format!("case-{i}"), "namespace": "agree"});
        let rust_rejects = match classify(&object) {
            Ok(Document::Foresight(ehpa)) => {
                !foresight_api::validation::validate_spec(&ehpa.spec).is_empty()
            }
            Ok(_) => panic!("{}: not a Foresight object", case.name),
            Err(_) => true,
        };
        let server = foresight_envtest::apply_json(client, &object).await;
        if !rust_rejects {
            disagreements.push(format!("{}: Foresight accepts it", case.name));
        }
        match (case.server, server) {
            (Server::Rejects, Ok(())) => disagreements.push(format!(
                "{}: the API server accepts it; add the rule to the CRD, or say why it cannot \
                 be said there",
                case.name
            )),
            (Server::Accepts(why), Err(e)) => disagreements.push(format!(
                "{}: the API server rejects it ({e:#}), but the table says it cannot ({why})",
                case.name
            )),
            _ => {}
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} of {} cases disagree:\n{}",
        disagreements.len(),
        BAD.len(),
        disagreements.join("\n")
    );
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

    // Every CEL rule rejects a bad manifest, with its message, on the real API server.
    cel_rules_reject_with_their_messages(&client).await;
    // And the API server agrees with Foresight's validation wherever it can.
    rust_and_the_api_server_agree(&client).await;

    // 2. kubectl apply --server-side -k deploy/
    delete_crd(&client).await.unwrap();
    apply_yaml(&client, &kustomized())
        .await
        .expect("deploy/ applies");
    wait_established(&client).await.unwrap();
    status_round_trip(&client, "from-deploy")
        .await
        .expect("deploy/: status subresource");

    // 3. helm install (rendered by Helm's own engine) with the default values
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

    // ... and with every optional feature on (PodDisruptionBudget, ServiceMonitor against
    // the operator's CRD, the dashboard ConfigMap in another namespace, two replicas).
    apply_yaml(
        &client,
        &std::fs::read_to_string(root().join("testdata/manifests/servicemonitor-crd.yaml"))
            .unwrap(),
    )
    .await
    .expect("the ServiceMonitor CRD installs");
    foresight_envtest::workload::namespace(&client, "monitoring")
        .await
        .unwrap();
    let every_feature = json!({
        "replicaCount": 2,
        "leaderElection": {"enabled": true},
        "priorityClassName": "system-cluster-critical",
        "podLabels": {"team": "platform"},
        "extraEnv": [{"name": "TZ", "value": "UTC"}],
        "prometheus": {"url": "http://prometheus.monitoring:9090"},
        "podDisruptionBudget": {"enabled": true},
        "serviceMonitor": {"enabled": true, "labels": {"release": "kps"}},
        "grafanaDashboard": {"enabled": true, "namespace": "monitoring"}
    });
    let rendered = helm_rendered(&every_feature);
    foresight_envtest::eventually("every feature applies", Duration::from_secs(30), || async {
        // Right after its CRD, ServiceMonitor may not be served yet: retry until it is.
        Ok(apply_yaml(&client, &rendered).await.ok())
    })
    .await
    .expect("the chart's manifests with every feature apply");
    let api = |kind: &str, version: &str, group: &str, plural: &str| kube::api::ApiResource {
        group: group.to_owned(),
        version: version.to_owned(),
        api_version: if group.is_empty() {
            version.to_owned()
        } else {
            format!("{group}/{version}")
        },
        kind: kind.to_owned(),
        plural: plural.to_owned(),
    };
    for (ns, resource, name) in [
        (
            "foresight-system",
            api(
                "PodDisruptionBudget",
                "v1",
                "policy",
                "poddisruptionbudgets",
            ),
            "foresight-foresight",
        ),
        (
            "foresight-system",
            api(
                "ServiceMonitor",
                "v1",
                "monitoring.coreos.com",
                "servicemonitors",
            ),
            "foresight-foresight",
        ),
        (
            "monitoring",
            api("ConfigMap", "v1", "", "configmaps"),
            "foresight-foresight-dashboard",
        ),
    ] {
        kube::Api::<kube::api::DynamicObject>::namespaced_with(client.clone(), ns, &resource)
            .get(name)
            .await
            .unwrap_or_else(|e| panic!("{} {ns}/{name} was not created: {e}", resource.kind));
    }
}

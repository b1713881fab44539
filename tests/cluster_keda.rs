//! What KEDA users rely on, on a real control plane: an External metric API made to fail
//! drives the autoscaler to its fallback size after the threshold (condition and event) and
//! back when it recovers, with a controller restart during the outage that keeps the failure
//! clock; the metric at 0 takes the Deployment to 0 after the cooldown and a value above
//! activation brings it back; each pause annotation does what it says.

mod cluster;

use std::time::{Duration, Instant};

use cluster::*;
use foresight_envtest::{workload, Group, Options};
use kube::api::{Patch, PatchParams};
use kube::Client;
use serde_json::{json, Value};

const NS: &str = "keda";
const SYNC: &str = "--sync-period=2s";

const EHPA: &str = "metadata: {name: worker}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: worker}
  minReplicas: 1
  maxReplicas: 10
  behavior:
    scaleDown: {stabilizationWindowSeconds: 0}
  fallback: {failureDurationSeconds: 16, replicas: 6}
  metrics:
  - type: External
    external:
      metric: {name: queue_depth}
      target: {type: AverageValue, averageValue: '10'}";

async fn wait_condition(
    client: &Client,
    type_: &str,
    status: &str,
    reason: &str,
    timeout: Duration,
) -> anyhow::Result<Value> {
    foresight_envtest::eventually(
        &format!("{type_}={status} {reason}"),
        timeout,
        || async move {
            let s = ehpa_status(client, NS, "worker").await?;
            match condition(&s, type_) {
                Some((st, r, _)) if st == status && r == reason => Ok(Some(s)),
                other => anyhow::bail!("{type_} is {other:?}"),
            }
        },
    )
    .await
}

async fn annotate(client: &Client, annotations: Value) -> anyhow::Result<()> {
    let patch = json!({"metadata": {"annotations": annotations}});
    ehpas(client, NS)
        .patch("worker", &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    Ok(())
}

/// Holds for `seconds` that the Deployment stays at `want`.
async fn stays(client: &Client, want: i32, seconds: u64) -> anyhow::Result<()> {
    let until = Instant::now() + Duration::from_secs(seconds);
    while Instant::now() < until {
        let got = workload::replicas(client, NS, "worker").await?;
        anyhow::ensure!(
            got == want,
            "moved to {got} replicas while it should stay at {want}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fallback_idle_and_pause_on_a_real_cluster() {
    let Some(cluster) = start(
        "fallback_idle_and_pause_on_a_real_cluster",
        Options::default(),
    )
    .await
    else {
        return;
    };
    let client = cluster.client().await.unwrap();
    let mut controller = install_and_run(&cluster, "keda-first", &[SYNC])
        .await
        .expect("the controller runs");
    grant_external_metric(&client, "queue_depth").await.unwrap();
    workload::namespace(&client, NS).await.unwrap();
    workload::deployment(&client, NS, "worker", 2, 100)
        .await
        .unwrap();
    cluster.metrics().set_external(NS, "queue_depth", 30.0);
    apply_ehpa(&client, NS, EHPA).await.unwrap();
    let t = Duration::from_secs(30);
    with_log(
        wait_replicas(&client, NS, "worker", 3, t).await,
        &controller,
    );
    let mut report = Vec::new();

    // 1. Fallback: the external metrics API fails; the controller is restarted midway.
    cluster.metrics().set_fault(Group::External, Some(503));
    let outage = Instant::now();
    let failing = with_log(
        wait_condition(&client, "FallbackActive", "False", "MetricFailing", t).await,
        &controller,
    );
    let since = failing["fallback"]["failingSince"].clone();
    assert!(
        since.is_string(),
        "the failure clock is in status: {failing}"
    );
    tokio::time::sleep(Duration::from_secs(4)).await;
    controller.kill();
    let kubeconfig = cluster.control_plane.dir().join("controller.kubeconfig");
    let controller = run_controller(&cluster, &kubeconfig, "keda-second", &[SYNC])
        .await
        .expect("the controller restarts");
    let restarted = Instant::now();
    let active = with_log(
        wait_condition(&client, "FallbackActive", "True", "MetricsFailing", t).await,
        &controller,
    );
    let after_restart = restarted.elapsed();
    assert_eq!(
        active["fallback"]["failingSince"], since,
        "the restart kept the failure clock"
    );
    assert!(
        after_restart < Duration::from_secs(14),
        "a clock reset by the restart would wait 16 s more; it took {after_restart:?}"
    );
    with_log(
        wait_replicas(&client, NS, "worker", 6, t).await,
        &controller,
    );
    let started = event_notes(&client, NS, "worker", "FallbackStarted")
        .await
        .unwrap();
    assert_eq!(started.len(), 1, "{started:?}");
    report.push(format!(
        "fallback: active {:.1}s after the outage began ({:.1}s after the restart), 3 → 6",
        outage.elapsed().as_secs_f64(),
        after_restart.as_secs_f64()
    ));
    cluster.metrics().set_fault(Group::External, None);
    with_log(
        wait_replicas(&client, NS, "worker", 3, t).await,
        &controller,
    );
    with_log(
        wait_condition(&client, "FallbackActive", "False", "MetricsRead", t).await,
        &controller,
    );
    let ended = event_notes(&client, NS, "worker", "FallbackEnded")
        .await
        .unwrap();
    assert_eq!(ended.len(), 1, "{ended:?}");

    // 2. Idle: the queue empties, the target goes to 0 after the cooldown and wakes above
    //    activation.
    patch_spec(
        &client,
        NS,
        "worker",
        json!({
            "minReplicas": 0,
            "idle": {"cooldownSeconds": 6},
            "fallback": null,
            "metrics": [{"type": "External", "activation": "5", "external": {
                "metric": {"name": "queue_depth"},
                "target": {"type": "AverageValue", "averageValue": "10"}}}],
        }),
    )
    .await
    .unwrap();
    cluster.metrics().set_external(NS, "queue_depth", 0.0);
    let emptied = Instant::now();
    with_log(
        wait_replicas(&client, NS, "worker", 0, t).await,
        &controller,
    );
    let to_zero = emptied.elapsed();
    assert!(
        to_zero >= Duration::from_secs(5),
        "the cooldown was not waited: {to_zero:?}"
    );
    with_log(
        wait_condition(&client, "Active", "False", "ScaledToIdle", t).await,
        &controller,
    );
    cluster.metrics().set_external(NS, "queue_depth", 5.0);
    with_log(stays(&client, 0, 5).await, &controller);
    cluster.metrics().set_external(NS, "queue_depth", 25.0);
    let woken = Instant::now();
    with_log(
        wait_replicas(&client, NS, "worker", 1, t).await,
        &controller,
    );
    let to_one = woken.elapsed();
    with_log(
        wait_replicas(&client, NS, "worker", 3, t).await,
        &controller,
    );
    report.push(format!(
        "idle: 0 replicas {:.1}s after the queue emptied (cooldown 6s); woken {:.1}s after 25 queued, then 3",
        to_zero.as_secs_f64(),
        to_one.as_secs_f64()
    ));

    // 3. Pause: paused-replicas sets the size; paused holds it; paused-scale-in and -out bound
    //    one direction; removing them resumes.
    annotate(
        &client,
        json!({"autoscaling.foresight.dev/paused-replicas": "2"}),
    )
    .await
    .unwrap();
    with_log(
        wait_replicas(&client, NS, "worker", 2, t).await,
        &controller,
    );
    with_log(
        wait_condition(&client, "Paused", "True", "PausedAtReplicas", t).await,
        &controller,
    );
    annotate(
        &client,
        json!({"autoscaling.foresight.dev/paused-replicas": null, "autoscaling.foresight.dev/paused": "true"}),
    )
    .await
    .unwrap();
    with_log(
        wait_condition(&client, "Paused", "True", "Paused", t).await,
        &controller,
    );
    cluster.metrics().set_external(NS, "queue_depth", 80.0);
    with_log(stays(&client, 2, 5).await, &controller);
    annotate(
        &client,
        json!({"autoscaling.foresight.dev/paused": null, "autoscaling.foresight.dev/paused-scale-out": "true"}),
    )
    .await
    .unwrap();
    with_log(
        wait_condition(&client, "Paused", "True", "ScaleOutPaused", t).await,
        &controller,
    );
    with_log(stays(&client, 2, 4).await, &controller);
    cluster.metrics().set_external(NS, "queue_depth", 10.0);
    with_log(
        wait_replicas(&client, NS, "worker", 1, t).await,
        &controller,
    );
    annotate(
        &client,
        json!({"autoscaling.foresight.dev/paused-scale-out": null, "autoscaling.foresight.dev/paused-scale-in": "true"}),
    )
    .await
    .unwrap();
    cluster.metrics().set_external(NS, "queue_depth", 40.0);
    with_log(
        wait_replicas(&client, NS, "worker", 4, t).await,
        &controller,
    );
    cluster.metrics().set_external(NS, "queue_depth", 10.0);
    with_log(stays(&client, 4, 4).await, &controller);
    annotate(
        &client,
        json!({"autoscaling.foresight.dev/paused-scale-in": null}),
    )
    .await
    .unwrap();
    with_log(
        wait_replicas(&client, NS, "worker", 1, t).await,
        &controller,
    );
    with_log(
        wait_condition(&client, "Paused", "False", "NotPaused", t).await,
        &controller,
    );
    report.push(
        "pause: paused-replicas 2, paused held at 2, scale-out and scale-in bounded, resumed"
            .into(),
    );
    for line in report {
        eprintln!("keda: {line}");
    }
}

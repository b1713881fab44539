//! Faults on a real control plane, each with a bound on how long status takes to say what
//! happened and on how long recovery takes: the metrics API answering 503 and 500, leader
//! failover with a standby, the API server stopped and restarted, SIGTERM with the API server
//! up and with it unreachable.

mod cluster;

use std::time::{Duration, Instant};

use cluster::*;
use foresight_envtest::{workload, Group, Load, Options};
use kube::Client;
use serde_json::json;

const NS: &str = "faults";
/// The controller's sync period in this suite.
const SYNC_SECONDS: u64 = 2;

const EHPA: &str = "metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 10
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}";

/// Waits until condition `type_` has `status` (and `reason`, when given); returns how long
/// that took.
async fn wait_condition(
    client: &Client,
    type_: &str,
    status: &str,
    reason: Option<&str>,
    timeout: Duration,
) -> anyhow::Result<(Duration, String)> {
    let started = Instant::now();
    let message = foresight_envtest::eventually(
        &format!("{type_}={status} {}", reason.unwrap_or("")),
        timeout,
        || async move {
            let s = ehpa_status(client, NS, "web").await?;
            match condition(&s, type_) {
                Some((st, r, m)) if st == status && reason.is_none_or(|want| want == r) => {
                    Ok(Some(m))
                }
                other => anyhow::bail!("{type_} is {other:?}"),
            }
        },
    )
    .await?;
    Ok((started.elapsed(), message))
}

/// Changes the spec and waits until status has observed the new generation.
async fn spec_change_seen(
    client: &Client,
    max: i32,
    timeout: Duration,
) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let generation = patch_spec(client, NS, "web", json!({"maxReplicas": max})).await?;
    foresight_envtest::eventually("the spec change is seen", timeout, || async move {
        let s = ehpa_status(client, NS, "web").await?;
        Ok((s["observedGeneration"].as_i64() == generation).then_some(()))
    })
    .await?;
    Ok(started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_show_in_status_and_recover_within_bounds() {
    let options = Options {
        hpa_sync_period: Duration::from_secs(15),
        ..Options::default()
    };
    let Some(mut cluster) = start("faults_show_in_status_and_recover_within_bounds", options).await
    else {
        return;
    };
    let client = cluster.client().await.unwrap();
    let sync = format!("--sync-period={SYNC_SECONDS}s");
    let args = [
        sync.as_str(),
        "--metrics-max-age=1s",
        "--lease-duration=4s",
        "--identity=first",
    ];
    let mut leader = install_and_run(&cluster, "faults-first", &args)
        .await
        .expect("the controller runs");
    workload::namespace(&client, NS).await.unwrap();
    workload::deployment(&client, NS, "web", 2, 100)
        .await
        .unwrap();
    cluster.metrics().set_cpu(NS, "web", Load::Total(100.0));
    apply_ehpa(&client, NS, EHPA).await.unwrap();
    with_log(
        wait_condition(
            &client,
            "ScalingActive",
            "True",
            None,
            Duration::from_secs(30),
        )
        .await,
        &leader,
    );
    assert!(
        !leader.log().contains("standing by"),
        "the only replica said it stands by behind another:\n{}",
        leader.log()
    );
    let bound = Duration::from_secs(3 * SYNC_SECONDS + 3);

    // 1. The metrics API answers 503, then 500: status says so within a sync or two, spec
    //    changes are still seen, and recovery follows the API's.
    let mut report = Vec::new();
    for code in [503u16, 500] {
        cluster.metrics().set_fault(Group::Resource, Some(code));
        let (took, message) = with_log(
            wait_condition(
                &client,
                "ScalingActive",
                "False",
                Some("FailedGetResourceMetric"),
                bound,
            )
            .await,
            &leader,
        );
        assert!(
            !message.contains("Status {") && !message.contains("code: Some"),
            "the message carries Rust debug output: {message}"
        );
        assert_eq!(
            message
                .matches("unable to fetch metrics from resource metrics API")
                .count(),
            1,
            "the message repeats itself: {message}"
        );
        let seen = with_log(spec_change_seen(&client, 11, bound).await, &leader);
        cluster.metrics().set_fault(Group::Resource, None);
        let (recovered, _) = with_log(
            wait_condition(&client, "ScalingActive", "True", None, bound).await,
            &leader,
        );
        report.push(format!(
            "metrics API {code}: in status after {:.1}s, spec change seen after {:.1}s, recovered {:.1}s after the API",
            took.as_secs_f64(),
            seen.as_secs_f64(),
            recovered.as_secs_f64()
        ));
    }

    // 2. Leader failover: a standby takes over when the leader is killed.
    let kubeconfig = cluster.control_plane.dir().join("controller.kubeconfig");
    let mut standby = run_controller(
        &cluster,
        &kubeconfig,
        "faults-second",
        &[
            sync.as_str(),
            "--metrics-max-age=1s",
            "--lease-duration=4s",
            "--identity=second",
        ],
    )
    .await
    .expect("the standby runs");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        standby.log().contains("standing by"),
        "the second replica should stand by:\n{}",
        standby.log()
    );
    leader.kill();
    let killed = Instant::now();
    cluster.metrics().set_cpu(NS, "web", Load::Total(300.0));
    with_log(
        wait_replicas(&client, NS, "web", 6, Duration::from_secs(30)).await,
        &standby,
    );
    report.push(format!(
        "leader killed: the standby rescaled 2 → 6 after {:.1}s (lease 4s + grace 5s + a sync)",
        killed.elapsed().as_secs_f64()
    ));

    // 3. The API server stopped for 20 s: the log stays quiet, SIGTERM still works, and the
    //    survivor recovers when it is back.
    let lines_before = standby.log().lines().count();
    cluster.control_plane.stop_apiserver();
    let mut third = run_controller_unready(&cluster, &kubeconfig, "faults-third", &args);
    tokio::time::sleep(Duration::from_secs(10)).await;
    let lines_midway = standby.log().lines().count();
    tokio::time::sleep(Duration::from_secs(10)).await;
    let noise = standby.log().lines().count() - lines_before;
    let steady = standby.log().lines().count() - lines_midway;
    // Each watch logs its 1st, 2nd, 4th, ... failure and each autoscaler its recurring
    // errors likewise: a burst when the server goes, then a trickle.
    assert!(
        noise <= 45 && steady <= 10,
        "{noise} log lines in 20 s without an API server, {steady} in the last 10 s:\n{}",
        foresight_envtest::cluster::tail(&standby.log(), 50)
    );
    let stop = stops_on_sigterm(&mut third, "with the API server unreachable");
    report.push(format!(
        "API server down 20 s: {noise} log lines ({steady} in the last 10 s); SIGTERM (API unreachable) exited in {:.1}s",
        stop.as_secs_f64()
    ));
    let restarted = Instant::now();
    cluster.control_plane.start_apiserver().await.unwrap();
    let ready_after = restarted.elapsed();
    let client = cluster.client().await.unwrap();
    // A restarted API server answers 403 for a few seconds after /readyz says ok (its RBAC
    // caches are still filling); the watches retry at most every 10 s (MAX_WATCH_BACKOFF and
    // its jitter) through that, then a sync sees the change.
    let seen = with_log(
        spec_change_seen(&client, 12, Duration::from_secs(90)).await,
        &standby,
    );
    report.push(format!(
        "API server back (ready {:.1}s after its start): a spec change reached status {:.1}s later",
        ready_after.as_secs_f64(),
        seen.as_secs_f64()
    ));

    // 4. SIGTERM with the API server up.
    let stop = stops_on_sigterm(&mut standby, "with the API server up");
    report.push(format!(
        "SIGTERM (API up) exited in {:.1}s",
        stop.as_secs_f64()
    ));
    for line in report {
        eprintln!("faults: {line}");
    }
}

/// Sends SIGTERM and requires the controller to exit within five seconds; how long it took.
fn stops_on_sigterm(
    controller: &mut foresight_envtest::controller::ForesightController,
    when: &str,
) -> Duration {
    match controller.terminate(Duration::from_secs(10)) {
        Some(took) if took < Duration::from_secs(5) => took,
        other => panic!("SIGTERM {when} took {other:?}:\n{}", controller.log()),
    }
}

/// A controller started without waiting for readiness (the API server may be down).
fn run_controller_unready(
    cluster: &foresight_envtest::Cluster,
    kubeconfig: &std::path::Path,
    name: &str,
    extra: &[&str],
) -> foresight_envtest::controller::ForesightController {
    let log = cluster.control_plane.dir().join(format!("{name}.log"));
    foresight_envtest::controller::ForesightController::start(
        std::path::Path::new(BIN),
        kubeconfig,
        &log,
        extra,
    )
    .expect("the controller starts")
}

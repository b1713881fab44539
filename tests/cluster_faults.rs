//! Faults on a real control plane, each with a bound on how long status takes to say what
//! happened and on how long recovery takes: the metrics API answering 503 and 500, leader
//! failover with a standby, the API server stopped and restarted, SIGTERM with the API server
//! up and with it unreachable; and many autoscalers through a bad day, 100 in the suite and
//! 10,000 by hand (`a_bad_day_at_scale`, ignored).

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
        "leader killed: the standby rescaled 2 → 6 after {:.1}s (a lease of 4 s, then a sync)",
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

/// Autoscalers per namespace.
const PER_NAMESPACE: u64 = 50;

/// The size and pace of a bad day.
#[derive(Clone, Copy, Debug)]
struct Pace {
    /// Autoscalers.
    fleet: u64,
    /// The controller's sync period.
    sync: Duration,
    /// How long the controller shares a namespace's PodMetrics list (`--metrics-max-age`).
    metrics_max_age: Duration,
    /// How long the request rate is counted after each recovery (and in the steady state).
    window: Duration,
    /// The leader's lease (`--lease-duration`).
    lease: Duration,
    /// How long every target may take to get its pod and every autoscaler its first status.
    first_status: Duration,
    /// How long the quiet steady state is measured (CPU, syncs, lateness, RSS), if at all.
    quiet: Option<Duration>,
}

impl Pace {
    /// The suite's: 100 autoscalers (`FORESIGHT_FAULTS_AUTOSCALERS` overrides), a 3 s sync,
    /// the requests counted for 30 s.
    fn suite() -> Pace {
        Pace {
            fleet: env_u64("FORESIGHT_FAULTS_AUTOSCALERS", 100),
            sync: Duration::from_secs(3),
            metrics_max_age: Duration::from_secs(1),
            window: Duration::from_secs(30),
            lease: Duration::from_secs(4),
            first_status: Duration::from_secs(120),
            quiet: None,
        }
    }

    /// The by-hand measurement's: 10,000 autoscalers (`FORESIGHT_FAULTS_AUTOSCALERS`
    /// overrides) at the default 15 s sync and 15 s lease, the requests counted for the two
    /// minutes after each recovery.
    fn at_scale() -> Pace {
        let fleet = env_u64("FORESIGHT_FAULTS_AUTOSCALERS", 10_000);
        Pace {
            fleet,
            sync: Duration::from_secs(15),
            metrics_max_age: Duration::from_secs(5),
            window: Duration::from_secs(120),
            lease: Duration::from_secs(15),
            // kube-controller-manager starts every target's pod first: about 10 a second on
            // the 2-core machine.
            first_status: Duration::from_secs(120 + fleet / 5),
            quiet: Some(Duration::from_secs(120)),
        }
    }

    /// Recovery's bound: two sync periods, plus the age of a shared metrics list, plus a
    /// second for the status write.
    fn caught_up_within(&self) -> Duration {
        2 * self.sync + self.metrics_max_age + Duration::from_secs(1)
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// An autoscaler in Preview: it records the replicas it wants in status and scales nothing,
/// so each load level shows in every status without 100 pods to start. Its scale-up policy
/// lets each level through at once (the default allows at most 4 pods more than the one
/// it has).
fn fleet_ehpa(name: &str) -> String {
    format!(
        "metadata: {{name: {name}}}\nspec: {{scaleStrategy: Preview, scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: {name}}}, minReplicas: 1, maxReplicas: 20, behavior: {{scaleUp: {{policies: [{{type: Pods, value: 100, periodSeconds: 15}}]}}}}, metrics: [{{type: Resource, resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 50}}}}}}]}}"
    )
}

/// Many autoscalers through the faults a platform team meets, one after another: the API
/// server slowed by 500 ms a call, restarted under load, a partition across a restart that
/// leaves every watch expired (410 Gone), and the leader killed with a standby. After each:
/// nothing in status is lost, every autoscaler acts on a new load within two sync periods of
/// recovery, and the API server sees no more than twice the steady state's requests per
/// autoscaler per sync.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_autoscalers_come_through_a_bad_day() {
    bad_day("many_autoscalers_come_through_a_bad_day", Pace::suite()).await;
}

/// The same day at 10,000 autoscalers and the default 15 s sync, with the controller's RSS
/// after each fault: a measurement of about 40 minutes on the 2-core machine, run by hand.
///
/// ```sh
/// KUBEBUILDER_ASSETS=$(./scripts/control-plane) FORESIGHT_REQUIRE_ENVTEST=1 \
///   cargo test --release --test cluster_faults a_bad_day_at_scale -- --ignored --nocapture
/// ```
///
/// `FORESIGHT_FAULTS_AUTOSCALERS` sets the count. `docs/controller.md` carries the figures.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a 40-minute measurement at 10,000 autoscalers; run it by hand (see its docs)"]
async fn a_bad_day_at_scale() {
    bad_day("a_bad_day_at_scale", Pace::at_scale()).await;
}

/// The controller's resident set now, in MiB.
fn rss(controller: &foresight_envtest::controller::ForesightController) -> f64 {
    controller
        .pid()
        .map_or(f64::NAN, |pid| foresight_envtest::process::usage(pid).1)
}

/// The controller while nothing changes, over `quiet`: syncs against those due, its own
/// requests per autoscaler per sync, sync lateness (p50/p99 of
/// `foresight_sync_lateness_seconds`), CPU and RSS.
async fn quiet_state(
    controller: &foresight_envtest::controller::ForesightController,
    quiet: Duration,
    pace: &Pace,
) -> String {
    let pid = controller.pid().expect("a pid");
    let before = controller.scrape().await.unwrap_or_default();
    let (cpu_before, _) = foresight_envtest::process::usage(pid);
    let started = Instant::now();
    let mut peak: f64 = 0.0;
    while started.elapsed() < quiet {
        tokio::time::sleep(Duration::from_secs(5)).await;
        peak = peak.max(foresight_envtest::process::usage(pid).1);
    }
    let after = controller.scrape().await.unwrap_or_default();
    let (cpu_after, rss) = foresight_envtest::process::usage(pid);
    let seconds = started.elapsed().as_secs_f64();
    let delta = |name| total(&after, name) - total(&before, name);
    let syncs = delta("foresight_reconciles_total");
    let late = |q| quantile(&before, &after, "foresight_sync_lateness_seconds", q);
    format!(
        "quiet for {seconds:.0} s: {syncs:.0} syncs ({:.0} due, {:.0} per period), the controller's requests {:.3} per autoscaler per sync, sync lateness p50 {:.3} s / p99 {:.3} s, CPU {:.1} s ({:.1}% of a core), RSS {rss:.0} MiB (peak {peak:.0})",
        pace.fleet as f64 * seconds / pace.sync.as_secs_f64(),
        syncs * pace.sync.as_secs_f64() / seconds,
        delta("foresight_kubernetes_requests_total") / syncs.max(1.0),
        late(0.5).unwrap_or(f64::NAN),
        late(0.99).unwrap_or(f64::NAN),
        cpu_after - cpu_before,
        100.0 * (cpu_after - cpu_before) / seconds,
    )
}

/// Runs the day; every figure is printed before a failed check fails the test, so one long
/// run at scale gives every fault's figures.
async fn bad_day(test: &str, pace: Pace) {
    let Some(mut cluster) = start(test, Options::default()).await else {
        return;
    };
    let client = cluster.client().await.unwrap();
    scale_write_survives_a_concurrent_update(&client).await;

    install_crd(&client).await.unwrap();
    install_rbac(&client).await.unwrap();
    let proxy = foresight_envtest::proxy::Proxy::start(cluster.control_plane.apiserver_port())
        .await
        .unwrap();
    let token = workload::token(&client, "foresight-system", "foresight-controller")
        .await
        .unwrap();
    let kubeconfig = cluster.control_plane.dir().join("via-proxy.kubeconfig");
    cluster
        .control_plane
        .write_kubeconfig_via(&kubeconfig, &proxy.url(), &token, "foresight-system")
        .unwrap();
    let direct = cluster.control_plane.dir().join("direct.kubeconfig");
    cluster
        .control_plane
        .write_kubeconfig(&direct, &token, "foresight-system")
        .unwrap();
    let created = Instant::now();
    let mut fleet_state = Fleet::create(&cluster, &client, pace).await;
    let fleet = pace.fleet;
    let mut report = vec![format!(
        "{fleet} autoscalers and their Deployments created in {:.0} s",
        created.elapsed().as_secs_f64()
    )];

    let sync = format!("--sync-period={}s", pace.sync.as_secs());
    let args = |identity: &'static str| {
        vec![
            sync.clone(),
            format!("--lease-duration={}s", pace.lease.as_secs()),
            format!("--identity={identity}"),
            // No refresh of readings inside the test: each window then holds the same writes.
            "--status-refresh-interval=30m".to_owned(),
            // A namespace's pod metrics are shared for at most this long (below the period).
            format!("--metrics-max-age={}s", pace.metrics_max_age.as_secs()),
            // kube's watcher tells of a 410 Gone at debug level only.
            "--log-level=info,kube_runtime::watcher=debug".to_owned(),
        ]
    };
    let first_args = args("first");
    let first_args: Vec<&str> = first_args.iter().map(String::as_str).collect();
    let mut leader = run_controller(&cluster, &kubeconfig, "fleet-first", &first_args)
        .await
        .expect("the controller runs");
    let first = fleet_state
        .caught_up(&client, Instant::now(), pace.first_status)
        .await;
    // Only that all came: the first statuses wait for every target's pod, not for a period.
    with_log(
        (first.behind == 0)
            .then_some(())
            .ok_or_else(|| anyhow::anyhow!("{} autoscalers have no first status", first.behind)),
        &leader,
    );
    report.push(format!(
        "every autoscaler's first status {:.0} s after the controller started (the targets' pods started meanwhile); RSS {:.0} MiB",
        first.slowest.as_secs_f64(),
        rss(&leader)
    ));
    let mut failures: Vec<String> = Vec::new();
    let mut check =
        |result: anyhow::Result<()>,
         controller: &foresight_envtest::controller::ForesightController| {
            if let Err(e) = result {
                failures.push(format!(
                    "{e:#}\n--- controller log (last 40 lines) ---\n{}",
                    foresight_envtest::cluster::tail(&controller.log(), 40)
                ));
            }
        };

    if let Some(quiet) = pace.quiet {
        report.push(quiet_state(&leader, quiet, &pace).await);
    }

    // The steady state: a new load, and the requests of the window that follows.
    let steady = fleet_state.window(&cluster, &client, None).await;
    report.push(format!(
        "steady state: {steady}; RSS {:.0} MiB",
        rss(&leader)
    ));
    check(steady.caught_up.all(), &leader);

    // (c) Every call between the controller and the API server 500 ms slower for 20 s.
    let before = fleet_state.snapshot(&client).await;
    let from = apiserver_requests(&client).await;
    proxy.set_delay(Duration::from_millis(500));
    tokio::time::sleep(Duration::from_secs(20)).await;
    proxy.set_delay(Duration::ZERO);
    let slow = fleet_state.window(&cluster, &client, Some(from)).await;
    check(fleet_state.nothing_lost(&client, &before).await, &leader);
    report.push(format!(
        "API server 500 ms slower for 20 s: {slow}; RSS {:.0} MiB",
        rss(&leader)
    ));
    check(slow.recovered(&steady, "the slowed API server"), &leader);

    // (a) The API server restarted under load (down 10 s).
    let before = fleet_state.snapshot(&client).await;
    cluster.control_plane.stop_apiserver();
    tokio::time::sleep(Duration::from_secs(10)).await;
    cluster.control_plane.start_apiserver().await.unwrap();
    let client = cluster.client().await.unwrap();
    serves_the_controller(&direct).await;
    let restart = fleet_state.window(&cluster, &client, None).await;
    check(fleet_state.nothing_lost(&client, &before).await, &leader);
    report.push(format!(
        "API server restarted: {restart}; RSS {:.0} MiB",
        rss(&leader)
    ));
    check(
        restart.recovered(&steady, "the API server's restart"),
        &leader,
    );

    // (d) A partition across a restart: every watch resumes from a resourceVersion the new
    //     server's watch cache does not hold, and is answered 410 Gone.
    //     What is deleted meanwhile must leave the controller's caches when they list again:
    //     of two autoscalers on one workload, the one deleted (the conflict must clear, its
    //     series go).
    let twin = Twin::create(&cluster, &client, &leader).await;
    let before = fleet_state.snapshot(&client).await;
    let gone_before = leader.log().matches("code: 410").count();
    proxy.set_cut(true);
    tokio::time::sleep(Duration::from_secs(3)).await;
    cluster.control_plane.stop_apiserver();
    cluster.control_plane.start_apiserver().await.unwrap();
    let client = cluster.client().await.unwrap();
    serves_the_controller(&direct).await;
    // Writes the controller does not see while cut off move the store past its watches.
    for i in 0..fleet.min(10) {
        let (ns, name) = Fleet::name(i);
        patch_spec(&client, &ns, &name, json!({"maxReplicas": 11}))
            .await
            .unwrap();
    }
    twin.delete(&client).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    proxy.set_cut(false);
    let reconnected = Instant::now();
    let expired = fleet_state.window(&cluster, &client, None).await;
    match twin.forgotten(&client, &leader, reconnected).await {
        Ok(took) => report.push(format!(
            "the autoscaler deleted during the partition forgotten (conflict cleared, series gone) {:.0} s after the cut ended",
            took.as_secs_f64()
        )),
        Err(e) => check(Err(e), &leader),
    }
    let gone = leader.log().matches("code: 410").count() - gone_before;
    check(
        (gone > 0).then_some(()).ok_or_else(|| {
            anyhow::anyhow!(
                "no watch was answered 410 Gone after the partition; the scenario did not happen"
            )
        }),
        &leader,
    );
    check(fleet_state.nothing_lost(&client, &before).await, &leader);
    report.push(format!(
        "partitioned across a restart, {gone} watches answered 410 Gone: {expired}; RSS {:.0} MiB",
        rss(&leader)
    ));
    check(expired.recovered(&steady, "the expired watches"), &leader);

    // (b) The leader killed, a standby waiting.
    let second_args = args("second");
    let second_args: Vec<&str> = second_args.iter().map(String::as_str).collect();
    let standby = run_controller(&cluster, &kubeconfig, "fleet-second", &second_args)
        .await
        .expect("the standby runs");
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(
        standby.log().contains("standing by"),
        "the second replica should stand by:\n{}",
        standby.log()
    );
    let standby_rss = rss(&standby);
    let before = fleet_state.snapshot(&client).await;
    let from = apiserver_requests(&client).await;
    leader.kill();
    let killed = Instant::now();
    with_log(
        foresight_envtest::eventually(
            "the standby leads",
            2 * pace.lease + Duration::from_secs(20),
            || {
                let s = &standby;
                async move {
                    let m = s.scrape().await?;
                    Ok((total(&m, "foresight_leader") >= 1.0).then_some(()))
                }
            },
        )
        .await,
        &standby,
    );
    let took_over = killed.elapsed();
    let failover = fleet_state.window(&cluster, &client, Some(from)).await;
    check(fleet_state.nothing_lost(&client, &before).await, &standby);
    report.push(format!(
        "leader killed, the standby (RSS {standby_rss:.0} MiB while standing by) led after {:.1} s: {failover}; RSS {:.0} MiB",
        took_over.as_secs_f64(),
        rss(&standby)
    ));
    check(failover.recovered(&steady, "the failover"), &standby);
    drop(proxy);
    for line in report {
        eprintln!("bad day: {line}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Two autoscalers on one workload outside the fleet (so the fleet's windows are unchanged):
/// `solo` and `twin`, made before the partition; `twin` is deleted during it.
struct Twin {
    namespace: String,
}

impl Twin {
    const TARGET: &'static str = "shared";
    const KEPT: &'static str = "solo";
    const NAME: &'static str = "twin";

    /// Creates the workload and both autoscalers, and waits until `solo` reports the
    /// conflict and `twin` has series.
    async fn create(
        cluster: &foresight_envtest::Cluster,
        client: &Client,
        controller: &foresight_envtest::controller::ForesightController,
    ) -> Twin {
        let namespace = Fleet::name(0).0;
        cluster
            .metrics()
            .set_cpu(&namespace, Twin::TARGET, Load::Total(50.0));
        workload::deployment(client, &namespace, Twin::TARGET, 1, 100)
            .await
            .unwrap();
        for name in [Twin::KEPT, Twin::NAME] {
            apply_ehpa(
                client,
                &namespace,
                &format!(
                    "metadata: {{name: {name}}}\nspec: {{scaleStrategy: Preview, scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: {}}}, maxReplicas: 20, metrics: [{{type: Resource, resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 50}}}}}}]}}",
                    Twin::TARGET
                ),
            )
            .await
            .unwrap();
        }
        let twin = Twin { namespace };
        // The API server was restarted just before: its watch of the autoscalers comes back
        // last, a minute or two later (see docs/controller.md), and with it the twin.
        with_log(
            foresight_envtest::eventually(
                "solo reports the conflict with twin and twin has series",
                Duration::from_secs(300),
                || {
                    let twin = &twin;
                    async move {
                        let ambiguous = twin.ambiguous(client).await?;
                        let series = twin.has_series(controller).await?;
                        Ok((ambiguous && series).then_some(()))
                    }
                },
            )
            .await,
            controller,
        );
        twin
    }

    /// Whether solo's ScalingActive condition says AmbiguousSelector.
    async fn ambiguous(&self, client: &Client) -> anyhow::Result<bool> {
        let status = ehpa_status(client, &self.namespace, Twin::KEPT).await?;
        Ok(condition(&status, "ScalingActive")
            .is_some_and(|(_, reason, _)| reason == "AmbiguousSelector"))
    }

    /// Whether the controller's `/metrics` has a series of the twin.
    async fn has_series(
        &self,
        controller: &foresight_envtest::controller::ForesightController,
    ) -> anyhow::Result<bool> {
        let metrics = controller.scrape().await?;
        let labels = format!("namespace=\"{}\",name=\"{}\"", self.namespace, Twin::NAME);
        Ok(metrics.contains(&labels))
    }

    async fn delete(&self, client: &Client) {
        let ehpas: kube::Api<kube::core::DynamicObject> =
            kube::Api::namespaced_with(client.clone(), &self.namespace, &ehpa_resource());
        ehpas
            .delete(Twin::NAME, &Default::default())
            .await
            .expect("deleting the twin");
    }

    /// Once the autoscaler watch has listed again without the twin (it comes back last, a
    /// minute or two after the API server): solo no longer reports the conflict, and the
    /// twin's series are gone from `/metrics`. How long that took from `since`.
    async fn forgotten(
        &self,
        client: &Client,
        controller: &foresight_envtest::controller::ForesightController,
        since: Instant,
    ) -> anyhow::Result<Duration> {
        foresight_envtest::eventually(
            "solo's conflict cleared and twin's series gone after the partition",
            Duration::from_secs(300),
            || async move {
                let cleared =
                    !self.ambiguous(client).await? && !self.has_series(controller).await?;
                Ok(cleared.then_some(()))
            },
        )
        .await?;
        Ok(since.elapsed())
    }
}

/// Waits until the API server answers the controller's own identity again, autoscalers and
/// pod metrics both: after a restart it answers 403 for a few seconds past `/readyz` (its RBAC
/// caches fill) and 503 for the aggregated metrics API. That is when the controller can
/// recover, and the two sync periods are counted from there.
async fn serves_the_controller(kubeconfig: &std::path::Path) {
    let client = foresight_envtest::cluster::client_from(kubeconfig)
        .await
        .unwrap();
    let (ns, _) = Fleet::name(0);
    foresight_envtest::eventually(
        "the API server serves the controller",
        Duration::from_secs(120),
        || {
            let (client, ns) = (client.clone(), ns.clone());
            async move {
                ehpas(&client, &ns)
                    .list(&kube::api::ListParams::default().limit(1))
                    .await?;
                let metrics = format!("/apis/metrics.k8s.io/v1beta1/namespaces/{ns}/pods");
                client
                    .request_text(http::Request::get(metrics).body(Vec::new())?)
                    .await?;
                Ok(Some(()))
            }
        },
    )
    .await
    .unwrap();
}

/// The autoscalers of the bad-day test and the load level they are at (level k: each target's
/// one pod at 50·k % of its request, so each wants k replicas).
struct Fleet {
    pace: Pace,
    level: i32,
}

/// The resources the controller may touch (deploy/rbac.yaml): the requests counted. The API
/// server's own (a restarted one checks every bootstrap role, about 130 requests) and the
/// health checks are left out; kube-controller-manager's requests for pods and workloads
/// are in, in the steady state as after a fault.
const CONTROLLER_RESOURCES: &[&str] = &[
    "effectivehorizontalpodautoscalers",
    "pods",
    "deployments",
    "statefulsets",
    "replicasets",
    "events",
    "leases",
];

/// How far the statuses followed a new load.
#[derive(Clone, Copy, Debug)]
struct CaughtUp {
    /// From the new load until the latest decision that showed it (`lastDecision.time`).
    slowest: Duration,
    /// Autoscalers whose status did not show it when the wait ended.
    behind: usize,
    /// The bound they were held to.
    within: Duration,
}

impl CaughtUp {
    /// Every autoscaler followed, and within the bound.
    fn all(&self) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.behind == 0,
            "{} autoscalers did not show the new load",
            self.behind
        );
        anyhow::ensure!(
            self.slowest <= self.within,
            "the last autoscaler showed the new load {:.1} s after recovery, past the bound of {:.0} s",
            self.slowest.as_secs_f64(),
            self.within.as_secs_f64()
        );
        Ok(())
    }
}

/// What a window after a recovery (or in the steady state) saw.
struct Window {
    /// Requests the API server served in it for [`CONTROLLER_RESOURCES`] (every client), per
    /// autoscaler per sync period.
    per_autoscaler_per_sync: f64,
    requests: f64,
    status_writes: f64,
    /// How long the requests were counted.
    counted: Duration,
    /// The five resources asked most.
    busiest: String,
    caught_up: CaughtUp,
}

impl std::fmt::Display for Window {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let behind = match self.caught_up.behind {
            0 => String::new(),
            n => format!(" ({n} still behind)"),
        };
        write!(
            f,
            "every autoscaler at the new load {:.1} s after recovery{behind}; {:.0} API requests in {:.0} s ({:.0} status writes; {}), {:.3} per autoscaler per sync",
            self.caught_up.slowest.as_secs_f64(),
            self.requests,
            self.counted.as_secs_f64(),
            self.status_writes,
            self.busiest,
            self.per_autoscaler_per_sync
        )
    }
}

impl Window {
    /// Every autoscaler followed the new load within two periods, and no request storm: at
    /// most twice the steady state's requests per autoscaler per sync.
    fn recovered(&self, steady: &Window, after: &str) -> anyhow::Result<()> {
        self.caught_up
            .all()
            .map_err(|e| anyhow::anyhow!("after {after}: {e}"))?;
        anyhow::ensure!(
            self.per_autoscaler_per_sync <= 2.0 * steady.per_autoscaler_per_sync,
            "a request storm after {after}: {self} against {steady} in the steady state"
        );
        Ok(())
    }
}

type Requests = std::collections::HashMap<(String, String), f64>;

impl Fleet {
    fn name(i: u64) -> (String, String) {
        (format!("fleet-{}", i / PER_NAMESPACE), format!("app-{i}"))
    }

    /// Namespaces, Deployments (one 100m pod each) and autoscalers, at level 1.
    async fn create(cluster: &foresight_envtest::Cluster, client: &Client, pace: Pace) -> Fleet {
        use futures::StreamExt as _;
        for n in 0..pace.fleet.div_ceil(PER_NAMESPACE) {
            workload::namespace(client, &Fleet::name(n * PER_NAMESPACE).0)
                .await
                .unwrap();
        }
        futures::stream::iter(0..pace.fleet)
            .for_each_concurrent(16, |i| {
                let (ns, name) = Fleet::name(i);
                cluster.metrics().set_cpu(&ns, &name, Load::Total(50.0));
                async move {
                    workload::deployment(client, &ns, &name, 1, 100)
                        .await
                        .unwrap();
                    apply_ehpa(client, &ns, &fleet_ehpa(&name)).await.unwrap();
                }
            })
            .await;
        Fleet { pace, level: 1 }
    }

    /// Every autoscaler's status, from the API server's watch cache (resourceVersion 0): at
    /// 10,000 a list from etcd every poll would load the machine being measured.
    async fn snapshot(&self, client: &Client) -> Vec<(String, serde_json::Value)> {
        let api: kube::Api<kube::core::DynamicObject> =
            kube::Api::all_with(client.clone(), &ehpa_resource());
        let list = api
            .list(&kube::api::ListParams::default().match_any())
            .await
            .expect("listing the autoscalers");
        list.items
            .into_iter()
            .filter(|o| {
                o.metadata
                    .name
                    .as_deref()
                    .is_some_and(|n| n.starts_with("app-"))
            })
            .map(|o| {
                (
                    format!(
                        "{}/{}",
                        o.metadata.namespace.unwrap_or_default(),
                        o.metadata.name.unwrap_or_default()
                    ),
                    o.data.get("status").cloned().unwrap_or_default(),
                )
            })
            .collect()
    }

    /// Polls until every status wants `self.level` replicas or `timeout` has passed since
    /// `since`; the longest time from `since` to the decision that said so
    /// (`lastDecision.time`), and how many were still behind.
    async fn caught_up(&self, client: &Client, since: Instant, timeout: Duration) -> CaughtUp {
        let since_wall = jiff::Timestamp::now() - since.elapsed();
        let level = self.level;
        let size = self.pace.fleet as usize;
        // Every 250 ms at 100 autoscalers, every 10 s at 10,000: a list of every autoscaler
        // costs the API server about 0.16 ms of CPU an object even from its watch cache
        // (measured on v1.37), so a poll every 2 s at 10,000 took most of a core from the
        // server whose status writes are being timed. How late each autoscaler was is read
        // from its status (`lastDecision.time`), not from when a poll saw it.
        let poll = Duration::from_millis(250.max(self.pace.fleet));
        loop {
            let all = self.snapshot(client).await;
            let at_level: Vec<&serde_json::Value> = all
                .iter()
                .map(|(_, s)| s)
                .filter(|s| s["desiredReplicas"].as_i64() == Some(i64::from(level)))
                .collect();
            let behind = size.saturating_sub(at_level.len());
            if behind == 0 || since.elapsed() >= timeout {
                let slowest = at_level
                    .iter()
                    .filter_map(|s| s["lastDecision"]["time"].as_str()?.parse().ok())
                    .map(|t: jiff::Timestamp| t.duration_since(since_wall))
                    .max()
                    .unwrap_or_default();
                return CaughtUp {
                    slowest: Duration::try_from(slowest).unwrap_or_default(),
                    behind,
                    within: self.pace.caught_up_within(),
                };
            }
            tokio::time::sleep(poll).await;
        }
    }

    /// Raises the load a level now (at recovery), waits for every status to follow (up to
    /// half a minute past the bound, to say how late they were), and counts the API server's
    /// requests from `from` (`None`: from now) until the window has passed.
    async fn window(
        &mut self,
        cluster: &foresight_envtest::Cluster,
        client: &Client,
        from: Option<Requests>,
    ) -> Window {
        let started = Instant::now();
        let from = match from {
            Some(f) => f,
            None => apiserver_requests(client).await,
        };
        self.level += 1;
        for i in 0..self.pace.fleet {
            let (ns, name) = Fleet::name(i);
            cluster
                .metrics()
                .set_cpu(&ns, &name, Load::Total(50.0 * f64::from(self.level)));
        }
        let caught_up = self
            .caught_up(
                client,
                started,
                self.pace.caught_up_within() + Duration::from_secs(30),
            )
            .await;
        tokio::time::sleep(self.pace.window.saturating_sub(started.elapsed())).await;
        let to = apiserver_requests(client).await;
        let delta = |keep: &dyn Fn(&str, &str) -> bool| -> f64 {
            to.iter()
                .filter(|((verb, resource), _)| {
                    CONTROLLER_RESOURCES.contains(&resource.as_str()) && keep(verb, resource)
                })
                .map(|(k, n)| n - from.get(k).unwrap_or(&0.0))
                .sum()
        };
        let requests = delta(&|_, _| true);
        // Status is written by server-side apply, which the API server counts as APPLY.
        let status_writes = delta(&|verb, resource| {
            verb == "APPLY" && resource == "effectivehorizontalpodautoscalers"
        });
        let mut by_resource: Vec<(String, f64)> = to
            .iter()
            .filter(|((_, resource), _)| CONTROLLER_RESOURCES.contains(&resource.as_str()))
            .map(|(k, n)| (format!("{} {}", k.0, k.1), n - from.get(k).unwrap_or(&0.0)))
            .filter(|(_, n)| *n > 0.0)
            .collect();
        by_resource.sort_by(|a, b| b.1.total_cmp(&a.1));
        let busiest = by_resource
            .iter()
            .take(5)
            .map(|(k, n)| format!("{k} {n:.0}"))
            .collect::<Vec<_>>()
            .join(", ");
        let counted = started.elapsed();
        let syncs = self.pace.fleet as f64 * counted.as_secs_f64() / self.pace.sync.as_secs_f64();
        Window {
            per_autoscaler_per_sync: requests / syncs,
            requests,
            status_writes,
            counted,
            busiest,
            caught_up,
        }
    }

    /// Nothing lost from any status: every condition is still there, the spec generation
    /// seen and the last scale time did not go back, and every recommendation still inside
    /// the window Kubernetes keeps them (5 minutes) is still in the history. The first loss
    /// found, with how many autoscalers lost something.
    async fn nothing_lost(
        &self,
        client: &Client,
        before: &[(String, serde_json::Value)],
    ) -> anyhow::Result<()> {
        let after: std::collections::HashMap<String, serde_json::Value> =
            self.snapshot(client).await.into_iter().collect();
        let kept_since = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(290);
        let losses: Vec<String> = before
            .iter()
            .filter_map(|(name, was)| match after.get(name) {
                None => Some(format!("{name} is gone after the fault")),
                Some(now) => lost(name, was, now, kept_since),
            })
            .collect();
        match losses.first() {
            None => Ok(()),
            Some(first) => anyhow::bail!(
                "{} of {} autoscalers lost something from status, e.g. {first}",
                losses.len(),
                before.len()
            ),
        }
    }
}

/// What one autoscaler's status lost between `was` and `now`, if anything.
fn lost(
    name: &str,
    was: &serde_json::Value,
    now: &serde_json::Value,
    kept_since: jiff::Timestamp,
) -> Option<String> {
    let types = |s: &serde_json::Value| -> Vec<String> {
        s["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["type"].as_str().map(str::to_owned))
            .collect()
    };
    let (was_types, now_types) = (types(was), types(now));
    if let Some(t) = was_types.iter().find(|t| !now_types.contains(t)) {
        return Some(format!(
            "{name} lost its {t} condition: {was_types:?} before, {now_types:?} after"
        ));
    }
    if now["observedGeneration"].as_i64() < was["observedGeneration"].as_i64() {
        return Some(format!(
            "{name}'s observedGeneration went back: {} → {}",
            was["observedGeneration"], now["observedGeneration"]
        ));
    }
    if now["lastScaleTime"].as_str() < was["lastScaleTime"].as_str() {
        return Some(format!("{name}'s lastScaleTime went back"));
    }
    let recommendations = |s: &serde_json::Value| -> Vec<serde_json::Value> {
        s["history"]["recommendations"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    // Status keeps each value's latest recommendation: a value recommended again carries a
    // later time.
    let at = |r: &serde_json::Value| {
        r["timestamp"]
            .as_str()
            .and_then(|t| t.parse::<jiff::Timestamp>().ok())
    };
    let kept = recommendations(now);
    recommendations(was).into_iter().find_map(|r| {
        let recent = at(&r).is_some_and(|t| t > kept_since);
        let still = kept
            .iter()
            .any(|k| k["replicas"] == r["replicas"] && at(k) >= at(&r));
        (recent && !still)
            .then(|| format!("{name} lost the recommendation {r} from its history: {kept:?}"))
    })
}

/// A scale write after someone else changed the Deployment between the controller's read and
/// its write. Kubernetes 1.34+ retries its scale update on 409 Conflict, re-reading the scale;
/// Foresight's write is a merge patch of `spec.replicas` without a resourceVersion, which the
/// API server applies to the current object: no conflict to retry, and nothing of the other
/// writer's change is lost.
async fn scale_write_survives_a_concurrent_update(client: &Client) {
    use foresight_k8s::target::{ScaleClient, WorkloadCache};
    use k8s_openapi::api::apps::v1::Deployment;
    let ns = "conflict";
    workload::namespace(client, ns).await.unwrap();
    workload::deployment(client, ns, "web", 1, 100)
        .await
        .unwrap();
    let target = foresight_api::hpa::CrossVersionObjectReference {
        api_version: Some("apps/v1".into()),
        kind: "Deployment".into(),
        name: "web".into(),
    };
    let scales = ScaleClient::new(client.clone(), std::sync::Arc::new(WorkloadCache::new(&[])));
    let calls = foresight_k8s::telemetry::ApiCall::default();
    let read = scales.read(ns, &target, &calls).await.unwrap();
    assert_eq!(read.spec_replicas, 1);
    let deployments: kube::Api<Deployment> = kube::Api::namespaced(client.clone(), ns);
    let scale_read = deployments.get_scale("web").await.unwrap();
    // Another writer between the read and the write.
    deployments
        .patch(
            "web",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"metadata": {"annotations": {"bumped": "yes"}}})),
        )
        .await
        .unwrap();
    // An update carrying what was read is now a conflict, as the HPA's would be ...
    let mut stale = scale_read.clone();
    stale.spec = Some(k8s_openapi::api::autoscaling::v1::ScaleSpec { replicas: Some(2) });
    let conflict = deployments
        .replace_scale("web", &kube::api::PostParams::default(), &stale)
        .await;
    assert!(
        matches!(&conflict, Err(kube::Error::Api(s)) if s.code == 409),
        "an update with the resourceVersion read before the change should conflict: {conflict:?}"
    );
    // ... and Foresight's write goes through, keeping the other writer's change.
    scales.write(ns, &target, 2, &calls).await.unwrap();
    let now = deployments.get("web").await.unwrap();
    assert_eq!(now.spec.and_then(|s| s.replicas), Some(2));
    assert_eq!(
        now.metadata
            .annotations
            .unwrap_or_default()
            .get("bumped")
            .map(String::as_str),
        Some("yes"),
        "the other writer's change was lost"
    );
}

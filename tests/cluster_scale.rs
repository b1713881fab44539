//! A measurement, not a check (ignored by default): the controller's RSS and CPU with many
//! autoscalers on the real control plane, the API requests it sends per autoscaler per sync,
//! how late syncs start (p50/p99 of `foresight_sync_lateness_seconds`, read from its own
//! `/metrics`), what a restart of the controller and one of the API server (down 10 s, or
//! `FORESIGHT_SCALE_OUTAGE_SECONDS`) cost in syncs and requests, and how long every target
//! takes to follow a load step (and the controller's RSS through it). Run it with the release
//! build:
//!
//! ```sh
//! cargo test --release --test cluster_scale -- --ignored --nocapture
//! FORESIGHT_SCALE_SECONDS=120 FORESIGHT_SCALE_AUTOSCALERS=1000 cargo test --release --test cluster_scale -- --ignored --nocapture
//! FORESIGHT_SCALE_SECONDS=120 FORESIGHT_SCALE_AUTOSCALERS=10000 FORESIGHT_SCALE_CONCURRENCY=64 cargo test --release --test cluster_scale -- --ignored --nocapture
//! ```
//!
//! `docs/controller.md` carries the figures.

mod cluster;

use std::time::{Duration, Instant};

use cluster::*;
use foresight_envtest::{workload, Load, Options};
use futures::StreamExt;
use kube::api::ListParams;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a 10-minute measurement; run it by hand (see the module docs)"]
async fn controller_resources_with_many_autoscalers() {
    let autoscalers = env_u64("FORESIGHT_SCALE_AUTOSCALERS", 500);
    let seconds = env_u64("FORESIGHT_SCALE_SECONDS", 600);
    // How long the API server stays down. At 10,000 autoscalers a restarted API server
    // takes over a minute to be ready, so the controller's syncs fail for that long; a
    // longer outage reproduces that phase at a smaller scale (for a heap profile of it).
    let outage = env_u64("FORESIGHT_SCALE_OUTAGE_SECONDS", 10);
    let concurrency = format!(
        "--concurrency={}",
        env_u64("FORESIGHT_SCALE_CONCURRENCY", 64)
    );
    let Some(mut cluster) = start(
        "controller_resources_with_many_autoscalers",
        Options::default(),
    )
    .await
    else {
        return;
    };
    let client = cluster.client().await.unwrap();
    let mut controller = install_and_run(
        &cluster,
        "scale-controller",
        &["--leader-elect=false", "--log-level=warn", &concurrency],
    )
    .await
    .expect("the controller runs");
    let per_namespace = 50;
    let namespace_of = |i: u64| format!("scale-{}", i / per_namespace);
    let setup = Instant::now();
    for n in 0..autoscalers.div_ceil(per_namespace) {
        workload::namespace(&client, &namespace_of(n * per_namespace))
            .await
            .unwrap();
    }
    // Each target: one 100m pod at 50% of its request, steady at one replica.
    futures::stream::iter(0..autoscalers)
        .for_each_concurrent(16, |i| {
            let (client, ns, name) = (client.clone(), namespace_of(i), format!("app-{i}"));
            cluster.metrics().set_cpu(&ns, &name, Load::Total(50.0));
            async move {
                workload::deployment(&client, &ns, &name, 1, 100)
                    .await
                    .unwrap();
                apply_ehpa(&client, &ns, &format!(
                    "metadata: {{name: {name}}}\nspec: {{scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: {name}}}, minReplicas: 1, maxReplicas: 10, metrics: [{{type: Resource, resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 50}}}}}}]}}"
                ))
                .await
                .unwrap();
            }
        })
        .await;
    let deployments: kube::Api<k8s_openapi::api::apps::v1::Deployment> =
        kube::Api::all(client.clone());
    let sizes = || async {
        let list = deployments.list(&ListParams::default().match_any()).await?;
        anyhow::Ok(Sizes::of(&list.items))
    };
    // Measure only once every pod is there and ready: a controller-manager still creating the
    // first pods would be measured, not the autoscaler.
    loop {
        tokio::time::sleep(Duration::from_secs(5)).await;
        if let Ok(s) = sizes().await {
            if s.ready_pods >= autoscalers as i64 {
                break;
            }
        }
    }
    eprintln!(
        "scale: {autoscalers} targets created and their pods ready in {:.0} s",
        setup.elapsed().as_secs_f64()
    );
    let pid = controller.pid().expect("a pid");
    // Let every autoscaler reach its steady state before measuring.
    tokio::time::sleep(Duration::from_secs(60)).await;
    let before = controller.scrape().await.unwrap();
    let (cpu0, _) = foresight_envtest::process::usage(pid);
    let started = Instant::now();
    let mut peak_rss: f64 = 0.0;
    while started.elapsed() < Duration::from_secs(seconds) {
        tokio::time::sleep(Duration::from_secs(5)).await;
        peak_rss = peak_rss.max(foresight_envtest::process::usage(pid).1);
    }
    let after = controller.scrape().await.unwrap();
    let (cpu1, rss) = foresight_envtest::process::usage(pid);
    let high_water = high_water_mib(pid);
    let elapsed = started.elapsed().as_secs_f64();
    let late =
        |q| quantile(&before, &after, "foresight_sync_lateness_seconds", q).unwrap_or(f64::NAN);
    let (p50, p99) = (late(0.5), late(0.99));
    eprintln!("scale: sync lateness p50 {p50:.3} s, p99 {p99:.3} s");
    let reconciles =
        total(&after, "foresight_reconciles_total") - total(&before, "foresight_reconciles_total");
    let requests = total(&after, "foresight_kubernetes_requests_total")
        - total(&before, "foresight_kubernetes_requests_total");
    eprintln!(
        "scale: {autoscalers} autoscalers over {elapsed:.0} s: CPU {:.1}% of one core ({:.1} s), RSS {rss:.0} MiB (peak {peak_rss:.0} MiB while measured, {high_water:.0} MiB since it started), {reconciles:.0} syncs, {:.3} API requests per autoscaler per sync",
        100.0 * (cpu1 - cpu0) / elapsed,
        cpu1 - cpu0,
        requests / reconciles.max(1.0),
    );
    assert!(reconciles > 0.0, "no syncs counted:\n{after}");

    // A restart in the steady state: the new process lists each kind once and then watches; its first syncs
    // write only what changed. Count what it sends in its first two minutes, as the API
    // server saw it (lists and watches included) and as it counts its own requests.
    let api_before = apiserver_requests(&client).await;
    controller.terminate(Duration::from_secs(10));
    let kubeconfig = service_account_kubeconfig(&cluster).await.unwrap();
    let restarted = run_controller(
        &cluster,
        &kubeconfig,
        "scale-controller-restarted",
        &["--leader-elect=false", "--log-level=warn", &concurrency],
    )
    .await
    .expect("the controller restarts");
    tokio::time::sleep(Duration::from_secs(120)).await;
    let api_after = apiserver_requests(&client).await;
    let metrics = restarted.scrape().await.unwrap_or_default();
    let (restarted_rss, restarted_high_water) =
        restarted.pid().map_or((f64::NAN, f64::NAN), |pid| {
            (
                foresight_envtest::process::usage(pid).1,
                high_water_mib(pid),
            )
        });
    let lists: Vec<String> = api_after
        .iter()
        .filter(|((verb, _), _)| verb == "LIST" || verb == "WATCH")
        .filter_map(|((verb, resource), n)| {
            let d = n - api_before
                .get(&(verb.clone(), resource.clone()))
                .unwrap_or(&0.0);
            (d > 0.0).then(|| format!("{verb} {resource}: {d:.0}"))
        })
        .collect();
    eprintln!(
        "scale: restart: RSS {restarted_rss:.0} MiB after 120 s (peak {restarted_high_water:.0} MiB); in its first 120 s the new controller ran {:.0} syncs and sent {:.0} requests from them ({:.3} per autoscaler per sync, {:.0} status writes, {:.0} scale writes), {} bytes of /metrics; lists and watches the API server served meanwhile (the metrics test server's pod lists included): {}",
        total(&metrics, "foresight_reconciles_total"),
        total(&metrics, "foresight_kubernetes_requests_total"),
        total(&metrics, "foresight_kubernetes_requests_total")
            / total(&metrics, "foresight_reconciles_total").max(1.0),
        total_where(
            &metrics,
            "foresight_kubernetes_requests_total",
            &["resource=\"effectivehorizontalpodautoscalers/status\""]
        ),
        total_where(
            &metrics,
            "foresight_kubernetes_requests_total",
            &["verb=\"patch\"", "resource=\"scale\""]
        ),
        metrics.len(),
        lists.join(", ")
    );
    let controller = restarted;
    let sync_seconds = 15.0;

    // The API server restarted under load (down `outage` s): how soon the syncs resume, and what
    // the controller and the API server count in the two minutes after it serves again
    // (its counters start over with it).
    let before = controller.scrape().await.unwrap_or_default();
    // RSS every second from the cut until two minutes after the API server is back: the
    // relists that follow are where the controller's memory peaks.
    let pid = controller.pid();
    let high_water_before = pid.map_or(f64::NAN, high_water_mib);
    let sampling = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let sampler = tokio::spawn({
        let sampling = sampling.clone();
        async move {
            let mut peak: f64 = 0.0;
            while sampling.load(std::sync::atomic::Ordering::Relaxed) {
                if let Some(pid) = pid {
                    peak = peak.max(foresight_envtest::process::usage(pid).1);
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            peak
        }
    });
    cluster.control_plane.stop_apiserver();
    tokio::time::sleep(Duration::from_secs(outage)).await;
    let restarting = Instant::now();
    cluster.control_plane.start_apiserver().await.unwrap();
    eprintln!(
        "scale: API server ready {:.0} s after it was started again",
        restarting.elapsed().as_secs_f64()
    );
    let client = cluster.client().await.unwrap();
    let back = Instant::now();
    let synced = |m: &str| {
        total(m, "foresight_reconciles_total") - total(&before, "foresight_reconciles_total")
    };
    let mut two_periods = f64::NAN;
    tokio::time::sleep(Duration::from_secs(2 * sync_seconds as u64)).await;
    if let Ok(m) = controller.scrape().await {
        two_periods = synced(&m);
    }
    tokio::time::sleep(Duration::from_secs(120).saturating_sub(back.elapsed())).await;
    let after = controller.scrape().await.unwrap_or_default();
    sampling.store(false, std::sync::atomic::Ordering::Relaxed);
    let outage_peak = sampler.await.unwrap_or(f64::NAN);
    let high_water_after = pid.map_or(f64::NAN, high_water_mib);
    eprintln!(
        "scale: API server restart: controller RSS peak {outage_peak:.0} MiB sampled every second from the cut to 120 s after it was ready; high-water mark {high_water_before:.0} MiB before, {high_water_after:.0} MiB after"
    );
    let api = apiserver_requests(&client).await;
    let api_controller: f64 = api
        .iter()
        .filter(|((_, resource), _)| {
            [
                "effectivehorizontalpodautoscalers",
                "pods",
                "deployments",
                "statefulsets",
                "replicasets",
                "events",
                "leases",
            ]
            .contains(&resource.as_str())
        })
        .map(|(_, n)| n)
        .sum();
    let syncs = synced(&after);
    let requests = total(&after, "foresight_kubernetes_requests_total")
        - total(&before, "foresight_kubernetes_requests_total");
    let status_writes = total_where(
        &after,
        "foresight_kubernetes_requests_total",
        &["resource=\"effectivehorizontalpodautoscalers/status\""],
    ) - total_where(
        &before,
        "foresight_kubernetes_requests_total",
        &["resource=\"effectivehorizontalpodautoscalers/status\""],
    );
    eprintln!(
        "scale: API server restarted (down {outage} s): {two_periods:.0} syncs in the two periods after it was ready ({} due), {syncs:.0} in 120 s ({:.0} due); the controller's requests {:.3} per autoscaler per sync ({status_writes:.0} status writes); the API server's for the controller's resources (every client, lists and watches included) {:.3} per autoscaler per sync; RSS {:.0} MiB",
        2 * autoscalers,
        autoscalers as f64 * 120.0 / sync_seconds,
        requests / syncs.max(1.0),
        api_controller / syncs.max(1.0),
        controller
            .pid()
            .map_or(f64::NAN, |pid| foresight_envtest::process::usage(pid).1),
    );

    // A load step on every target: 3x the load, so 3 pods each.
    let step = Instant::now();
    for i in 0..autoscalers {
        let ns = format!("scale-{}", i / per_namespace);
        cluster
            .metrics()
            .set_cpu(&ns, &format!("app-{i}"), Load::Total(150.0));
    }
    // Read every 5 s from the API server's watch cache (resourceVersion 0): listing thousands
    // of Deployments every 250 ms from etcd would load the machine being measured.
    let timeout = Duration::from_secs(env_u64("FORESIGHT_SCALE_CONVERGE_SECONDS", 600));
    let mut last_report = Instant::now();
    // The step triples the pods every cache holds and writes every target's scale: a phase
    // of its own for the controller's memory.
    let mut step_peak: f64 = 0.0;
    let converged = loop {
        tokio::time::sleep(Duration::from_secs(5)).await;
        if let Some(pid) = controller.pid() {
            step_peak = step_peak.max(foresight_envtest::process::usage(pid).1);
        }
        let Ok(s) = sizes().await else { continue };
        if s.not_at.is_empty() {
            break format!("{:.1} s", step.elapsed().as_secs_f64());
        }
        if last_report.elapsed() >= Duration::from_secs(30) {
            last_report = Instant::now();
            let metrics = controller.scrape().await.unwrap_or_default();
            eprintln!(
                "scale: {:.0} s after the step: not at 3 by size {:?}; {} pods ready of {}; so far {:.0} syncs, {:.0} scale writes, {:.0} sync errors, {:.0} metric read errors; queue depth {:.0}",
                step.elapsed().as_secs_f64(),
                s.not_at,
                s.ready_pods,
                3 * autoscalers,
                total(&metrics, "foresight_reconciles_total"),
                total_where(
                    &metrics,
                    "foresight_kubernetes_requests_total",
                    &["verb=\"patch\"", "resource=\"scale\""]
                ),
                total(&metrics, "foresight_reconcile_errors_total"),
                total(&metrics, "foresight_metric_source_errors_total"),
                total(&metrics, "foresight_queue_depth"),
            );
        }
        if step.elapsed() >= timeout {
            break format!(
                "not within {} s: not at 3 by size {:?}",
                timeout.as_secs(),
                s.not_at
            );
        }
    };
    eprintln!("scale: after a load step on every target, all at 3 replicas: {converged}");
    eprintln!(
        "scale: load step: controller RSS peak {step_peak:.0} MiB sampled every 5 s, high-water mark {:.0} MiB",
        controller.pid().map_or(f64::NAN, high_water_mib)
    );
}

/// Where the targets stand: how many are at each size other than the expected 3 (after the
/// step) and how many pods are ready in all.
struct Sizes {
    not_at: std::collections::BTreeMap<i32, usize>,
    ready_pods: i64,
}

impl Sizes {
    fn of(deployments: &[k8s_openapi::api::apps::v1::Deployment]) -> Sizes {
        let mut s = Sizes {
            not_at: Default::default(),
            ready_pods: 0,
        };
        for d in deployments {
            if !d
                .metadata
                .name
                .as_deref()
                .is_some_and(|n| n.starts_with("app-"))
            {
                continue;
            }
            let replicas = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(-1);
            if replicas != 3 {
                *s.not_at.entry(replicas).or_default() += 1;
            }
            s.ready_pods += i64::from(
                d.status
                    .as_ref()
                    .and_then(|s| s.ready_replicas)
                    .unwrap_or(0),
            );
        }
        s
    }
}

/// The process's peak resident set (`VmHWM`), in MiB.
fn high_water_mib(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
            line.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

//! A measurement, not a check (ignored by default): the controller's RSS and CPU with many
//! autoscalers on the real control plane, the API requests it sends per autoscaler per sync,
//! how late syncs start (p50/p99 of `foresight_sync_lateness_seconds`, read from its own
//! `/metrics`), and how long every target takes to follow a load step. Run it with the release
//! build:
//!
//! ```sh
//! cargo test --release --test cluster_scale -- --ignored --nocapture
//! FORESIGHT_SCALE_SECONDS=120 FORESIGHT_SCALE_AUTOSCALERS=1000 cargo test --release --test cluster_scale -- --ignored --nocapture
//! ```
//!
//! `docs/controller.md` carries the figures.

mod cluster;

use std::time::{Duration, Instant};

use cluster::*;
use foresight_envtest::{workload, Load, Options};

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The sum of every sample of `name` (any labels) in an OpenMetrics text.
fn total(metrics: &str, name: &str) -> f64 {
    metrics
        .lines()
        .filter(|l| {
            l.starts_with(name)
                && (l[name.len()..].starts_with('{') || l[name.len()..].starts_with(' '))
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// The `q` quantile of histogram `name` between two scrapes, interpolated within its bucket
/// (`le` upper bounds), as PromQL's `histogram_quantile` does.
fn quantile(before: &str, after: &str, name: &str, q: f64) -> Option<f64> {
    let buckets = |text: &str| -> Vec<(f64, f64)> {
        text.lines()
            .filter(|l| l.starts_with(&format!("{name}_bucket{{")))
            .filter_map(|l| {
                let le = l.split("le=\"").nth(1)?.split('"').next()?;
                let le = if le == "+Inf" {
                    f64::INFINITY
                } else {
                    le.parse().ok()?
                };
                Some((le, l.rsplit(' ').next()?.parse().ok()?))
            })
            .collect()
    };
    let (b, a) = (buckets(before), buckets(after));
    let counts: Vec<(f64, f64)> = a
        .iter()
        .map(|(le, n)| {
            (
                *le,
                n - b.iter().find(|(l, _)| l == le).map_or(0.0, |x| x.1),
            )
        })
        .collect();
    let total = counts.last()?.1;
    if total <= 0.0 {
        return None;
    }
    let rank = q * total;
    let mut lower = (0.0, 0.0);
    for &(le, n) in &counts {
        if n >= rank {
            if le.is_infinite() {
                return Some(lower.0);
            }
            let share = if n > lower.1 {
                (rank - lower.1) / (n - lower.1)
            } else {
                1.0
            };
            return Some(lower.0 + (le - lower.0) * share);
        }
        lower = (le, n);
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a 10-minute measurement; run it by hand (see the module docs)"]
async fn controller_resources_with_many_autoscalers() {
    let autoscalers = env_u64("FORESIGHT_SCALE_AUTOSCALERS", 500);
    let seconds = env_u64("FORESIGHT_SCALE_SECONDS", 600);
    let Some(cluster) = start(
        "controller_resources_with_many_autoscalers",
        Options::default(),
    )
    .await
    else {
        return;
    };
    let client = cluster.client().await.unwrap();
    let controller = install_and_run(
        &cluster,
        "scale-controller",
        &["--leader-elect=false", "--log-level=warn"],
    )
    .await
    .expect("the controller runs");
    let per_namespace = 50;
    for i in 0..autoscalers {
        let ns = format!("scale-{}", i / per_namespace);
        if i % per_namespace == 0 {
            workload::namespace(&client, &ns).await.unwrap();
        }
        let name = format!("app-{i}");
        workload::deployment(&client, &ns, &name, 2, 100)
            .await
            .unwrap();
        cluster.metrics().set_cpu(&ns, &name, Load::Total(100.0));
        apply_ehpa(&client, &ns, &format!(
            "metadata: {{name: {name}}}\nspec: {{scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: {name}}}, minReplicas: 1, maxReplicas: 10, metrics: [{{type: Resource, resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 50}}}}}}]}}"
        ))
        .await
        .unwrap();
    }
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
    let elapsed = started.elapsed().as_secs_f64();
    let late =
        |q| quantile(&before, &after, "foresight_sync_lateness_seconds", q).unwrap_or(f64::NAN);
    let (p50, p99) = (late(0.5), late(0.99));
    let reconciles =
        total(&after, "foresight_reconciles_total") - total(&before, "foresight_reconciles_total");
    let requests = total(&after, "foresight_kubernetes_requests_total")
        - total(&before, "foresight_kubernetes_requests_total");
    eprintln!(
        "scale: {autoscalers} autoscalers over {elapsed:.0} s: CPU {:.1}% of one core ({:.1} s), RSS {rss:.0} MiB (peak {peak_rss:.0} MiB), {reconciles:.0} syncs, {:.3} API requests per autoscaler per sync",
        100.0 * (cpu1 - cpu0) / elapsed,
        cpu1 - cpu0,
        requests / reconciles.max(1.0),
    );
    assert!(reconciles > 0.0, "no syncs counted:\n{after}");

    // A load step on every target: 2 pods at 50% to 3x the load, so 6 pods each.
    let step = Instant::now();
    for i in 0..autoscalers {
        let ns = format!("scale-{}", i / per_namespace);
        cluster
            .metrics()
            .set_cpu(&ns, &format!("app-{i}"), Load::Total(300.0));
    }
    let deployments: kube::Api<k8s_openapi::api::apps::v1::Deployment> =
        kube::Api::all(client.clone());
    let converged = foresight_envtest::eventually(
        "every target at 6 replicas",
        Duration::from_secs(600),
        || {
            let deployments = deployments.clone();
            async move {
                let list = deployments.list(&Default::default()).await?;
                // How many targets stand at each size other than 6: overshoot and lag differ.
                let mut behind = std::collections::BTreeMap::<i32, usize>::new();
                for d in &list.items {
                    if !d
                        .metadata
                        .name
                        .as_deref()
                        .is_some_and(|n| n.starts_with("app-"))
                    {
                        continue;
                    }
                    let replicas = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(-1);
                    if replicas != 6 {
                        *behind.entry(replicas).or_default() += 1;
                    }
                }
                if behind.is_empty() {
                    Ok(Some(step.elapsed()))
                } else {
                    anyhow::bail!("targets not at 6 yet, by size: {behind:?}")
                }
            }
        },
    )
    .await;
    let converged = match converged {
        Ok(t) => format!("{:.1} s", t.as_secs_f64()),
        Err(e) => format!("not within 600 s ({e:#})"),
    };
    eprintln!(
        "scale: sync lateness p50 {:.3} s, p99 {:.3} s; after a load step on every target, all at their new size in {converged}",
        p50, p99
    );
}

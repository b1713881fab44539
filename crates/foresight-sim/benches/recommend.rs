//! The cost of `foresight recommend` per workload: 14 days of one-minute CPU usage (the
//! project's synthetic generator, a seed per workload), replayed as the HPA runs it and with
//! prediction at targets found by bisection up to 90% (see `foresight_sim::recommend`), on
//! one thread; and a fleet of `FORESIGHT_BENCH_WORKLOADS` (default 1,000) such workloads on
//! every core, timed once (`FORESIGHT_BENCH_FLEET=1`; it takes minutes), the figure the issue
//! asks for: 1,000 workloads × 14 days within 10 minutes on 2 cores.

use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion};
use foresight_sim::parallel::{parallel_map, threads_for};
use foresight_sim::recommend::recommend;

mod common;
use common::{load, model, predictive, DAYS};

/// Times the fleet once, the workloads streamed as `recommend` streams them (each generated,
/// replayed and dropped by a worker), and prints where the replays went.
fn fleet(count: usize) {
    let autoscaler = predictive();
    let model = model();
    let ids: Vec<usize> = (0..count).collect();
    let started = Instant::now();
    let replays: Vec<usize> = parallel_map(&ids, threads_for(count), |&i| {
        recommend(&autoscaler, &load(i), &model, &|_| {})
            .replayed
            .len()
    });
    let wall = started.elapsed();
    let total: usize = replays.iter().sum();
    eprintln!(
        "recommend: {count} workloads x {DAYS} days on {} threads: {:.1} s wall, {total} replays \
         ({:.2} per workload, {:.1} ms each)",
        threads_for(count),
        wall.as_secs_f64(),
        total as f64 / count as f64,
        wall.as_secs_f64() * 1000.0 * threads_for(count) as f64 / total as f64
    );
}

fn bench(c: &mut Criterion) {
    let autoscaler = predictive();
    let model = model();
    let one = load(1);
    let mut group = c.benchmark_group("recommend");
    group.sample_size(10);
    group.bench_function("one workload, 14 days at 1 min, 1 thread", |b| {
        b.iter(|| recommend(&autoscaler, &one, &model, &|_| {}))
    });
    group.bench_function("one replay without prediction, 14 days", |b| {
        b.iter(|| {
            foresight_sim::recommend::replay(
                &autoscaler,
                foresight_core::objective::Knobs {
                    forecast_budget_percent: None,
                    utilization: Some(60),
                    risk_budget_percent: None,
                    prediction: false,
                },
                &one,
                &model,
            )
        })
    });
    group.bench_function("one replay with prediction, 14 days", |b| {
        b.iter(|| {
            foresight_sim::recommend::replay(
                &autoscaler,
                foresight_core::objective::Knobs {
                    forecast_budget_percent: None,
                    utilization: Some(75),
                    risk_budget_percent: None,
                    prediction: true,
                },
                &one,
                &model,
            )
        })
    });
    group.finish();
    if std::env::var("FORESIGHT_BENCH_FLEET").as_deref() == Ok("1") {
        let count = std::env::var("FORESIGHT_BENCH_WORKLOADS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1000);
        fleet(count);
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! The simulator's throughput: 1,000 workloads × 7 days × 15-second decisions (about 40 M
//! decisions), each workload a reactive CPU policy over its own seeded synthetic load, run in
//! parallel on the machine's cores. A second benchmark runs one workload on one thread, to
//! give the cost per decision.
//!
//! `FORESIGHT_BENCH_WORKLOADS` overrides the fleet size (for a quick look).

use criterion::{criterion_group, criterion_main, Criterion};
use foresight_replay::fleet::{run_fleet, Workload};
use foresight_replay::policy::policies_from_manifest;
use foresight_replay::synthetic::{generate, SyntheticConfig};
use foresight_replay::{LoadTrace, ModelConfig, Recording};

const POLICY: &str = r#"
apiVersion: autoscaling.foresight.dev/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 60
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 300
      policies: [{type: Percent, value: 50, periodSeconds: 60}]
"#;

fn workloads(count: usize) -> Vec<Workload> {
    let policy = &policies_from_manifest(POLICY, "web").expect("the benchmark policy parses")[0];
    let autoscaler = policy.compile().expect("the benchmark policy is valid");
    (0..count)
        .map(|i| {
            let points = generate(&SyntheticConfig {
                days: 7,
                seed: i as u64,
                ..Default::default()
            });
            // Peaks between 5 and 50 pods at the 60 % target (one core per pod).
            let peak_pods = 5 + (i * 7919) % 46;
            let load = LoadTrace::new(points)
                .expect("synthetic traces are valid")
                .scaled_to_peak(peak_pods as f64 * 0.6);
            Workload {
                name: format!("web-{i}"),
                autoscaler: autoscaler.clone(),
                load,
            }
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let count = std::env::var("FORESIGHT_BENCH_WORKLOADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let model = ModelConfig {
        recording: Recording::ScoresOnly,
        ..Default::default()
    };
    let fleet = workloads(count);
    let one = &fleet[..1];

    let mut group = c.benchmark_group("simulate");
    group.sample_size(10);
    group.bench_function("one workload, 7 days, 15 s sync, 1 thread", |b| {
        b.iter(|| run_fleet(one, &model, Some(1)))
    });
    group.measurement_time(std::time::Duration::from_secs(60));
    group.bench_function(
        format!("{count} workloads, 7 days, 15 s sync, all cores"),
        |b| b.iter(|| run_fleet(&fleet, &model, None)),
    );
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! The benchmark fleet `recommend` is measured on, shared by `benches/recommend.rs` and
//! `examples/recommend_fleet.rs` so that both replay the same workloads: 14 days of one-minute
//! CPU usage per workload (the project's synthetic generator, a seed per workload) under an
//! imported HPA at 60% of requests, with prediction and an objective up to 90%.

use foresight_core::autoscaler::Autoscaler;
use foresight_sim::policy::policies_from_manifest;
use foresight_sim::recommend::REFIT_SECONDS;
use foresight_sim::synthetic::{generate, SyntheticConfig};
use foresight_sim::{LoadTrace, ModelConfig, Recording};

/// An imported HPA at 60% of requests, with prediction added and an objective up to 90%, as
/// `recommend` compiles it.
const POLICY: &str = r#"
apiVersion: autoscaling.foresight.dev/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 80
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
  prediction:
    predictionAlgorithm: {algorithmType: dsp, dsp: {sampleInterval: 60s, historyLength: 7d}}
  objective: {shortfall: AsReactive, maxUtilization: 90}
"#;

/// Days of history per workload.
pub const DAYS: u32 = 14;

/// The autoscaler every workload runs.
pub fn predictive() -> Autoscaler {
    policies_from_manifest(POLICY, "web").expect("the benchmark policy parses")[0]
        .compile()
        .expect("the benchmark policy is valid")
}

/// Workload `i`'s load: peaks between 5 and 50 cores.
pub fn load(i: usize) -> LoadTrace {
    let points = generate(&SyntheticConfig {
        days: DAYS,
        seed: i as u64,
        ..Default::default()
    });
    let peak = 5 + (i * 7919) % 46;
    LoadTrace::new(points)
        .expect("synthetic traces are valid")
        .scaled_to_peak(peak as f64)
}

/// The model recommend replays with.
pub fn model() -> ModelConfig {
    ModelConfig {
        recording: Recording::ScoresOnly,
        refit_interval_seconds: REFIT_SECONDS,
        short_from_share: foresight_sim::evaluation::SATURATED,
        ..Default::default()
    }
}

//! What choosing an operating point costs: one `tuner::tune` (the daily tuning an autoscaler
//! with `spec.objective` runs, in the controller and in `foresight simulate` alike) over 7
//! days of history sampled every minute, a seeded synthetic daily load peaking at 30 pods,
//! pods starting in 60 s. Once under `AsReactive` and once under a share of 1% (two more
//! candidates). The median is the CPU an autoscaler spends choosing its point each day; the
//! controller runs it on a blocking thread, one tuning per autoscaler per day.

use criterion::{criterion_group, criterion_main, Criterion};
use foresight_core::trace::Sample;
use foresight_replay::evaluation::Assumptions;
use foresight_replay::policy::policies_from_manifest;
use foresight_replay::synthetic::{generate, SyntheticConfig};
use foresight_replay::tuner::tune;
use foresight_replay::LoadTrace;

fn policy(objective: &str) -> String {
    format!(
        r#"
apiVersion: autoscaling.foresight.dev/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata: {{name: web}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}
  minReplicas: 2
  maxReplicas: 40
  metrics:
    - type: Resource
      resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 75}}}}
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 300
      policies: [{{type: Percent, value: 20, periodSeconds: 60}}]
  prediction:
    predictionAlgorithm:
      algorithmType: dsp
      dsp: {{sampleInterval: 60s, historyLength: 7d}}
  objective: {objective}
"#
    )
}

/// Seven days of a daily rhythm with noise and random spikes, one sample a minute, peaking
/// at 30 pods' worth of load at the 75% target (a core per pod).
fn history() -> Vec<Sample> {
    let points = generate(&SyntheticConfig {
        days: 7,
        step_seconds: 60,
        seed: 7,
        ..Default::default()
    });
    LoadTrace::new(points)
        .expect("synthetic traces are valid")
        .scaled_to_peak(30.0 * 0.75)
        .points()
        .iter()
        .map(|p| Sample {
            ts: p.ts,
            value: p.value,
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let history = history();
    let now = history.last().map_or(0, |s| s.ts + 60);
    let assumptions = Assumptions {
        startup_seconds: 60,
        pod_cpu_request_millicores: 1000,
        prediction_proposed: true,
    };
    let mut group = c.benchmark_group("tune");
    group.sample_size(10);
    for (label, objective) in [
        ("AsReactive", "{shortfall: AsReactive, maxUtilization: 90}"),
        ("a share of 1%", "{shortfall: \"1%\", maxUtilization: 90}"),
    ] {
        let text = policy(objective);
        let policy = &policies_from_manifest(&text, "web").expect("the policy parses")[0];
        let autoscaler = policy.compile().expect("the policy is valid");
        let objective = autoscaler.objective.expect("the policy has an objective");
        group.bench_function(
            format!("one tuning, 7 days of 1-minute history, {label}"),
            |b| {
                b.iter(|| {
                    tune(
                        &autoscaler,
                        &objective,
                        &history,
                        60,
                        now,
                        assumptions,
                        None,
                    )
                    .expect("7 days are enough to tune")
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

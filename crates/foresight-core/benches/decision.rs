//! One decision for one Resource (CPU utilization) metric over 100 pods, with the default
//! behavior and a full 5-minute history of recommendations and scale events.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use foresight_api::hpa::{
    HorizontalPodAutoscalerBehavior, MetricSpec, MetricTarget, ResourceMetricSource,
};
use foresight_api::spec::EffectiveHorizontalPodAutoscalerSpec;
use foresight_api::status::{
    ConditionStatus, EffectiveHorizontalPodAutoscalerStatus, Recommendation, ScaleEvent,
    ScalingHistory,
};
use foresight_core::autoscaler::{Autoscaler, ControllerConfig};
use foresight_core::decision::{decide, Observation, ScaleOutcome};
use foresight_core::metrics::{ContainerUsage, PodResourceSample};
use foresight_core::pods::{Container, Pod, PodPhase, ReadyCondition};
use foresight_core::proposals::Scale;
use jiff::{SignedDuration, Timestamp};

const PODS: usize = 100;

fn fixture() -> (
    Autoscaler,
    Observation,
    EffectiveHorizontalPodAutoscalerStatus,
    ScalingHistory,
    Timestamp,
) {
    let now: Timestamp = "2026-03-02T14:00:00Z".parse().expect("timestamp");
    let spec = EffectiveHorizontalPodAutoscalerSpec {
        scale_target_ref: foresight_api::hpa::CrossVersionObjectReference {
            kind: "Deployment".into(),
            name: "web".into(),
            api_version: Some("apps/v1".into()),
        },
        min_replicas: Some(2),
        max_replicas: 400,
        metrics: vec![MetricSpec {
            type_: "Resource".into(),
            resource: Some(ResourceMetricSource {
                name: "cpu".into(),
                target: MetricTarget {
                    type_: "Utilization".into(),
                    average_utilization: Some(60),
                    ..Default::default()
                },
            }),
            ..Default::default()
        }],
        behavior: Some(HorizontalPodAutoscalerBehavior::default()),
        ..Default::default()
    };
    let autoscaler =
        Autoscaler::new("shop", "web", &spec, &ControllerConfig::default()).expect("valid spec");
    let started = now - SignedDuration::from_hours(2);
    let pods: Vec<Pod> = (0..PODS)
        .map(|i| Pod {
            name: format!("web-6d8f7c9b5-{i:05}"),
            phase: PodPhase::Running,
            ready: Some(ReadyCondition {
                status: ConditionStatus::True,
                last_transition_time: started,
            }),
            start_time: Some(started),
            deletion_timestamp: None,
            containers: vec![Container {
                name: "app".into(),
                requests: [("cpu", 500), ("memory", 268_435_456_000)]
                    .into_iter()
                    .collect(),
            }],
            ..Default::default()
        })
        .collect();
    let samples: Vec<PodResourceSample> = pods
        .iter()
        .enumerate()
        .map(|(i, p)| PodResourceSample {
            pod: p.name.clone(),
            timestamp: now - SignedDuration::from_secs(15),
            window: SignedDuration::from_secs(30),
            containers: vec![ContainerUsage {
                name: "app".into(),
                usage: [
                    ("cpu", 330 + (i as i64 % 7) * 10),
                    ("memory", 190_000_000_000),
                ]
                .into_iter()
                .collect(),
            }],
        })
        .collect();
    let observation = Observation {
        scale: Ok(Scale {
            spec_replicas: PODS as i32,
            status_replicas: PODS as i32,
            selector: "app=web".into(),
        }),
        pods,
        resource_metrics: Ok(samples),
        ..Default::default()
    };
    let history = ScalingHistory {
        recommendations: (0..20)
            .map(|i| Recommendation {
                replicas: 100 + (i % 3),
                timestamp: now - SignedDuration::from_secs(300 - 15 * i64::from(i)),
            })
            .collect(),
        scale_up_events: vec![ScaleEvent {
            replica_change: 2,
            timestamp: now - SignedDuration::from_secs(200),
            outdated: false,
        }],
        scale_down_events: vec![ScaleEvent {
            replica_change: 1,
            timestamp: now - SignedDuration::from_secs(100),
            outdated: false,
        }],
    };
    let status = decide(
        &autoscaler,
        &observation,
        Default::default(),
        history.clone(),
        now,
    )
    .finish(&autoscaler, ScaleOutcome::NotAttempted)
    .status;
    (autoscaler, observation, status, history, now)
}

/// The status and history move into `decide` and come back from `finish`, as in the
/// controller's and simulator's loops; the copies made for each iteration are not timed.
fn bench(c: &mut Criterion) {
    let (autoscaler, observation, status, history, now) = fixture();
    let inputs = || (status.clone(), history.clone());
    c.bench_function(
        "decide: 1 cpu metric, 100 pods, default behavior, 5 min history",
        |b| {
            b.iter_batched(
                inputs,
                |(s, h)| decide(black_box(&autoscaler), black_box(&observation), s, h, now),
                BatchSize::SmallInput,
            )
        },
    );
    c.bench_function(
        "decide + finish: 1 cpu metric, 100 pods, default behavior, 5 min history",
        |b| {
            b.iter_batched(
                inputs,
                |(s, h)| {
                    decide(black_box(&autoscaler), black_box(&observation), s, h, now)
                        .finish(&autoscaler, ScaleOutcome::NotAttempted)
                },
                BatchSize::SmallInput,
            )
        },
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);

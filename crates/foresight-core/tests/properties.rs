//! Properties of the decision that hold for any input: the result stays within bounds, a
//! failed metric never causes a scale-down, no sequence of decisions exceeds a rate-limit
//! policy within its period, and nothing panics or overflows.

use foresight_api::hpa::{
    CrossVersionObjectReference, ExternalMetricSource, HorizontalPodAutoscalerBehavior,
    HpaScalingPolicy, HpaScalingRules, MetricIdentifier, MetricSpec, MetricTarget,
    ResourceMetricSource,
};
use foresight_api::spec::EffectiveHorizontalPodAutoscalerSpec;
use foresight_api::status::{
    ConditionStatus, EffectiveHorizontalPodAutoscalerStatus, Recommendation, ScalingHistory,
};
use foresight_api::Quantity;
use foresight_core::autoscaler::{Autoscaler, ControllerConfig};
use foresight_core::decision::{decide, Observation, ScaleOutcome};
use foresight_core::metrics::{ContainerUsage, MetricData, PodResourceSample, ValueSample};
use foresight_core::pods::{Container, Pod, PodPhase, ReadyCondition};
use foresight_core::proposals::Scale;
use foresight_core::resources::ResourceList;
use jiff::{SignedDuration, Timestamp};
use proptest::prelude::*;

fn now0() -> Timestamp {
    Timestamp::from_second(1_767_225_600).expect("2026-01-01")
}

fn cpu_metric(utilization: i32) -> MetricSpec {
    MetricSpec {
        type_: "Resource".into(),
        resource: Some(ResourceMetricSource {
            name: "cpu".into(),
            target: MetricTarget {
                type_: "Utilization".into(),
                average_utilization: Some(utilization),
                ..Default::default()
            },
        }),
        ..Default::default()
    }
}

fn external_metric() -> MetricSpec {
    MetricSpec {
        type_: "External".into(),
        external: Some(ExternalMetricSource {
            metric: MetricIdentifier {
                name: "queue".into(),
                selector: None,
            },
            target: MetricTarget {
                type_: "AverageValue".into(),
                average_value: Some(Quantity::from("30")),
                ..Default::default()
            },
        }),
        ..Default::default()
    }
}

fn rules(policy_type: &str, value: i32, period: i32, window: i32) -> HpaScalingRules {
    HpaScalingRules {
        stabilization_window_seconds: Some(window),
        select_policy: Some("Max".into()),
        policies: Some(vec![HpaScalingPolicy {
            type_: policy_type.into(),
            value,
            period_seconds: period,
        }]),
        tolerance: None,
    }
}

fn spec(
    min: i32,
    max: i32,
    behavior: Option<HorizontalPodAutoscalerBehavior>,
    with_external: bool,
) -> EffectiveHorizontalPodAutoscalerSpec {
    let mut metrics = vec![cpu_metric(60)];
    if with_external {
        metrics.push(external_metric());
    }
    EffectiveHorizontalPodAutoscalerSpec {
        scale_target_ref: CrossVersionObjectReference {
            kind: "Deployment".into(),
            name: "web".into(),
            api_version: Some("apps/v1".into()),
        },
        min_replicas: Some(min),
        max_replicas: max,
        metrics,
        behavior,
        ..Default::default()
    }
}

/// A pod, and its CPU usage (None: no sample).
#[derive(Clone, Debug)]
struct PodCase {
    phase: u8,
    ready: u8,
    started_secs_ago: i64,
    deleting: bool,
    request: i64,
    usage: Option<i64>,
}

fn pod_case() -> impl Strategy<Value = PodCase> {
    (
        0u8..5,
        0u8..4,
        -100i64..100_000,
        proptest::bool::weighted(0.05),
        prop_oneof![Just(0i64), 1i64..4000, Just(i64::MAX)],
        proptest::option::weighted(
            0.9,
            prop_oneof![-1000i64..10_000, Just(0i64), Just(i64::MAX), Just(i64::MIN)],
        ),
    )
        .prop_map(
            |(phase, ready, started_secs_ago, deleting, request, usage)| PodCase {
                phase,
                ready,
                started_secs_ago,
                deleting,
                request,
                usage,
            },
        )
}

fn observation(
    pods: &[PodCase],
    current: i32,
    now: Timestamp,
    resource_error: bool,
    external: Option<Result<i64, ()>>,
) -> Observation {
    let built: Vec<Pod> = pods
        .iter()
        .enumerate()
        .map(|(i, c)| Pod {
            name: format!("web-{i}"),
            phase: [
                PodPhase::Running,
                PodPhase::Pending,
                PodPhase::Failed,
                PodPhase::Succeeded,
                PodPhase::Unknown,
            ][c.phase as usize],
            ready: match c.ready {
                0 => None,
                r => Some(ReadyCondition {
                    status: [
                        ConditionStatus::True,
                        ConditionStatus::False,
                        ConditionStatus::Unknown,
                    ][(r - 1) as usize],
                    last_transition_time: now - SignedDuration::from_secs(c.started_secs_ago / 2),
                }),
            },
            start_time: Some(now - SignedDuration::from_secs(c.started_secs_ago)),
            deletion_timestamp: c.deleting.then_some(now),
            containers: vec![Container {
                name: "app".into(),
                requests: ResourceList::cpu(c.request),
            }],
            ..Default::default()
        })
        .collect();
    let samples: Vec<PodResourceSample> = pods
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            c.usage.map(|u| PodResourceSample {
                pod: format!("web-{i}"),
                timestamp: now - SignedDuration::from_secs(10),
                window: SignedDuration::from_secs(30),
                containers: vec![ContainerUsage {
                    name: "app".into(),
                    usage: ResourceList::cpu(u),
                }],
            })
        })
        .collect();
    let mut metrics = vec![MetricData::None];
    if let Some(ext) = external {
        metrics.push(match ext {
            Ok(v) => MetricData::Values(vec![ValueSample {
                value: v,
                timestamp: now,
            }]),
            Err(()) => MetricData::Failed("external metrics API unavailable".into()),
        });
    }
    Observation {
        scale: Ok(Scale {
            spec_replicas: current,
            status_replicas: current,
            selector: "app=web".into(),
        }),
        pods: built,
        resource_metrics: if resource_error {
            Err("metrics unavailable".into())
        } else {
            Ok(samples)
        },
        metrics: metrics.into_iter().map(Into::into).collect(),
        ..Default::default()
    }
}

fn behavior_strategy() -> impl Strategy<Value = Option<HorizontalPodAutoscalerBehavior>> {
    proptest::option::of(
        (
            prop_oneof![Just("Pods"), Just("Percent")],
            1i32..300,
            1i32..1800,
            0i32..600,
            prop_oneof![Just("Pods"), Just("Percent")],
            1i32..300,
            1i32..1800,
            0i32..600,
        )
            .prop_map(
                |(ut, uv, up, uw, dt, dv, dp, dw)| HorizontalPodAutoscalerBehavior {
                    scale_up: Some(rules(ut, uv, up, uw)),
                    scale_down: Some(rules(dt, dv, dp, dw)),
                },
            ),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Whatever is observed, a write to the target stays within [min, max], a decision never
    /// scales down while a metric failed, and nothing panics.
    #[test]
    fn one_decision_stays_in_bounds_and_never_scales_down_on_failure(
        min in 0i32..20,
        span in 0i32..200,
        current in prop_oneof![0i32..300, Just(i32::MAX), Just(1)],
        behavior in behavior_strategy(),
        pods in proptest::collection::vec(pod_case(), 0..40),
        resource_error in proptest::bool::weighted(0.15),
        external in proptest::option::of(prop_oneof![Just(Err(())), (-10_000i64..10_000_000).prop_map(Ok), Just(Ok(i64::MAX))]),
    ) {
        let min = min.max(1);
        let max = min + span;
        let spec = spec(min, max, behavior, external.is_some());
        let autoscaler = Autoscaler::new("ns", "web", &spec, &ControllerConfig::default()).expect("valid spec");
        let now = now0();
        let obs = observation(&pods, current, now, resource_error, external);
        // A history older than any window, so that stabilization does not mask the rules.
        let history = ScalingHistory {
            recommendations: vec![Recommendation { replicas: current, timestamp: now - SignedDuration::from_hours(2) }],
            ..Default::default()
        };
        let decision = decide(&autoscaler, &obs, EffectiveHorizontalPodAutoscalerStatus::default(), history, now);
        if let Some(to) = decision.scale_to {
            prop_assert!((min..=max).contains(&to), "wrote {to} outside [{min}, {max}]");
            let a_metric_failed = resource_error || external == Some(Err(()));
            if a_metric_failed && (min..=max).contains(&current) {
                prop_assert!(to >= current, "scaled down from {current} to {to} while a metric failed");
            }
        }
        if current == 0 {
            prop_assert_eq!(decision.scale_to, None, "scaling is disabled at zero replicas");
        }
        let result = decision.finish(&autoscaler, ScaleOutcome::Applied { at: now });
        prop_assert!(result.status.last_decision.is_some());
    }

    /// Over any run of decisions, each scale-up stays within what the up policy allows from
    /// the count at the start of its period, and each scale-down within the down policy.
    #[test]
    fn decisions_never_exceed_a_policy_within_its_period(
        up in (prop_oneof![Just("Pods"), Just("Percent")], 1i32..50, 15i32..600),
        down in (prop_oneof![Just("Pods"), Just("Percent")], 1i32..50, 15i32..600),
        start in 1i32..50,
        steps in proptest::collection::vec((1i64..120, 0i64..3000), 1..60),
    ) {
        let behavior = HorizontalPodAutoscalerBehavior {
            scale_up: Some(rules(up.0, up.1, up.2, 0)),
            scale_down: Some(rules(down.0, down.1, down.2, 0)),
        };
        let (min, max) = (1, 500);
        let spec = spec(min, max, Some(behavior), false);
        let autoscaler = Autoscaler::new("ns", "web", &spec, &ControllerConfig::default()).expect("valid spec");
        let mut now = now0();
        let mut replicas = start;
        // (time, replicas from then on)
        let mut timeline: Vec<(Timestamp, i32)> = vec![(now - SignedDuration::from_hours(24), start)];
        let mut status = EffectiveHorizontalPodAutoscalerStatus::default();
        let mut history = ScalingHistory::default();
        for (gap, usage) in steps {
            now += SignedDuration::from_secs(gap);
            let pods: Vec<PodCase> = (0..replicas)
                .map(|_| PodCase { phase: 0, ready: 1, started_secs_ago: 3600, deleting: false, request: 1000, usage: Some(usage) })
                .collect();
            let obs = observation(&pods, replicas, now, false, None);
            let decision = decide(&autoscaler, &obs, status, history, now);
            let to = decision.scale_to;
            let result = decision.finish(&autoscaler, ScaleOutcome::Applied { at: now });
            status = result.status;
            history = result.history;
            if let Some(to) = to {
                let allowance = |(kind, value, period): (&str, i32, i32), grow: bool| {
                    let cutoff = now - SignedDuration::from_secs(i64::from(period));
                    let start = timeline.iter().rev().find(|(t, _)| *t <= cutoff).map(|(_, r)| *r).unwrap_or(start);
                    let f = f64::from(start);
                    match (kind, grow) {
                        ("Pods", true) => start + value,
                        ("Pods", false) => start - value,
                        (_, true) => (f * (1.0 + f64::from(value) / 100.0)).ceil() as i32,
                        (_, false) => (f * (1.0 - f64::from(value) / 100.0)) as i32,
                    }
                };
                if to > replicas {
                    prop_assert!(to <= allowance(up, true), "scaled up to {to}, more than the up policy allows ({})", allowance(up, true));
                } else {
                    prop_assert!(to >= allowance(down, false).min(replicas), "scaled down to {to}, more than the down policy allows");
                }
                replicas = to;
                timeline.push((now, replicas));
            }
        }
    }
}

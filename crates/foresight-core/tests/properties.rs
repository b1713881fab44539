//! Properties of the decision that hold for any input: the result stays within bounds, a
//! failed metric never causes a scale-down, no sequence of decisions exceeds a rate-limit
//! policy within its period, and nothing panics or overflows; `spec.objective` changes nothing
//! unless it is set, and its operating points keep the bounds and `maxUtilization`.

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
use foresight_core::autoscaler::{Autoscaler, ControllerConfig, Target};
use foresight_core::decision::{decide, Observation, ScaleOutcome};
use foresight_core::metrics::{ContainerUsage, MetricData, PodResourceSample, ValueSample};
use foresight_core::objective::{Knobs, OperatingPoint};
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

/// `spec` with prediction and, when `max_utilization` is given, an objective allowing it.
fn with_objective(
    mut spec: EffectiveHorizontalPodAutoscalerSpec,
    objective: Option<(&str, Option<i32>)>,
) -> EffectiveHorizontalPodAutoscalerSpec {
    spec.prediction = Some(
        serde_json::from_value(serde_json::json!({
            "predictionAlgorithm": {"algorithmType": "dsp", "dsp": {"sampleInterval": "1m", "historyLength": "2d"}},
            "headroom": {"riskBudgetPercent": "1"},
        }))
        .expect("a prediction spec"),
    );
    spec.objective =
        objective.map(
            |(shortfall, max_utilization)| foresight_api::objective::ObjectiveSpec {
                shortfall: shortfall.to_owned(),
                max_utilization,
            },
        );
    spec
}

fn knobs() -> impl Strategy<Value = Knobs> {
    (
        proptest::option::of(prop_oneof![1i32..200, Just(i32::MAX), Just(i32::MIN)]),
        proptest::option::of(prop_oneof![0.0f64..60.0, Just(f64::NAN), Just(-1.0)]),
        any::<bool>(),
        proptest::option::of(prop_oneof![0.0f64..5.0, Just(f64::NAN), Just(100.0)]),
    )
        .prop_map(|(utilization, budget, prediction, carried)| Knobs {
            forecast_budget_percent: carried,
            utilization,
            risk_budget_percent: budget,
            prediction,
        })
}

/// A point, at times a schedule over the day (up to eight blocks, each at any knobs).
fn operating_point() -> impl Strategy<Value = OperatingPoint> {
    (
        knobs(),
        proptest::collection::vec(knobs(), 0..=8),
        any::<bool>(),
        0.0f64..1e6,
    )
        .prop_map(|(knobs, blocks, meets, figures)| OperatingPoint {
            knobs,
            chosen_at: 1_767_225_600,
            replayed_seconds: 3 * 86_400,
            under_minutes: figures,
            replica_hours: figures / 3.0,
            reactive_under_minutes: figures / 2.0,
            reactive_replica_hours: figures,
            meets,
            written_utilization: Some(60),
            blocks,
            carried_minutes: figures / 4.0 - 1e5,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Without `spec.objective`, an operating point in the observation (a shell's stale or
    /// stray one) changes nothing: the decision, its status and its history are today's.
    #[test]
    fn without_an_objective_decisions_are_identical(
        min in 1i32..20,
        span in 0i32..200,
        current in prop_oneof![0i32..300, Just(1)],
        pods in proptest::collection::vec(pod_case(), 0..30),
        point in operating_point(),
    ) {
        let spec = with_objective(spec(min, min + span, None, false), None);
        let autoscaler = Autoscaler::new("ns", "web", &spec, &ControllerConfig::default()).expect("valid spec");
        let now = now0();
        let plain = observation(&pods, current, now, false, None);
        let pointed = Observation { operating_point: Some(point), ..plain.clone() };
        let status = EffectiveHorizontalPodAutoscalerStatus::default;
        let a = decide(&autoscaler, &plain, status(), ScalingHistory::default(), now);
        let b = decide(&autoscaler, &pointed, status(), ScalingHistory::default(), now);
        prop_assert_eq!(a.scale_to, b.scale_to);
        prop_assert_eq!(a.desired_replicas, b.desired_replicas);
        let (a, b) = (
            a.finish(&autoscaler, ScaleOutcome::Applied { at: now }),
            b.finish(&autoscaler, ScaleOutcome::Applied { at: now }),
        );
        prop_assert_eq!(a.status, b.status);
        prop_assert_eq!(a.history, b.history);
    }

    /// Whatever operating point the shell hands over, the decision stays within
    /// [minReplicas, maxReplicas], every Utilization target it runs at is at most
    /// `maxUtilization` (the target as written when that is unset), and status shows the point.
    #[test]
    fn an_operating_point_stays_in_bounds_and_below_max_utilization(
        min in 1i32..20,
        span in 0i32..200,
        current in prop_oneof![1i32..300, Just(1)],
        pods in proptest::collection::vec(pod_case(), 0..30),
        max_utilization in proptest::option::of(60i32..=100),
        shortfall in prop_oneof![Just("AsReactive"), Just("1%"), Just("0.5%")],
        point in operating_point(),
    ) {
        let max = min + span;
        let spec = with_objective(spec(min, max, None, false), Some((shortfall, max_utilization)));
        let autoscaler = Autoscaler::new("ns", "web", &spec, &ControllerConfig::default()).expect("valid spec");
        for knobs in point.blocks.iter().chain([&point.knobs]) {
            let tuned = autoscaler.at_knobs(knobs);
            for m in &tuned.metrics {
                if let Target::Utilization(u) = m.target {
                    prop_assert!(u >= 1 && u <= max_utilization.unwrap_or(60), "target {u}% over {max_utilization:?}");
                }
            }
        }
        // Every three hours of a day, so every block of a schedule of up to eight decides.
        for hours in 0..8 {
            let now = Timestamp::from_second(1_767_225_600 + hours * 3 * 3600).expect("2026-01-01");
            let obs = Observation { operating_point: Some(point.clone()), ..observation(&pods, current, now, false, None) };
            let decision = decide(&autoscaler, &obs, EffectiveHorizontalPodAutoscalerStatus::default(), ScalingHistory::default(), now);
            if let Some(to) = decision.scale_to {
                prop_assert!((min..=max).contains(&to), "wrote {to} outside [{min}, {max}]");
            }
            let result = decision.finish(&autoscaler, ScaleOutcome::Applied { at: now });
            prop_assert_eq!(result.status.operating_point, Some(point.status()));
        }
    }
}

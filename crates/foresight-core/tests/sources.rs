//! How cron, prediction and the strategies shape a decision, end to end through `decide`.

use foresight_api::cron::CronSpec;
use foresight_api::hpa::{
    CrossVersionObjectReference, MetricSpec, MetricTarget, ResourceMetricSource,
};
use foresight_api::prediction::{PredictionAlgorithm, PredictionSpec};
use foresight_api::spec::{EffectiveHorizontalPodAutoscalerSpec, ScaleStrategy};
use foresight_api::status::{
    ConditionStatus, EffectiveHorizontalPodAutoscalerStatus, Recommendation, ScalingHistory,
};
use foresight_core::autoscaler::{Autoscaler, ControllerConfig};
use foresight_core::conditions;
use foresight_core::decision::{decide, Decision, Observation, ScaleOutcome};
use foresight_core::forecasting::ForecastInput;
use foresight_core::metrics::{ContainerUsage, PodResourceSample};
use foresight_core::pods::{Container, Pod, PodPhase, ReadyCondition};
use foresight_core::prediction::{Algorithm, Forecast};
use foresight_core::proposals::Scale;
use foresight_core::resources::ResourceList;
use jiff::{SignedDuration, Timestamp};

fn at(s: &str) -> Timestamp {
    s.parse().expect("timestamp")
}

fn base() -> EffectiveHorizontalPodAutoscalerSpec {
    EffectiveHorizontalPodAutoscalerSpec {
        scale_target_ref: CrossVersionObjectReference {
            kind: "Deployment".into(),
            name: "web".into(),
            api_version: Some("apps/v1".into()),
        },
        min_replicas: Some(1),
        max_replicas: 100,
        ..Default::default()
    }
}

fn cpu_60() -> MetricSpec {
    MetricSpec {
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
    }
}

fn morning_cron(target: i32) -> CronSpec {
    CronSpec {
        name: "morning".into(),
        timezone: Some("Europe/Paris".into()),
        start: "0 8 * * 1-5".into(),
        end: "0 10 * * 1-5".into(),
        target_replicas: target,
        ..Default::default()
    }
}

/// `replicas` running, ready pods each requesting 1 CPU and using `usage_milli` of it.
fn observation(replicas: i32, usage_milli: i64, now: Timestamp) -> Observation {
    let started = now - SignedDuration::from_hours(3);
    let pods: Vec<Pod> = (0..replicas)
        .map(|i| Pod {
            name: format!("web-{i}"),
            phase: PodPhase::Running,
            ready: Some(ReadyCondition {
                status: ConditionStatus::True,
                last_transition_time: started,
            }),
            start_time: Some(started),
            deletion_timestamp: None,
            containers: vec![Container {
                name: "app".into(),
                requests: ResourceList::cpu(1000),
            }],
            ..Default::default()
        })
        .collect();
    let samples = pods
        .iter()
        .map(|p| PodResourceSample {
            pod: p.name.clone(),
            timestamp: now - SignedDuration::from_secs(15),
            window: SignedDuration::from_secs(30),
            containers: vec![ContainerUsage {
                name: "app".into(),
                usage: ResourceList::cpu(usage_milli),
            }],
        })
        .collect();
    Observation {
        scale: Ok(Scale {
            spec_replicas: replicas,
            status_replicas: replicas,
            selector: "app=web".into(),
        }),
        pods,
        resource_metrics: Ok(samples),
        ..Default::default()
    }
}

fn run(spec: &EffectiveHorizontalPodAutoscalerSpec, obs: &Observation, now: Timestamp) -> Decision {
    let autoscaler =
        Autoscaler::new("shop", "web", spec, &ControllerConfig::default()).expect("valid spec");
    // A history older than any window: only the sources decide.
    let current = obs.scale.as_ref().map(|s| s.spec_replicas).unwrap_or(0);
    let history = ScalingHistory {
        recommendations: vec![Recommendation {
            replicas: current,
            timestamp: now - SignedDuration::from_hours(2),
        }],
        ..Default::default()
    };
    decide(
        &autoscaler,
        obs,
        EffectiveHorizontalPodAutoscalerStatus::default(),
        history,
        now,
    )
}

fn condition(d: &Decision, type_: &str) -> (ConditionStatus, String, String) {
    let c =
        conditions::get(d.conditions(), type_).unwrap_or_else(|| panic!("no {type_} condition"));
    (c.status, c.reason.clone(), c.message.clone())
}

// Monday 2026-03-02, 08:30 in Paris (07:30 UTC): inside the morning window.
const IN_WINDOW: &str = "2026-03-02T07:30:00Z";
// Monday 2026-03-02, 12:00 in Paris: outside it.
const OUT_OF_WINDOW: &str = "2026-03-02T11:00:00Z";

#[test]
fn an_active_cron_alone_sets_the_exact_target() {
    let mut spec = base();
    spec.crons = vec![morning_cron(12)];
    let now = at(IN_WINDOW);
    let d = run(&spec, &observation(11, 500, now), now);
    // 12 is within 10% of 11, yet cron targets are exact: no tolerance.
    assert_eq!(d.scale_to, Some(12));
    let (status, reason, message) = condition(&d, "CronActive");
    assert_eq!(
        (status, reason.as_str()),
        (ConditionStatus::True, "WindowOpen")
    );
    assert!(
        message.contains("morning (12)") && message.contains("next change at 2026-03-02T09:00:00Z"),
        "{message}"
    );
}

#[test]
fn an_inactive_cron_alone_keeps_the_current_size() {
    let mut spec = base();
    spec.crons = vec![morning_cron(12)];
    let now = at(OUT_OF_WINDOW);
    let d = run(&spec, &observation(7, 500, now), now);
    assert_eq!(d.scale_to, None);
    assert_eq!(d.desired_replicas, 7);
    assert_eq!(condition(&d, "CronActive").0, ConditionStatus::False);
}

#[test]
fn with_metrics_an_inactive_cron_proposes_nothing() {
    let mut spec = base();
    spec.metrics = vec![cpu_60()];
    spec.crons = vec![morning_cron(12)];
    let now = at(OUT_OF_WINDOW);
    // 10 pods at 30% of request against 60%: metrics want 5.
    let d = run(&spec, &observation(10, 300, now), now);
    assert_eq!(d.scale_to, Some(5));
}

#[test]
fn with_metrics_an_active_cron_is_a_floor() {
    let mut spec = base();
    spec.metrics = vec![cpu_60()];
    spec.crons = vec![morning_cron(12)];
    let now = at(IN_WINDOW);
    let low = run(&spec, &observation(10, 300, now), now);
    assert_eq!(
        low.scale_to,
        Some(12),
        "cron holds 12 although metrics want 5"
    );
    let high = run(&spec, &observation(10, 1200, now), now);
    assert_eq!(high.scale_to, Some(20), "metrics above the cron target win");
}

fn with_prediction(window: i32) -> EffectiveHorizontalPodAutoscalerSpec {
    let mut spec = base();
    spec.metrics = vec![cpu_60()];
    spec.prediction = Some(PredictionSpec {
        prediction_window_seconds: Some(window),
        prediction_algorithm: Some(PredictionAlgorithm {
            algorithm_type: "dsp".into(),
            ..Default::default()
        }),
        // These cases check the window's peak, Crane's way.
        horizon: Some("Window".into()),
        ..Default::default()
    });
    spec
}

/// A forecast of total CPU cores, one value a minute from `now`, rising to `peak` cores at
/// `peak_minute`.
fn rising_forecast(now: Timestamp, peak_minute: usize, peak: f64) -> Forecast {
    let values = (0..120)
        .map(|m| if m == peak_minute { peak } else { 3.0 })
        .collect();
    Forecast {
        algorithm: Algorithm::Dsp,
        period_seconds: Some(86_400),
        start: now.as_second(),
        step: 60,
        values,
        estimator: "fft, margin 0.1".into(),
    }
}

/// Gives the observation's one metric `forecast`.
fn set_forecast(obs: &mut Observation, forecast: ForecastInput) {
    obs.metrics.resize_with(1, Default::default);
    obs.metrics[0].forecast = forecast;
}

#[test]
fn a_forecast_peak_inside_the_window_scales_up_ahead_of_it() {
    let now = at(IN_WINDOW);
    let mut obs = observation(5, 600, now); // exactly at target now: metrics want 5
                                            // 12 cores at minute 40: 12000m / (1000m × 60%) = 20 pods.
    set_forecast(
        &mut obs,
        ForecastInput::Ready(rising_forecast(now, 40, 12.0)),
    );
    let d = run(&with_prediction(3600), &obs, now);
    assert_eq!(
        d.scale_to,
        Some(10),
        "the default scale-up policy allows doubling per 15 s"
    );
    let (status, reason, _) = condition(&d, "PredictionReady");
    assert_eq!(
        (status, reason.as_str()),
        (ConditionStatus::True, "PredictSucceed")
    );
    let record = &d.record;
    let prediction = record
        .proposals
        .iter()
        .find(|p| p.source == "prediction")
        .expect("a prediction proposal");
    assert_eq!(prediction.replicas, Some(20));
    assert!(prediction
        .current
        .as_deref()
        .unwrap_or_default()
        .contains("2026-03-02T08:10:00Z"));
}

#[test]
fn a_peak_beyond_the_window_is_ignored() {
    let now = at(IN_WINDOW);
    let mut obs = observation(5, 600, now);
    set_forecast(
        &mut obs,
        ForecastInput::Ready(rising_forecast(now, 40, 12.0)),
    );
    let d = run(&with_prediction(1800), &obs, now);
    assert_eq!(
        d.scale_to, None,
        "the peak at 40 min is outside a 30-min window"
    );
}

#[test]
fn an_unready_predictor_falls_back_to_the_observed_metric_and_says_why() {
    let now = at(IN_WINDOW);
    let mut obs = observation(5, 1200, now);
    set_forecast(
        &mut obs,
        ForecastInput::NotReady("history 1d 4h < 2 periods".into()),
    );
    let d = run(&with_prediction(3600), &obs, now);
    assert_eq!(d.scale_to, Some(10), "the observed metric still scales");
    let (status, reason, message) = condition(&d, "PredictionReady");
    assert_eq!(
        (status, reason.as_str()),
        (ConditionStatus::False, "PredictNotReady")
    );
    assert!(message.contains("history 1d 4h < 2 periods"), "{message}");
}

#[test]
fn an_out_of_date_forecast_is_not_used() {
    let now = at(IN_WINDOW);
    let mut obs = observation(5, 600, now);
    set_forecast(
        &mut obs,
        ForecastInput::Ready(rising_forecast(
            now - SignedDuration::from_hours(3),
            40,
            50.0,
        )),
    );
    let d = run(&with_prediction(3600), &obs, now);
    assert_eq!(d.scale_to, None);
    let (status, _, message) = condition(&d, "PredictionReady");
    assert_eq!(status, ConditionStatus::False);
    assert!(message.contains("out of date"), "{message}");
}

#[test]
fn preview_records_the_decision_without_acting() {
    let mut spec = base();
    spec.metrics = vec![cpu_60()];
    spec.scale_strategy = Some(ScaleStrategy::Preview);
    let now = at(IN_WINDOW);
    let obs = observation(4, 1200, now);
    let autoscaler =
        Autoscaler::new("shop", "web", &spec, &ControllerConfig::default()).expect("valid spec");
    let d = decide(
        &autoscaler,
        &obs,
        Default::default(),
        Default::default(),
        now,
    );
    assert_eq!(d.scale_to, None, "Preview never writes the target");
    assert_eq!(d.desired_replicas, 8);
    let result = d.finish(&autoscaler, ScaleOutcome::NotAttempted);
    assert_eq!(
        result.status.desired_replicas,
        Some(8),
        "status shows what Auto would do"
    );
    assert_eq!(result.status.current_replicas, Some(4));
    assert!(
        result.history.scale_up_events.is_empty(),
        "nothing was scaled, so no scale event"
    );
    let summary = result.status.last_decision.expect("record").summary;
    assert!(
        summary.starts_with("preview, not applied; would scale 4 -> 8"),
        "{summary}"
    );
}

#[test]
fn preview_with_specific_replicas_holds_that_count() {
    let mut spec = base();
    spec.metrics = vec![cpu_60()];
    spec.scale_strategy = Some(ScaleStrategy::Preview);
    spec.specific_replicas = Some(6);
    let now = at(IN_WINDOW);
    assert_eq!(
        run(&spec, &observation(4, 1200, now), now).scale_to,
        Some(6)
    );
    assert_eq!(
        run(&spec, &observation(6, 1200, now), now).scale_to,
        None,
        "already held"
    );
}

#[test]
fn an_unreadable_selector_stops_the_decision_as_kubernetes_does() {
    let mut spec = base();
    spec.metrics = vec![cpu_60()];
    let now = at(IN_WINDOW);
    let mut obs = observation(4, 1200, now);
    obs.selector_error = Some("unable to parse requirement: invalid label key \"a b\"".into());
    let d = run(&spec, &obs, now);
    assert_eq!(d.scale_to, None);
    let (status, reason, message) = condition(&d, "ScalingActive");
    assert_eq!(
        (status, reason.as_str()),
        (ConditionStatus::False, "InvalidSelector")
    );
    assert!(message
        .starts_with("couldn't convert selector into a corresponding internal selector object: "));
    assert_eq!(
        d.events.first().map(|e| e.reason.as_str()),
        Some("InvalidSelector")
    );
}

/// The controller reads metrics only when `reads_metrics` says the decision will use them;
/// whenever it says not, the decision is the same with the metrics as without them.
#[test]
fn metrics_are_read_exactly_when_the_decision_uses_them() {
    use foresight_core::decision::reads_metrics;
    let now = at("2026-03-02T14:00:00Z");
    let mut spec = base();
    spec.min_replicas = Some(2);
    spec.max_replicas = 10;
    spec.metrics = vec![cpu_60()];
    let autoscaler =
        Autoscaler::new("shop", "web", &spec, &ControllerConfig::default()).expect("valid spec");
    for (replicas, selector, conflicts, reads) in [
        (0, "app=web", false, false),
        (1, "app=web", false, false),
        (11, "app=web", false, false),
        (4, "", false, false),
        (4, "app=web", true, false),
        (4, "app=web", false, true),
        (2, "app=web", false, true),
        (10, "app=web", false, true),
    ] {
        let mut with = observation(replicas, 900, now);
        with.scale.as_mut().unwrap().selector = selector.into();
        if conflicts {
            with.conflicts = vec!["shop/other".into()];
        }
        let scale = with.scale.clone().unwrap();
        assert_eq!(
            reads_metrics(&autoscaler, &scale, conflicts, &Default::default()),
            reads,
            "{replicas} replicas, selector {selector:?}, conflicts {conflicts}"
        );
        if !reads {
            let mut without = with.clone();
            without.pods.clear();
            without.resource_metrics = Ok(Vec::new());
            let (a, b) = (run(&spec, &with, now), run(&spec, &without, now));
            assert_eq!(
                a.desired_replicas, b.desired_replicas,
                "{replicas} replicas"
            );
            assert_eq!(a.record, b.record, "{replicas} replicas");
        }
    }
}

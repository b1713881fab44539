//! The lead-time horizon, forecast accuracy and demotion, through `decide`: what
//! docs/prediction.md promises about "From forecast to replicas" and "When prediction is
//! wrong".

use foresight_api::hpa::{
    CrossVersionObjectReference, MetricSpec, MetricTarget, ResourceMetricSource,
};
use foresight_api::prediction::{AccuracySpec, HeadroomSpec, PredictionAlgorithm, PredictionSpec};
use foresight_api::spec::EffectiveHorizontalPodAutoscalerSpec;
use foresight_api::status::{
    ConditionStatus, EffectiveHorizontalPodAutoscalerStatus, ForecastAccuracyStatus,
    PredictionStatus, Recommendation, ScalingHistory,
};
use foresight_core::autoscaler::{Autoscaler, ControllerConfig, Horizon, PredictionPolicy};
use foresight_core::conditions;
use foresight_core::decision::{decide, Decision, MetricObservation, Observation, ScaleOutcome};
use foresight_core::forecasting::{self, forecast_proposal, ForecastInput, HeadroomInput, Span};
use foresight_core::metrics::{ContainerUsage, PodResourceSample};
use foresight_core::objective::{Knobs, OperatingPoint};
use foresight_core::pods::Readiness;
use foresight_core::pods::{Container, Pod, PodPhase, ReadyCondition};
use foresight_core::prediction::{
    Accuracy, Algorithm, Evaluation, EvaluationInput, Forecast, Headroom, PredictorConfig,
};
use foresight_core::proposals::Scale;
use foresight_core::replicas::{ReplicaContext, Tolerance};
use foresight_core::resources::ResourceList;
use foresight_core::version::KubernetesVersion;
use jiff::{SignedDuration, Timestamp};
use proptest::prelude::*;

const NOW: i64 = 1_772_438_400; // 2026-03-02T08:00:00Z

fn now() -> Timestamp {
    Timestamp::from_second(NOW).unwrap()
}

fn spec(horizon: Option<&str>, max_error: Option<i32>) -> EffectiveHorizontalPodAutoscalerSpec {
    EffectiveHorizontalPodAutoscalerSpec {
        scale_target_ref: CrossVersionObjectReference {
            api_version: Some("apps/v1".into()),
            kind: "Deployment".into(),
            name: "web".into(),
        },
        min_replicas: Some(1),
        max_replicas: 100,
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
        prediction: Some(PredictionSpec {
            prediction_window_seconds: Some(3600),
            prediction_algorithm: Some(PredictionAlgorithm {
                algorithm_type: "dsp".into(),
                ..Default::default()
            }),
            horizon: horizon.map(Into::into),
            accuracy: Some(AccuracySpec {
                max_error_percent: max_error,
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// `replicas` pods of 1000m CPU requests, each using `usage` millicores, that took
/// `startup` seconds from creation to Ready.
fn observation(replicas: i32, usage: i64, startup: i64) -> Observation {
    let started = now() - SignedDuration::from_hours(3);
    let pods: Vec<Pod> = (0..replicas)
        .map(|i| Pod {
            name: format!("web-{i}"),
            phase: PodPhase::Running,
            ready: Some(ReadyCondition {
                status: ConditionStatus::True,
                last_transition_time: started + SignedDuration::from_secs(startup),
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
            timestamp: now() - SignedDuration::from_secs(15),
            window: SignedDuration::from_secs(30),
            containers: vec![ContainerUsage {
                name: "app".into(),
                usage: ResourceList::cpu(usage),
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

/// Total cores, one value a minute from a minute before now: `base`, with `peak` at `minute`.
fn forecast(base: f64, minute: usize, peak: f64) -> Forecast {
    Forecast {
        algorithm: Algorithm::Dsp,
        period_seconds: Some(86_400),
        start: NOW - 60,
        step: 60,
        values: (0..180)
            .map(|m| if m == minute + 1 { peak } else { base })
            .collect(),
        estimator: "test".into(),
    }
}

fn accuracy(error_percent: f64, level: f64) -> Accuracy {
    Accuracy {
        samples: 600,
        error_percent,
        mape_percent: error_percent,
        under_forecast_percent: 50.0,
        peak_error_percent: error_percent,
        level,
    }
}

fn run(
    spec: &EffectiveHorizontalPodAutoscalerSpec,
    obs: &Observation,
    prior: EffectiveHorizontalPodAutoscalerStatus,
) -> Decision {
    let autoscaler =
        Autoscaler::new("shop", "web", spec, &ControllerConfig::default()).expect("valid spec");
    let current = obs.scale.as_ref().map(|s| s.spec_replicas).unwrap_or(0);
    let history = ScalingHistory {
        recommendations: vec![Recommendation {
            replicas: current,
            timestamp: now() - SignedDuration::from_hours(2),
        }],
        ..Default::default()
    };
    decide(&autoscaler, obs, prior, history, now())
}

/// The status the decision leaves (nothing written to the workload).
fn finished(
    spec: &EffectiveHorizontalPodAutoscalerSpec,
    d: Decision,
) -> EffectiveHorizontalPodAutoscalerStatus {
    let autoscaler =
        Autoscaler::new("shop", "web", spec, &ControllerConfig::default()).expect("valid spec");
    d.finish(&autoscaler, ScaleOutcome::NotAttempted).status
}

fn prediction_proposal(d: &Decision) -> Option<i32> {
    d.record
        .proposals
        .iter()
        .find(|p| p.source == "prediction")
        .and_then(|p| p.replicas)
}

fn ready(d: &Decision) -> (ConditionStatus, String, String) {
    let c = conditions::get(d.conditions(), "PredictionReady").expect("PredictionReady");
    (c.status, c.reason.clone(), c.message.clone())
}

/// The observation's one metric, created when absent.
fn metric(obs: &mut Observation) -> &mut MetricObservation {
    obs.metrics.resize_with(1, Default::default);
    &mut obs.metrics[0]
}

#[test]
fn the_lead_time_horizon_scales_for_what_comes_before_capacity_is_ready() {
    // Start-up measured at 90 s; two 15 s syncs: the proposal covers the next 120 s.
    let mut obs = observation(5, 600, 90);
    // 12 cores in 40 minutes: beyond the lead time, inside Crane's hour.
    metric(&mut obs).forecast = ForecastInput::Ready(forecast(3.0, 40, 12.0));
    let lead = run(&spec(None, None), &obs, Default::default());
    assert_eq!(prediction_proposal(&lead), Some(5), "3 cores / 0.6 per pod");
    let status = lead
        .record
        .proposals
        .iter()
        .find(|p| p.source == "prediction")
        .unwrap();
    assert!(
        status
            .detail
            .as_deref()
            .unwrap_or_default()
            .contains("next 120s (start-up 90s measured"),
        "{status:?}"
    );
    let window = run(&spec(Some("Window"), None), &obs, Default::default());
    assert_eq!(
        prediction_proposal(&window),
        Some(20),
        "Crane's hour holds the 12-core peak"
    );

    // The same peak due in 2 minutes is inside the lead time.
    metric(&mut obs).forecast = ForecastInput::Ready(forecast(3.0, 2, 12.0));
    assert_eq!(
        prediction_proposal(&run(&spec(None, None), &obs, Default::default())),
        Some(20)
    );
}

#[test]
fn forecasts_that_ran_high_are_discounted_by_their_level() {
    let mut obs = observation(5, 600, 60);
    metric(&mut obs).forecast = ForecastInput::Ready(forecast(6.0, 0, 6.0));
    // Observed 75% of what was forecast: 6 cores count as 4.5 → 7.5 → 8 pods, not 10.
    metric(&mut obs).accuracy = Some(accuracy(25.0, 0.75));
    let d = run(&spec(None, None), &obs, Default::default());
    assert_eq!(prediction_proposal(&d), Some(8));
    let status = finished(&spec(None, None), d);
    assert_eq!(
        status.prediction.as_ref().unwrap().metrics[0].correction_percent,
        -25
    );
}

#[test]
fn an_inaccurate_forecast_is_demoted_and_resumes_only_well_below_the_threshold() {
    let mut obs = observation(5, 600, 60);
    metric(&mut obs).forecast = ForecastInput::Ready(forecast(12.0, 0, 12.0));
    metric(&mut obs).accuracy = Some(accuracy(80.0, 1.0));
    let demoted = run(&spec(None, Some(50)), &obs, Default::default());
    let (status, reason, message) = ready(&demoted);
    assert_eq!(
        (status, reason.as_str()),
        (ConditionStatus::False, "ForecastInaccurate")
    );
    assert!(message.contains("forecast error 80% > 50%"), "{message}");
    assert_eq!(prediction_proposal(&demoted), None);
    assert_eq!(
        demoted.desired_replicas, 5,
        "the observed metric decides alone"
    );

    // 45%: below the threshold but not below 80% of it; having been demoted, it stays so.
    let prior = finished(&spec(None, Some(50)), demoted);
    metric(&mut obs).accuracy = Some(accuracy(45.0, 1.0));
    let still = run(&spec(None, Some(50)), &obs, prior.clone());
    assert_eq!(ready(&still).1, "ForecastInaccurate");
    // Never demoted before, 45% is fine.
    let fresh = run(&spec(None, Some(50)), &obs, Default::default());
    assert_eq!(ready(&fresh).1, "PredictSucceed");
    // 30% is below 40%: prediction resumes.
    metric(&mut obs).accuracy = Some(accuracy(30.0, 1.0));
    let resumed = run(&spec(None, Some(50)), &obs, prior);
    assert_eq!(ready(&resumed).1, "PredictSucceed");
    assert_eq!(prediction_proposal(&resumed), Some(20));
    // maxErrorPercent 0 never demotes.
    metric(&mut obs).accuracy = Some(accuracy(500.0, 1.0));
    assert_eq!(
        ready(&run(&spec(None, Some(0)), &obs, Default::default())).1,
        "PredictSucceed"
    );
}

#[test]
fn status_carries_the_accuracy_and_the_lead_time() {
    let mut obs = observation(5, 600, 75);
    metric(&mut obs).forecast = ForecastInput::Ready(forecast(3.0, 0, 3.0));
    metric(&mut obs).accuracy = Some(accuracy(12.4, 1.0));
    let status = finished(
        &spec(None, None),
        run(&spec(None, None), &obs, Default::default()),
    );
    assert_eq!(
        status.prediction,
        Some(PredictionStatus {
            horizon: "LeadTime".into(),
            horizon_seconds: 105,
            startup_seconds: 75,
            startup_measured: true,
            metrics: vec![ForecastAccuracyStatus {
                metric: "resource.cpu".into(),
                samples: 600,
                error_percent: 12,
                mape_percent: 12,
                under_forecast_percent: 50,
                peak_error_percent: 12,
                correction_percent: 0,
                demoted: false,
                evaluation: None,
            }],
        })
    );
}

proptest! {
    /// Demotion only takes a source away: the decision is never above the one made with the
    /// same forecast trusted.
    #[test]
    fn demotion_never_raises_the_proposal(
        usage in 0i64..3000,
        replicas in 1i32..30,
        base in 0.0f64..40.0,
        peak in 0.0f64..80.0,
        minute in 0usize..5,
        error in 0.0f64..300.0,
    ) {
        let mut obs = observation(replicas, usage, 60);
        metric(&mut obs).forecast = ForecastInput::Ready(forecast(base, minute, peak));
        metric(&mut obs).accuracy = Some(accuracy(error, 1.0));
        let judged = run(&spec(None, Some(50)), &obs, Default::default());
        let trusted = run(&spec(None, Some(0)), &obs, Default::default());
        prop_assert!(judged.desired_replicas <= trusted.desired_replicas);
    }

    /// With a perfect forecast (no correction), the lead-time proposal is never below what
    /// the load at now + lead needs.
    #[test]
    fn a_perfect_forecast_covers_the_load_at_the_lead_time(
        values in proptest::collection::vec(0.0f64..500.0, 30..60),
        startup in 0i64..600,
        sync in 1i64..60,
        current in 0i32..50,
        offset in 0i64..60,
    ) {
        let policy = PredictionPolicy {
            window_seconds: 3600,
            horizon: Horizon::LeadTime,
            startup_seconds: Some(startup),
            accuracy_window_seconds: 86_400,
            max_error_percent: 50,
            predictor: PredictorConfig::from_spec(&PredictionAlgorithm {
                algorithm_type: "dsp".into(),
                ..Default::default()
            })
            .expect("the default DSP settings"),
            history_queries: Default::default(),
            headroom_quantile: None,
            self_evaluation: false,
            forecast_error_budget: None,
            headroom_guards_scale_down: false,
        };
        let reach = forecasting::reach(&policy, &[], sync);
        let lead = startup + sync;
        prop_assume!(lead <= reach.horizon_seconds);
        let now = NOW + offset;
        let f = Forecast {
            algorithm: Algorithm::Dsp,
            period_seconds: Some(86_400),
            start: NOW - 60,
            step: 60,
            values: values.clone(),
            estimator: "perfect".into(),
        };
        let Some(at_lead) = f.value_at(now + lead) else { return Ok(()) };
        // One replica per 10 units (AverageValue 10).
        let metric = foresight_core::autoscaler::Metric::compile(&serde_json::from_value(
            serde_json::json!({"type": "External", "external": {"metric": {"name": "q"},
                "target": {"type": "AverageValue", "averageValue": "10"}}}),
        ).unwrap());
        let span = Span {
            from_seconds: startup,
            horizon_seconds: reach.horizon_seconds,
            correction: 1.0,
            strict_up: true,
        };
        let ctx = ReplicaContext {
            pods: &[],
            tolerance: Tolerance::default(),
            readiness: Readiness::default(),
            now: Timestamp::from_second(now).unwrap(),
            kubernetes: KubernetesVersion::default(),
            explain: true,
            averages: &Default::default(),
        };
        let p = forecast_proposal(&metric, &f, span, current, &ctx).unwrap();
        let needed = (at_lead / 10.0).ceil() as i32;
        prop_assert!(p.replicas >= needed, "{} < {needed} (load {at_lead} at +{lead}s)", p.replicas);
    }
}

/// Headroom learned with `rise` cores in every hour of the day (`quantile` 0.99).
fn headroom(rise: f64) -> Headroom {
    Headroom {
        rises: vec![rise; 24],
        quantile: 0.99,
        lead_from_seconds: 60,
        lead_to_seconds: 90,
        samples: 4000,
    }
}

/// A replay's verdict: prediction's cost, and the reactive cost at its shortfall.
fn verdict(predictive_hours: f64, reactive_hours: f64) -> Evaluation {
    Evaluation {
        at: NOW - 3600,
        replayed_seconds: 3 * 86_400,
        predictive_under_seconds: 60.0,
        predictive_replica_hours: predictive_hours,
        reactive_under_seconds: 600.0,
        reactive_replica_hours: reactive_hours * 0.9,
        equal_shortfall_replica_hours: reactive_hours,
    }
}

fn headroom_proposal(d: &Decision) -> Option<i32> {
    d.record
        .proposals
        .iter()
        .find(|p| p.source == "headroom")
        .and_then(|p| p.replicas)
}

#[test]
fn headroom_carries_the_load_plus_this_hours_rise_at_capacity() {
    // 5 pods at 600m of 1000m: 3 cores, at the 60% target exactly.
    let mut obs = observation(5, 600, 60);
    metric(&mut obs).headroom = HeadroomInput::Ready(headroom(4.0));
    let d = run(&spec(None, None), &obs, Default::default());
    // 3 cores of load + 4 for the rise, a pod carrying its 1000m request: 7 pods.
    assert_eq!(headroom_proposal(&d), Some(7));
    assert_eq!(d.record.recommendation, Some(7));
    // A calm hour adds nothing: 3 pods at capacity, below the metric's own 5.
    metric(&mut obs).headroom = HeadroomInput::Ready(headroom(0.0));
    let calm = run(&spec(None, None), &obs, Default::default());
    assert_eq!(headroom_proposal(&calm), Some(3));
    assert_eq!(calm.record.recommendation, Some(5));
    // Turned off in the spec, it proposes nothing.
    let mut off = spec(None, None);
    off.prediction.as_mut().unwrap().headroom = Some(HeadroomSpec {
        enabled: Some(false),
        ..Default::default()
    });
    metric(&mut obs).headroom = HeadroomInput::Ready(headroom(4.0));
    assert_eq!(
        headroom_proposal(&run(&off, &obs, Default::default())),
        None
    );
}

#[test]
fn a_verdict_must_save_ten_percent_to_start_prediction_and_more_than_nothing_to_keep_it() {
    let mut obs = observation(5, 600, 60);
    metric(&mut obs).headroom = HeadroomInput::Ready(headroom(4.0));
    // 5% cheaper at equal shortfall: kept while prediction proposes...
    metric(&mut obs).evaluation = EvaluationInput::Done(verdict(95.0, 100.0));
    let kept = run(&spec(None, None), &obs, Default::default());
    assert_eq!(kept.record.recommendation, Some(7));
    let status = finished(&spec(None, None), kept);
    let e = status.prediction.as_ref().unwrap().metrics[0]
        .evaluation
        .clone()
        .unwrap();
    assert!(e.kept && e.saving_percent == 5, "{e:?}");
    // ... but not enough to start it again once a verdict turned it off.
    let mut off = status.clone();
    if let Some(e) = off.prediction.as_mut().unwrap().metrics[0]
        .evaluation
        .as_mut()
    {
        e.kept = false;
    }
    let held = run(&spec(None, None), &obs, off.clone());
    assert_eq!(held.record.recommendation, Some(5));
    let (state, reason, message) = ready(&held);
    assert_eq!(
        (state, reason.as_str()),
        (ConditionStatus::False, "NoSavingInReplay")
    );
    assert!(message.contains("+5.0%"), "{message}");
    // 12% is enough.
    metric(&mut obs).evaluation = EvaluationInput::Done(verdict(88.0, 100.0));
    assert_eq!(
        run(&spec(None, None), &obs, off).record.recommendation,
        Some(7)
    );
    // Turned off in the spec, no verdict holds prediction back.
    let mut unjudged = spec(None, None);
    unjudged.prediction.as_mut().unwrap().self_evaluation = Some(false);
    metric(&mut obs).evaluation = EvaluationInput::Done(verdict(150.0, 100.0));
    assert_eq!(
        run(&unjudged, &obs, Default::default())
            .record
            .recommendation,
        Some(7)
    );
}

proptest! {
    /// Learned headroom only adds a candidate: the recommendation is never below the one made
    /// without it, whatever the load, the pods and the rise.
    #[test]
    fn headroom_never_lowers_what_the_observed_metrics_propose(
        usage in 0i64..3000,
        replicas in 1i32..30,
        rise in 0.0f64..50.0,
        startup in 0i64..600,
    ) {
        let mut obs = observation(replicas, usage, startup);
        let without = run(&spec(None, None), &obs, Default::default());
        metric(&mut obs).headroom = HeadroomInput::Ready(headroom(rise));
        let with = run(&spec(None, None), &obs, Default::default());
        prop_assert!(with.record.recommendation >= without.record.recommendation);
        let observed = with.record.proposals.iter()
            .filter(|p| p.source == "metric")
            .filter_map(|p| p.replicas)
            .max();
        prop_assert!(with.record.recommendation >= observed);
    }

    /// Self-evaluation never turns prediction on where its replay shows a loss: with such a
    /// verdict the decision is the one made with no forecast and no headroom at all.
    #[test]
    fn a_replay_that_shows_a_loss_leaves_prediction_off(
        usage in 0i64..3000,
        replicas in 1i32..30,
        peak in 0.0f64..80.0,
        minute in 0usize..5,
        rise in 0.0f64..50.0,
        predictive_hours in 1.0f64..1000.0,
        loss in 0.0f64..1.0,
        was_kept in any::<bool>(),
    ) {
        let mut obs = observation(replicas, usage, 60);
        let plain = run(&spec(None, Some(0)), &obs, Default::default());
        metric(&mut obs).forecast = ForecastInput::Ready(forecast(1.0, minute, peak));
        metric(&mut obs).headroom = HeadroomInput::Ready(headroom(rise));
        metric(&mut obs).evaluation =
            EvaluationInput::Done(verdict(predictive_hours, predictive_hours * (1.0 - loss)));
        let mut prior = EffectiveHorizontalPodAutoscalerStatus::default();
        if !was_kept {
            let judged = run(&spec(None, Some(0)), &obs, Default::default());
            prior = finished(&spec(None, Some(0)), judged);
            if let Some(e) = prior.prediction.as_mut().unwrap().metrics[0].evaluation.as_mut() {
                e.kept = false;
            }
        }
        let judged = run(&spec(None, Some(0)), &obs, prior);
        prop_assert_eq!(judged.record.recommendation, plain.record.recommendation);
        prop_assert!(judged.record.proposals.iter()
            .filter(|p| p.source == "prediction" || p.source == "headroom")
            .all(|p| p.replicas.is_none()));
        prop_assert_eq!(ready(&judged).1, "NoSavingInReplay");
    }
}

/// A spec at 60% with a 300 s scale-down window and, when `objective`, the objective
/// `{shortfall: AsReactive, maxUtilization: 90}`.
fn windowed_spec(objective: bool) -> EffectiveHorizontalPodAutoscalerSpec {
    let mut s = spec(None, None);
    s.behavior = Some(foresight_api::hpa::HorizontalPodAutoscalerBehavior {
        scale_down: Some(foresight_api::hpa::HpaScalingRules {
            stabilization_window_seconds: Some(300),
            ..Default::default()
        }),
        ..Default::default()
    });
    s.objective = objective.then(|| foresight_api::objective::ObjectiveSpec {
        shortfall: "AsReactive".into(),
        max_utilization: Some(90),
    });
    s
}

/// An operating point at target 90%: with prediction (learned headroom, or the forecast
/// carrying the headroom at `carried` percent) or without.
fn point_at_90(prediction: bool, carried: Option<f64>) -> OperatingPoint {
    OperatingPoint {
        knobs: Knobs {
            utilization: Some(90),
            risk_budget_percent: None,
            prediction,
            forecast_budget_percent: carried,
        },
        chosen_at: NOW - 3600,
        replayed_seconds: 3 * 86_400,
        under_minutes: 10.0,
        replica_hours: 90.0,
        reactive_under_minutes: 10.0,
        reactive_replica_hours: 100.0,
        meets: true,
        written_utilization: Some(60),
        blocks: Vec::new(),
        carried_minutes: 0.0,
    }
}

/// The replicas decided for `obs` after a recommendation of 10 a minute ago, inside the
/// 300 s scale-down window.
fn after_ten(spec: &EffectiveHorizontalPodAutoscalerSpec, obs: &Observation) -> i32 {
    let autoscaler =
        Autoscaler::new("shop", "web", spec, &ControllerConfig::default()).expect("valid spec");
    let history = ScalingHistory {
        recommendations: vec![Recommendation {
            replicas: 10,
            timestamp: now() - SignedDuration::from_secs(60),
        }],
        ..Default::default()
    };
    decide(&autoscaler, obs, Default::default(), history, now()).desired_replicas
}

#[test]
fn at_an_operating_point_learned_headroom_guards_the_scale_down_in_place_of_its_window() {
    // 10 pods carrying 3 cores; this hour's rise over the lead stretch is half a core. At
    // 90% the metric needs 4 pods, the headroom 3 + 0.5 cores at capacity: 4 pods.
    let mut obs = observation(10, 300, 60);
    metric(&mut obs).headroom = HeadroomInput::Ready(headroom(0.5));
    obs.operating_point = Some(point_at_90(true, None));
    assert_eq!(
        after_ten(&windowed_spec(true), &obs),
        4,
        "the headroom holds what a re-rise over the lead stretch needs: no window"
    );
    // ... and the decision says so where the user reads it.
    let guarded = decide(
        &Autoscaler::new(
            "shop",
            "web",
            &windowed_spec(true),
            &ControllerConfig::default(),
        )
        .expect("valid spec"),
        &obs,
        Default::default(),
        ScalingHistory::default(),
        now(),
    );
    let (_, _, message) = ready(&guarded);
    assert!(
        message.contains("holding the scale-down in place of its window"),
        "{message}"
    );

    // The same point without prediction keeps the window: the 10 of a minute ago.
    obs.operating_point = Some(point_at_90(false, None));
    assert_eq!(after_ten(&windowed_spec(true), &obs), 10);

    // So does a point where the forecast carries the headroom (learned headroom proposes
    // nothing beside it): it sizes for the rise it foresees, not for the ones it misses.
    obs.operating_point = Some(point_at_90(true, Some(2.0)));
    metric(&mut obs).forecast = ForecastInput::Ready(forecast(3.0, 0, 3.0));
    metric(&mut obs).forecast_margin =
        Some(foresight_core::prediction::conformal::ForecastMargin {
            margins: vec![0.5; 168],
            quantile: 0.98,
            samples: 200,
        });
    let autoscaler = Autoscaler::new(
        "shop",
        "web",
        &windowed_spec(true),
        &ControllerConfig::default(),
    )
    .expect("valid spec");
    let carried = decide(
        &autoscaler,
        &obs,
        Default::default(),
        ScalingHistory::default(),
        now(),
    );
    assert_eq!(prediction_proposal(&carried), Some(4));
    assert_eq!(headroom_proposal(&carried), None);
    assert_eq!(after_ten(&windowed_spec(true), &obs), 10);
    metric(&mut obs).forecast = ForecastInput::Off;
    metric(&mut obs).forecast_margin = None;

    // Learned headroom that has not learned yet guards nothing.
    obs.operating_point = Some(point_at_90(true, None));
    metric(&mut obs).headroom = HeadroomInput::Off;
    assert_eq!(after_ten(&windowed_spec(true), &obs), 10);

    // Without an objective the spec runs as written, window and all (the point is ignored).
    metric(&mut obs).headroom = HeadroomInput::Ready(headroom(0.5));
    assert_eq!(after_ten(&windowed_spec(false), &obs), 10);
}

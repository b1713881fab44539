//! End-to-end behaviour of the simulator: a policy reacting to load through the model, what
//! the start-up delay costs, scale-down, and byte-identical output for the same inputs.

use foresight_sim::load::{LoadPoint, LoadTrace};
use foresight_sim::policy::{policies_from_manifest, Policy};
use foresight_sim::score::Scores;
use foresight_sim::simulation::{compile_policies, scaled_load};
use foresight_sim::summary::to_json;
use foresight_sim::synthetic::{generate, SyntheticConfig};
use foresight_sim::{simulate, LoadScale, ModelConfig, Simulation};

const POLICY: &str = r#"
apiVersion: autoscaling.foresight.dev/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 50
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
"#;

fn policy(text: &str) -> Vec<Policy> {
    policies_from_manifest(text, "web").unwrap()
}

/// `minutes` of load, one point per minute, from 2024-01-01 00:00 UTC.
fn trace(load: impl Fn(i64) -> f64, minutes: i64) -> LoadTrace {
    let start = 1_704_067_200;
    LoadTrace::new(
        (0..minutes)
            .map(|m| LoadPoint {
                ts: start + m * 60,
                value: load(m),
            })
            .collect(),
    )
    .unwrap()
}

fn run(policies: &[Policy], load: &LoadTrace, model: &ModelConfig) -> Simulation {
    let compiled = compile_policies(policies).unwrap();
    simulate(load, &compiled, model, &|_| {}).unwrap()
}

/// The report of `sim`, for load read from "step.csv" in cores, in UTC.
fn report(sim: &Simulation, model: &ModelConfig) -> String {
    foresight_sim::report::render(
        sim,
        &foresight_sim::report::ReportContext {
            source: "step.csv",
            model,
            unit: "cores",
            time_zone: jiff::tz::TimeZone::UTC,
            frontier: None,
            closed_gaps: &[],
        },
    )
}

/// Two cores for half an hour, then eight.
fn step_load() -> LoadTrace {
    trace(|m| if m < 30 { 2.0 } else { 8.0 }, 60)
}

#[test]
fn a_load_step_is_under_provisioned_until_new_pods_are_ready() {
    let sim = run(&policy(POLICY), &step_load(), &ModelConfig::default());
    let scores = &sim.policies[0].scores;
    // Starts with the 4 pods that 2 cores need at 50 %, ends with the 16 that 8 cores need.
    let timeline = sim.policies[0].timeline.as_ref().unwrap();
    assert_eq!(timeline.replicas.first(), Some(&4));
    assert_eq!(timeline.replicas.last(), Some(&16));
    assert_eq!(scores.max_replicas, 16);
    // Short of capacity from the step until the new pods are ready: the next scrape and
    // decision (up to 15 s each) plus the 60 s start-up.
    assert!(
        (1.0..=1.5).contains(&scores.under_provisioned_minutes),
        "{scores:?}"
    );
    assert_eq!(timeline.under_provisioned.len(), 1);
    let (from, _) = timeline.under_provisioned[0];
    assert_eq!(from, 1_704_067_200 + 30 * 60);
    assert_eq!(scores.pods_started, 12);
}

#[test]
fn a_longer_startup_delay_costs_as_much_more_under_provisioning() {
    let fast = run(&policy(POLICY), &step_load(), &ModelConfig::default());
    let slow = run(
        &policy(POLICY),
        &step_load(),
        &ModelConfig {
            startup_delay_seconds: 180,
            ..Default::default()
        },
    );
    let extra = slow.policies[0].scores.under_provisioned_minutes
        - fast.policies[0].scores.under_provisioned_minutes;
    assert!((extra - 2.0).abs() < 0.01, "{extra}");
}

#[test]
fn falling_load_removes_pods_after_the_stabilization_window() {
    let load = trace(|m| if m < 30 { 8.0 } else { 2.0 }, 60);
    let sim = run(&policy(POLICY), &load, &ModelConfig::default());
    let t = sim.policies[0].timeline.as_ref().unwrap();
    assert_eq!(t.replicas.first(), Some(&16));
    assert_eq!(t.replicas.last(), Some(&4));
    let first_down = t
        .decisions
        .iter()
        .find(|d| d.desired_replicas < d.current_replicas)
        .unwrap();
    // Kubernetes' default scale-down stabilization is 5 minutes.
    let after = first_down.time.as_second() - (1_704_067_200 + 30 * 60);
    assert!((300..=330).contains(&after), "{after}");
    assert_eq!(sim.policies[0].scores.under_provisioned_minutes, 0.0);
    assert!(
        first_down.summary.contains("16 -> "),
        "{}",
        first_down.summary
    );
}

#[test]
fn peak_replicas_scales_the_trace_to_the_targets_capacity() {
    let compiled = compile_policies(&policy(POLICY)).unwrap();
    let raw = trace(|m| m as f64, 10);
    let load = scaled_load(
        &raw,
        LoadScale::PeakReplicas(10),
        &compiled,
        &ModelConfig::default(),
    );
    // Ten pods at 50 % of a one-core request carry five cores.
    assert_eq!(load.peak(), 5.0);
}

#[test]
fn the_same_inputs_and_seed_give_byte_identical_json() {
    let load = LoadTrace::new(generate(&SyntheticConfig {
        days: 2,
        seed: 7,
        ..Default::default()
    }))
    .unwrap();
    let policies = policy(POLICY);
    let compiled = compile_policies(&policies).unwrap();
    let load = scaled_load(
        &load,
        LoadScale::PeakReplicas(30),
        &compiled,
        &ModelConfig::default(),
    );
    let model = |seed| ModelConfig {
        startup_jitter_seconds: 45,
        seed,
        ..Default::default()
    };
    let json = |seed| {
        to_json(
            &run(&policies, &load, &model(seed)),
            "synthetic",
            &model(seed),
            None,
        )
    };
    let first = json(3);
    assert_eq!(first, json(3));
    assert!(first.contains("\"under_provisioned_minutes\""));
    // The jitter is drawn from the seed: another seed starts pods at other times.
    assert_ne!(first, json(4));
}

#[test]
fn several_policies_run_side_by_side_in_the_order_given() {
    let mut policies = policy(POLICY);
    let mut slow = policies[0].clone();
    slow.name = "slow".to_owned();
    slow.spec.metrics[0]
        .resource
        .as_mut()
        .unwrap()
        .target
        .average_utilization = Some(90);
    policies.push(slow);
    let sim = run(&policies, &step_load(), &ModelConfig::default());
    let names: Vec<&str> = sim
        .policies
        .iter()
        .map(|p| p.scores.name.as_str())
        .collect();
    assert_eq!(names, ["web", "slow"]);
    // A 90 % target leaves less headroom: more time short of capacity, fewer replica-hours.
    let (a, b) = (&sim.policies[0].scores, &sim.policies[1].scores);
    assert!(
        b.under_provisioned_minutes > a.under_provisioned_minutes,
        "{a:?} {b:?}"
    );
    assert!(b.replica_hours < a.replica_hours, "{a:?} {b:?}");
}

#[test]
fn custom_and_external_metrics_read_the_same_load() {
    // Per pod 0.5 of the load, or 0.5 per pod of the total: both mean 16 pods for 8.
    let pods = POLICY.replace(
        "    - type: Resource\n      resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}",
        "    - type: Pods\n      pods: {metric: {name: requests_per_second}, target: {type: AverageValue, averageValue: 500m}}",
    );
    let external = POLICY.replace(
        "    - type: Resource\n      resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}",
        "    - type: External\n      external: {metric: {name: queue_rate}, target: {type: AverageValue, averageValue: 500m}}",
    );
    for text in [pods, external] {
        let sim = run(&policy(&text), &step_load(), &ModelConfig::default());
        let t = sim.policies[0].timeline.as_ref().unwrap();
        assert_eq!(t.replicas.first(), Some(&4), "{text}");
        assert_eq!(t.replicas.last(), Some(&16), "{text}");
    }
}

#[test]
fn a_fleet_gives_the_same_scores_on_any_number_of_threads() {
    use foresight_sim::fleet::{run_fleet, Workload};
    let autoscaler = compile_policies(&policy(POLICY)).unwrap()[0]
        .autoscaler
        .clone();
    let fleet: Vec<Workload> = (0..6)
        .map(|i| Workload {
            name: format!("w{i}"),
            autoscaler: autoscaler.clone(),
            load: LoadTrace::new(generate(&SyntheticConfig {
                days: 1,
                seed: i,
                ..Default::default()
            }))
            .unwrap()
            .scaled_to_peak(5.0 + i as f64),
        })
        .collect();
    let model = ModelConfig {
        recording: foresight_sim::Recording::ScoresOnly,
        ..Default::default()
    };
    let one = run_fleet(&fleet, &model, Some(1));
    assert_eq!(one, run_fleet(&fleet, &model, Some(3)));
    let names: Vec<&str> = one.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["w0", "w1", "w2", "w3", "w4", "w5"]);
}

/// The bundled example's reactive variant and `variant` on `raw`, at a 60 s start-up.
/// `predictive` is the example without crons and without its objective: prediction as
/// written, not tuned daily (the tuner's own tests are in foresight-replay).
fn example_against_reactive(raw: &LoadTrace, variant: &str) -> (Scores, Scores) {
    let example = &policy(include_str!("../../../examples/simulate/policy.yaml"))[0];
    let other = match variant {
        "predictive" => {
            let mut as_written = example.without_crons(variant);
            as_written.spec.objective = None;
            as_written
        }
        _ => example.clone(),
    };
    let policies = [example.reactive("reactive"), other];
    let compiled = compile_policies(&policies).unwrap();
    let model = ModelConfig::default();
    assert_eq!(model.startup_delay_seconds, 60);
    let load = scaled_load(raw, LoadScale::PeakReplicas(20), &compiled, &model);
    let sim = simulate(&load, &compiled, &model, &|_| {}).unwrap();
    (
        sim.policies[0].scores.clone(),
        sim.policies[1].scores.clone(),
    )
}

#[test]
fn on_cranes_input0_prediction_leaves_fewer_minutes_under_provisioned() {
    let test = "simulation::on_cranes_input0_prediction_leaves_fewer_minutes_under_provisioned";
    let Some(dir) = foresight_fixtures::crane_traces_or_skip(test) else {
        return;
    };
    let Some(path) = foresight_fixtures::crane_file(&dir, "input0.csv") else {
        foresight_fixtures::skip(test, "the traces directory holds no Crane input0.csv");
        return;
    };
    let text = std::fs::read_to_string(path).unwrap();
    let samples = foresight_core::trace::parse_csv(&text).unwrap();
    let points = samples
        .iter()
        .map(|s| LoadPoint {
            ts: s.ts,
            value: s.value,
        })
        .collect();
    let (reactive, predictive) =
        example_against_reactive(&LoadTrace::new(points).unwrap(), "predictive");
    assert!(
        predictive.under_provisioned_minutes < reactive.under_provisioned_minutes,
        "reactive {reactive:?}\npredictive {predictive:?}"
    );
}

#[test]
fn on_the_bundled_workload_the_morning_cron_leaves_fewer_minutes_under_provisioned() {
    let raw = LoadTrace::new(generate(&SyntheticConfig::bundled())).unwrap();
    let (reactive, with_cron) = example_against_reactive(&raw, "predictive+cron");
    assert!(
        with_cron.under_provisioned_minutes < reactive.under_provisioned_minutes,
        "reactive {reactive:?}\npredictive+cron {with_cron:?}"
    );
}

#[test]
fn the_report_escapes_names_and_explains_every_rescale() {
    let mut policies = policy(POLICY);
    policies[0].name = "<b>web</b> & co".to_owned();
    let model = ModelConfig::default();
    let sim = run(&policies, &step_load(), &model);
    let html = report(&sim, &model);
    assert!(!html.contains("<b>web</b>"));
    assert!(html.contains("&lt;b&gt;web&lt;/b&gt; &amp; co"));
    for id in [
        "scores",
        "chart-capacity",
        "chart-close-up",
        "chart-replicas",
        "chart-policy-0",
        "chart-replicas-0",
        "decisions-0",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "{id}");
    }
    // Two rescales (4 -> 8 -> 16), each with a hover mark and a table row saying why.
    let rescales = sim.policies[0].timeline.as_ref().unwrap().decisions.len();
    assert_eq!(rescales, 2);
    assert_eq!(html.matches("<circle").count(), rescales);
    assert_eq!(html.matches("above target").count(), 2 * rescales);
}

#[test]
fn an_outage_holds_the_size_and_fallback_decides_after_its_threshold() {
    use foresight_sim::Outage;
    // Four cores, then twelve from minute 40: the rise falls inside the outage.
    let load = trace(|m| if m < 40 { 4.0 } else { 12.0 }, 90);
    let model = ModelConfig {
        outages: vec![Outage {
            start_seconds: 30 * 60,
            length_seconds: 30 * 60,
        }],
        ..ModelConfig::default()
    };
    let with_fallback = POLICY.replace(
        "  maxReplicas: 50\n",
        "  maxReplicas: 50\n  fallback: {failureThreshold: 3, replicas: 20}\n",
    );
    let sim = run(&policy(POLICY), &load, &model);
    let held = sim.policies[0].timeline.as_ref().unwrap();
    assert_eq!(
        sim.outages,
        vec![(1_704_067_200 + 1800, 1_704_067_200 + 3600)]
    );
    // Without a fallback the size is held through the outage (8 pods for 4 cores at 50%),
    // and the rise goes unserved until it ends.
    let minute = |t: &foresight_sim::timeline::Timeline, m: i64| {
        let bucket = (m * 60 / t.bucket_seconds) as usize;
        t.replicas[bucket]
    };
    assert_eq!(minute(held, 55), 8);
    assert!(sim.policies[0].scores.under_provisioned_minutes > 15.0);
    let sim = run(&policy(&with_fallback), &load, &model);
    let fell_back = sim.policies[0].timeline.as_ref().unwrap();
    assert_eq!(
        minute(fell_back, 55),
        20,
        "the fallback size after four failed syncs"
    );
    assert!(sim.policies[0].scores.under_provisioned_minutes < 5.0);
    assert_eq!(
        minute(fell_back, 85),
        24,
        "the metrics decide again after it"
    );
    let html = report(&sim, &model);
    assert!(
        html.contains(r#"<g class="outage">"#),
        "the outage is shaded"
    );
    assert!(
        html.contains("metric outage Mon 01 Jan 00:30 – Mon 01 Jan 01:00"),
        "and titled"
    );
}

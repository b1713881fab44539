//! `spec.objective` on a real control plane: the controller, running as its service account,
//! reads four days of the workload's CPU from a real Prometheus (Debian's package, backfilled
//! with promtool), replays them under the tuner's candidates, writes the operating point it
//! chose to `status.operatingPoint` and exports it on `/metrics`; a restarted controller keeps
//! deciding at that point until it has replayed again.

mod cluster;

use std::time::Duration;

use cluster::*;
use foresight_envtest::prometheus::{counter, PrometheusServer};
use foresight_envtest::{workload, Load, Options};
use serde_json::Value;

const NS: &str = "objective";
const WAIT: Duration = Duration::from_secs(240);

/// Four days of the workload's CPU at one-minute samples, ending now: 0.6 cores, 1.8 for an
/// hour every day from 10:00 UTC, under names the default history query of a Deployment `web`
/// selects.
fn history(now: i64) -> String {
    let mut om = String::new();
    let pods = [
        (
            r#"namespace="objective",pod="web-6b7c8d9f5d-abcde",container="app""#,
            0.5,
        ),
        (
            r#"namespace="objective",pod="web-6b7c8d9f5d-fghij",container="app""#,
            0.5,
        ),
    ];
    counter(
        &mut om,
        "container_cpu_usage_seconds",
        &pods,
        (now, 4, 60),
        |t| {
            if (36_000..39_600).contains(&t.rem_euclid(86_400)) {
                1.8
            } else {
                0.6
            }
        },
    );
    om.push_str("# EOF\n");
    om
}

const EHPA: &str = "metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 10
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
  prediction:
    predictionAlgorithm:
      algorithmType: dsp
      dsp: {sampleInterval: 60s, historyLength: 3d}
  objective: {shortfall: AsReactive, maxUtilization: 80}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_objective_chooses_its_operating_point_from_prometheus_on_a_real_cluster() {
    let Some(cluster) = start(
        "an_objective_chooses_its_operating_point_from_prometheus_on_a_real_cluster",
        Options::default(),
    )
    .await
    else {
        return;
    };
    let now = jiff::Timestamp::now().as_second();
    let prometheus = PrometheusServer::start(&history(now - now.rem_euclid(60)));
    let url = format!("--prometheus-url={}", prometheus.url());
    let flags = [
        "--sync-period=2s",
        "--metrics-max-age=1s",
        "--leader-elect=false",
        "--model-update-interval=1m",
        "--status-refresh-interval=2s",
        url.as_str(),
    ];
    let client = cluster.client().await.unwrap();
    let mut controller = install_and_run(&cluster, "objective-controller", &flags)
        .await
        .expect("the controller runs");
    workload::namespace(&client, NS).await.unwrap();
    workload::deployment(&client, NS, "web", 2, 500)
        .await
        .unwrap();
    cluster.metrics().set_cpu(NS, "web", Load::Total(600.0));
    apply_ehpa(&client, NS, EHPA).await.unwrap();

    // The first refresh reads the history; the next, once a reconcile has described the
    // workload, replays it and chooses.
    let status = with_log(
        foresight_envtest::eventually("status.operatingPoint", WAIT, || async {
            let s = ehpa_status(&client, NS, "web").await?;
            Ok(s.get("operatingPoint")
                .is_some_and(|p| !p.is_null())
                .then_some(s))
        })
        .await,
        &controller,
    );
    let point = &status["operatingPoint"];
    let replayed = point["replayedSeconds"].as_i64().unwrap_or_default();
    assert!(replayed >= 86_400, "{point}");
    let target = point["targetUtilization"].as_i64().expect("a target");
    assert!((50..=80).contains(&target), "{point}");
    let description = point["description"].as_str().unwrap_or_default();
    assert!(
        description.contains("chosen by replay of") && description.contains("reactive at 50%"),
        "{point}"
    );
    assert!(point["reactiveReplicaHours"].as_i64().is_some(), "{point}");
    let chosen_at = point["chosenAt"].clone();
    let scraped = controller.scrape().await.unwrap();
    let meets = format!(
        "foresight_autoscaler_operating_point_meets_objective{{namespace=\"{NS}\",name=\"web\"}} {}",
        if point["meetsObjective"] == Value::Bool(true) {
            "1"
        } else {
            "0"
        }
    );
    assert!(scraped.contains(&meets), "{meets} not in:\n{scraped}");
    assert!(
        scraped.contains(&format!(
            "foresight_autoscaler_operating_point_target_utilization_percent{{namespace=\"{NS}\",name=\"web\"}} {target}"
        )),
        "{scraped}"
    );

    // A restart: the new controller decides at the recorded point (status keeps it, the
    // same choice) until its own replay, a refresh later.
    controller.kill();
    let restarted_at = jiff::Timestamp::now();
    let kubeconfig = service_account_kubeconfig(&cluster).await.unwrap();
    let controller = run_controller(&cluster, &kubeconfig, "objective-restarted", &flags)
        .await
        .expect("the controller runs again");
    let after = with_log(
        foresight_envtest::eventually("a decision after the restart", WAIT, || async {
            let s = ehpa_status(&client, NS, "web").await?;
            let decided = s["lastDecision"]["time"]
                .as_str()
                .and_then(|t| t.parse::<jiff::Timestamp>().ok());
            Ok(decided.is_some_and(|t| t > restarted_at).then_some(s))
        })
        .await,
        &controller,
    );
    let kept = &after["operatingPoint"];
    assert!(!kept.is_null(), "the restart dropped the point: {after}");
    if kept["chosenAt"] == chosen_at {
        assert_eq!(kept["targetUtilization"].as_i64(), Some(target), "{kept}");
    } else {
        // Only if the new controller had already replayed (a refresh, a minute, later)
        // before this decision was seen: a fresh choice, never none.
        assert!(
            kept["replayedSeconds"].as_i64().unwrap_or_default() >= 86_400,
            "{kept}"
        );
    }
}

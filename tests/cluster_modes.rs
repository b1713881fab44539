//! Foresight's own behaviour on a real control plane, with the controller running only with
//! `deploy/rbac.yaml`'s rights: Preview, Preview → Auto switched live, `specificReplicas`, a
//! cron-only autoscaler and a cron with metrics, one `SuccessfulRescale` event per rescale,
//! a controller restart in the middle of a stabilization window, and a spec the API server
//! accepts but the controller cannot compile (a time zone CEL cannot check).

mod cluster;

use std::time::Duration;

use cluster::*;
use foresight_envtest::{workload, Load, Options};
use serde_json::json;

const NS: &str = "modes";
const SYNC: &str = "--sync-period=2s";
const WAIT: Duration = Duration::from_secs(30);

fn cpu_ehpa(name: &str, extra: &str) -> String {
    format!(
        "metadata: {{name: {name}}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: {name}}}
  minReplicas: 1
  maxReplicas: 10
  metrics:
  - type: Resource
    resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 50}}}}
{extra}"
    )
}

/// A cron schedule window that is open now and for the next half hour (UTC, daily).
fn open_window() -> (String, String) {
    let now = jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC);
    let start = &now - jiff::SignedDuration::from_mins(2);
    let end = &now + jiff::SignedDuration::from_mins(30);
    (
        format!("{} {} * * *", start.minute(), start.hour()),
        format!("{} {} * * *", end.minute(), end.hour()),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preview_cron_events_restart_and_invalid_specs_on_a_real_cluster() {
    let Some(cluster) = start(
        "preview_cron_events_restart_and_invalid_specs_on_a_real_cluster",
        Options::default(),
    )
    .await
    else {
        return;
    };
    let client = cluster.client().await.unwrap();
    let mut controller = install_and_run(
        &cluster,
        "modes-controller",
        &[SYNC, "--metrics-max-age=1s", "--leader-elect=false"],
    )
    .await
    .expect("the controller runs");
    workload::namespace(&client, NS).await.unwrap();
    let metrics = cluster.metrics();

    // Preview: decides 4, records it, leaves the workload at 1.
    workload::deployment(&client, NS, "web", 1, 100)
        .await
        .unwrap();
    metrics.set_cpu(NS, "web", Load::Total(200.0));
    apply_ehpa(&client, NS, &cpu_ehpa("web", "  scaleStrategy: Preview"))
        .await
        .unwrap();
    let status = with_log(
        foresight_envtest::eventually("Preview records 4", WAIT, || async {
            let s = ehpa_status(&client, NS, "web").await?;
            Ok((s["desiredReplicas"] == 4).then_some(s))
        })
        .await,
        &controller,
    );
    assert_eq!(workload::replicas(&client, NS, "web").await.unwrap(), 1);
    let (_, _, message) = condition(&status, "AbleToScale").expect("AbleToScale");
    assert!(
        !message.contains("matches current size"),
        "Preview's AbleToScale says nothing differs while desired 4 != current 1: {message}"
    );

    // specificReplicas: Preview holds the workload at 3.
    patch_spec(&client, NS, "web", json!({"specificReplicas": 3}))
        .await
        .unwrap();
    with_log(
        wait_replicas(&client, NS, "web", 3, WAIT).await,
        &controller,
    );

    // Preview → Auto, live: the workload follows the decision.
    patch_spec(
        &client,
        NS,
        "web",
        json!({"scaleStrategy": "Auto", "specificReplicas": null}),
    )
    .await
    .unwrap();
    with_log(
        wait_replicas(&client, NS, "web", 4, WAIT).await,
        &controller,
    );

    // Cron only: the window is open, so its target holds.
    let (start_at, end_at) = open_window();
    workload::deployment(&client, NS, "batch", 1, 100)
        .await
        .unwrap();
    apply_ehpa(
        &client,
        NS,
        &format!(
            "metadata: {{name: batch}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: batch}}
  minReplicas: 1
  maxReplicas: 10
  crons: [{{name: now, timezone: UTC, start: '{start_at}', end: '{end_at}', targetReplicas: 4}}]"
        ),
    )
    .await
    .unwrap();
    with_log(
        wait_replicas(&client, NS, "batch", 4, WAIT).await,
        &controller,
    );

    // A cron with metrics: the larger of the two wins (cron 5 over the metric's 2).
    workload::deployment(&client, NS, "api", 1, 100)
        .await
        .unwrap();
    metrics.set_cpu(NS, "api", Load::Total(100.0));
    apply_ehpa(
        &client,
        NS,
        &cpu_ehpa(
            "api",
            &format!(
                "  crons: [{{name: now, timezone: UTC, start: '{start_at}', end: '{end_at}', targetReplicas: 5}}]"
            ),
        ),
    )
    .await
    .unwrap();
    with_log(
        wait_replicas(&client, NS, "api", 5, WAIT).await,
        &controller,
    );
    let s = ehpa_status(&client, NS, "api").await.unwrap();
    assert_eq!(
        condition(&s, "CronActive").map(|c| c.0),
        Some("True".to_owned()),
        "{s}"
    );

    // Events: one SuccessfulRescale per rescale of `web` (3, then 4), each with its size.
    let notes = with_log(
        foresight_envtest::eventually("two rescale events", WAIT, || async {
            let notes = event_notes(&client, NS, "web", "SuccessfulRescale").await?;
            Ok((notes.len() >= 2).then_some(notes))
        })
        .await,
        &controller,
    );
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(notes[0].starts_with("New size: 3;"), "{notes:?}");
    assert!(notes[1].starts_with("New size: 4;"), "{notes:?}");

    // A restart in the middle of a scale-down stabilization window keeps the window: the
    // load falls, the controller is killed and started again, and 4 holds until the window
    // (60 s from the last high recommendation) has passed.
    patch_spec(
        &client,
        NS,
        "web",
        json!({"behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}),
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    metrics.set_cpu(NS, "web", Load::Total(50.0));
    let fell = std::time::Instant::now();
    tokio::time::sleep(Duration::from_secs(6)).await;
    controller.kill();
    let kubeconfig = cluster.control_plane.dir().join("controller.kubeconfig");
    let controller = run_controller(
        &cluster,
        &kubeconfig,
        "modes-controller-restarted",
        &[SYNC, "--metrics-max-age=1s", "--leader-elect=false"],
    )
    .await
    .expect("the controller restarts");
    tokio::time::sleep(Duration::from_secs(20)).await;
    assert_eq!(
        workload::replicas(&client, NS, "web").await.unwrap(),
        4,
        "the restarted controller forgot the stabilization window:\n{}",
        controller.log()
    );
    with_log(
        foresight_envtest::eventually(
            "web scales down once the window has passed",
            Duration::from_secs(90),
            || async { Ok((workload::replicas(&client, NS, "web").await? < 4).then_some(())) },
        )
        .await,
        &controller,
    );
    let held = fell.elapsed();
    // A recommendation of 2 made while pods were going away holds its own 60 s window.
    let settled =
        foresight_envtest::eventually("web settles at 1", Duration::from_secs(90), || async {
            let n = workload::replicas(&client, NS, "web").await?;
            if n == 1 {
                return Ok(Some(()));
            }
            let s = ehpa_status(&client, NS, "web").await?;
            anyhow::bail!(
                "{n} replicas; lastDecision {}; history {}",
                s["lastDecision"],
                s["history"]
            )
        })
        .await;
    with_log(settled, &controller);
    assert!(
        held >= Duration::from_secs(55),
        "scaled down after {held:?}, inside the 60 s window"
    );
    eprintln!("modes: after a restart the 60 s window held 4 replicas for {held:?}");

    // What CEL cannot check: the API server accepts an unknown time zone; the controller
    // says Ready=False InvalidSpec and emits a Warning event.
    workload::deployment(&client, NS, "bad", 1, 100)
        .await
        .unwrap();
    apply_ehpa(
        &client,
        NS,
        "metadata: {name: bad}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: bad}
  minReplicas: 1
  maxReplicas: 10
  crons: [{name: mars, timezone: Mars/Olympus_Mons, start: '0 8 * * *', end: '0 9 * * *', targetReplicas: 2}]",
    )
    .await
    .expect("the API server accepts what CEL cannot check");
    let s = with_log(
        foresight_envtest::eventually("Ready=False InvalidSpec", WAIT, || async {
            let s = ehpa_status(&client, NS, "bad").await?;
            Ok(condition(&s, "Ready")
                .filter(|(st, r, _)| st == "False" && r == "InvalidSpec")
                .map(|c| c.2))
        })
        .await,
        &controller,
    );
    assert!(s.contains("Mars/Olympus_Mons"), "{s}");
    let warnings = event_notes(&client, NS, "bad", "InvalidSpec")
        .await
        .unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");

    live_explain(&cluster);
    kubectl_get(&cluster);
    metrics_per_autoscaler(&client, &controller).await;

    assert!(
        !controller.log().contains("Forbidden"),
        "the controller hit a Forbidden with deploy/rbac.yaml's rights:\n{}",
        controller.log()
    );
}

/// Runs `program args...` with the administrator's kubeconfig; its stdout, or a panic with
/// its stderr.
fn run_with_kubeconfig(
    cluster: &foresight_envtest::Cluster,
    program: &std::path::Path,
    args: &[&str],
    path_dir: Option<&std::path::Path>,
) -> String {
    let mut command = std::process::Command::new(program);
    command
        .args(args)
        .env("KUBECONFIG", cluster.control_plane.admin_kubeconfig());
    if let Some(dir) = path_dir {
        let path = std::env::var("PATH").unwrap_or_default();
        command.env("PATH", format!("{}:{path}", dir.display()));
    }
    let out = command.output().expect("the command runs");
    assert!(
        out.status.success(),
        "{} {args:?} failed:\n{}",
        program.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// `/metrics` carries each autoscaler's series, and loses them when it is deleted.
async fn metrics_per_autoscaler(
    client: &kube::Client,
    controller: &foresight_envtest::controller::ForesightController,
) {
    let text = with_log(controller.scrape().await, controller);
    let has = |needle: &str| text.lines().any(|l| l.starts_with(needle));
    assert!(has("foresight_build_info{version=\""), "{text}");
    assert!(has("foresight_leader 1"), "{text}");
    assert!(has("process_resident_memory_bytes "), "{text}");
    let series = |family: &str, name: &str, extra: &str| {
        format!("foresight_autoscaler_{family}{{namespace=\"{NS}\",name=\"{name}\"{extra}}}")
    };
    for name in ["web", "api", "batch"] {
        for family in [
            "current_replicas",
            "desired_replicas",
            "min_replicas",
            "max_replicas",
        ] {
            assert!(
                has(&series(family, name, "")),
                "no {family} of {name}:\n{text}"
            );
        }
        assert!(has(&format!("{} 1", series("ready", name, ""))), "{text}");
    }
    for name in ["web", "api"] {
        let cpu = ",metric=\"resource.cpu\"";
        assert!(has(&series("metric_value", name, cpu)), "{text}");
        assert!(
            has(&format!("{} 50", series("metric_target", name, cpu))),
            "{text}"
        );
    }
    assert!(
        has(&format!("{} 1", series("cron_active", "batch", ""))),
        "{text}"
    );
    assert!(
        has(&format!(
            "{} 4",
            series("proposed_replicas", "batch", ",source=\"cron\"")
        )),
        "{text}"
    );
    assert!(has(&format!("{} 0", series("ready", "bad", ""))), "{text}");
    assert!(!has(&series("desired_replicas", "bad", "")), "{text}");

    ehpas(client, NS)
        .delete("batch", &Default::default())
        .await
        .expect("delete batch");
    with_log(
        foresight_envtest::eventually("batch's series removed", WAIT, || async {
            let text = controller.scrape().await?;
            let left: Vec<&str> = text
                .lines()
                .filter(|l| l.contains("name=\"batch\""))
                .collect();
            Ok(left.is_empty().then_some(()))
        })
        .await,
        controller,
    );
}

/// `kubectl get fhpa` shows the columns of `kubectl get hpa`, TARGETS filled from status.
fn kubectl_get(cluster: &foresight_envtest::Cluster) {
    let kubectl = std::path::Path::new("kubectl");
    let table = run_with_kubeconfig(cluster, kubectl, &["get", "fhpa", "-n", NS], None);
    let header: Vec<&str> = table
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        [
            "NAME",
            "REFERENCE",
            "TARGETS",
            "MIN",
            "MAX",
            "CURRENT",
            "DESIRED",
            "LIMITED",
            "STRATEGY",
            "READY",
            "PAUSED",
            "AGE"
        ],
        "{table}"
    );
    let web = table
        .lines()
        .find(|l| l.starts_with("web "))
        .unwrap_or_else(|| panic!("no row for web:\n{table}"));
    let cells: Vec<&str> = web.split_whitespace().collect();
    // `cpu: 80%/50%`: the column splits at the space after the colon.
    assert_eq!(cells[2], "cpu:", "{table}");
    let (current, target) = cells[3].split_once('/').expect("current/target");
    assert!(
        current.ends_with('%') && current.trim_end_matches('%').parse::<u32>().is_ok(),
        "{table}"
    );
    assert_eq!(target, "50%", "{table}");
    // The status field behind the column is the same text.
    let targets = run_with_kubeconfig(
        cluster,
        kubectl,
        &[
            "get",
            "fhpa",
            "web",
            "-n",
            NS,
            "-o",
            "jsonpath={.status.targets}",
        ],
        None,
    );
    assert_eq!(targets, format!("cpu: {current}/50%"));
}

/// `foresight explain -n NS NAME`, `foresight explain -A`, and the same binary as a kubectl
/// plugin, against the live objects.
fn live_explain(cluster: &foresight_envtest::Cluster) {
    let bin = std::path::Path::new(BIN);
    let one = run_with_kubeconfig(cluster, bin, &["explain", "-n", NS, "web"], None);
    assert!(one.starts_with("modes/web -> Deployment web"), "{one}");
    for part in [
        "cpu utilization",
        "CONDITION",
        "AbleToScale",
        "SuccessfulRescale",
        "New size: 4",
    ] {
        assert!(one.contains(part), "explain lacks {part:?}:\n{one}");
    }
    let json = run_with_kubeconfig(cluster, bin, &["explain", "-n", NS, "web", "--json"], None);
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(v["decision"]["strategy"], "Auto", "{v}");

    let all = run_with_kubeconfig(cluster, bin, &["explain", "-A"], None);
    let header = all.lines().next().unwrap_or_default();
    assert!(
        header.starts_with("NAMESPACE") && header.contains("LAST DECISION"),
        "{all}"
    );
    for name in ["web", "batch", "api", "bad"] {
        assert!(
            all.lines()
                .any(|l| l.starts_with(NS) && l.split_whitespace().nth(1) == Some(name)),
            "explain -A lacks {name}:\n{all}"
        );
    }
    assert!(all.contains("False (InvalidSpec)"), "{all}");

    // kubectl finds `kubectl-foresight` on PATH and passes the arguments through.
    let plugins = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(bin, plugins.path().join("kubectl-foresight")).unwrap();
    let via_kubectl = run_with_kubeconfig(
        cluster,
        std::path::Path::new("kubectl"),
        &["foresight", "explain", "web", "-n", NS],
        Some(plugins.path()),
    );
    assert!(
        via_kubectl.starts_with("modes/web -> Deployment web"),
        "{via_kubectl}"
    );
}

//! `foresight controller`'s Prometheus flags through the real binary: they are checked
//! before the controller looks for a cluster, and the one-per-line environment variables a
//! container spec sets are read like repeated flags.

use std::process::{Command, Output};

/// Runs `foresight controller` with `args` and `env`, with a kubeconfig that does not exist
/// so that nothing can reach a cluster.
fn controller(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_foresight"));
    command
        .arg("controller")
        .arg("--kubeconfig=/nonexistent/kubeconfig")
        .arg("--log-format=human")
        .args(args);
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().expect("the foresight binary runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_bad_history_query_stops_the_controller_before_it_looks_for_a_cluster() {
    let out = controller(
        &[
            "--prometheus-url=http://127.0.0.1:9",
            "--history-query=cpu=sum(rate(x[5m]))",
        ],
        &[],
    );
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("error: --history-query: \"cpu\" is not a metric identifier"),
        "{err}"
    );
    assert!(!err.contains("kubeconfig"), "{err}");
}

#[test]
fn history_queries_come_one_per_line_from_the_environment() {
    // A YAML block scalar ends in a newline: the empty last line is not a query.
    let twice = "resource.cpu=sum(a)\nresource.cpu=sum(b)\n";
    let out = controller(
        &[],
        &[
            ("FORESIGHT_PROMETHEUS_URL", "http://127.0.0.1:9"),
            ("FORESIGHT_HISTORY_QUERIES", twice),
        ],
    );
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("error: --history-query: resource.cpu is given twice"),
        "{err}"
    );

    // Two good ones are accepted: the controller goes on to look for its cluster.
    let good = "resource.cpu=sum(a{namespace=\"${namespace}\"})\nexternal.jobs=sum(jobs)\n";
    let out = controller(
        &["--model-update-interval=30m", "--prometheus-timeout=10s"],
        &[
            ("FORESIGHT_PROMETHEUS_URL", "http://127.0.0.1:9"),
            ("FORESIGHT_HISTORY_QUERIES", good),
        ],
    );
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("error: kubeconfig /nonexistent/kubeconfig: no such file"),
        "{err}"
    );
}

#[test]
fn prometheus_flags_are_listed_in_help() {
    let out = Command::new(env!("CARGO_BIN_EXE_foresight"))
        .args(["controller", "--help"])
        .output()
        .expect("the foresight binary runs");
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--prometheus-url <URL>",
        "--prometheus-bearer-token-file <FILE>",
        "--prometheus-ca-file <FILE>",
        "--prometheus-header <NAME=VALUE>",
        "--prometheus-timeout <DURATION>",
        "--model-update-interval <DURATION>",
        "--history-query <IDENTIFIER=PROMQL>",
        "FORESIGHT_HISTORY_QUERIES",
    ] {
        assert!(help.contains(flag), "{flag} missing from\n{help}");
    }
}

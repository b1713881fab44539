//! `simulate`'s progress bar: shown on a terminal for a run that takes more than a second
//! (checked under a pseudo-terminal made by util-linux's `script`), and never in a pipe or
//! with `--quiet`.

use std::io::Read;
use std::process::{Command, Stdio};

const POLICY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/simulate/policy.yaml");

/// `foresight simulate ARGS` under a pseudo-terminal; returns what the terminal showed, up
/// to the first progress bar when `until_progress` (the run is then stopped) or to the end.
fn on_a_terminal(args: &str, until_progress: bool) -> String {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let command = format!(
        "{} simulate --spec {POLICY} --out {} {args}",
        env!("CARGO_BIN_EXE_foresight"),
        dir.path().display()
    );
    let mut child = Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("util-linux `script` runs (Debian's bsdutils)");
    let mut out = child.stdout.take().expect("stdout is piped");
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match out.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
        if until_progress && String::from_utf8_lossy(&seen).contains("% (") {
            break;
        }
    }
    // Closing the terminal hangs up the simulation with it.
    let _ = child.kill();
    let _ = child.wait();
    String::from_utf8_lossy(&seen).into_owned()
}

#[test]
fn a_year_long_run_shows_progress_on_a_terminal() {
    let shown = on_a_terminal("--synthetic --days 366 --no-frontier", true);
    assert!(
        shown.contains("simulating") && shown.contains("% ("),
        "no progress bar on the terminal: {shown:?}"
    );
}

#[test]
fn quiet_runs_and_pipes_show_none() {
    let quiet = on_a_terminal("--synthetic --days 10 --no-frontier --quiet", false);
    assert!(
        quiet.contains("report:"),
        "the run did not finish: {quiet:?}"
    );
    assert!(
        !quiet.contains("simulating"),
        "--quiet showed progress: {quiet:?}"
    );

    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = Command::new(env!("CARGO_BIN_EXE_foresight"))
        .args([
            "simulate",
            "--spec",
            POLICY,
            "--synthetic",
            "--days",
            "10",
            "--no-frontier",
        ])
        .arg("--out")
        .arg(dir.path())
        .output()
        .expect("the foresight binary runs");
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("simulating"),
        "progress in a pipe: {stderr:?}"
    );
}

//! `simulate`'s progress bar: shown on a terminal for a run that takes more than a second
//! (checked under a pseudo-terminal made by util-linux's `script`), and never in a pipe or
//! with `--quiet`.

mod owned_process;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use owned_process::{stops_within, Owned};

const POLICY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/simulate/policy.yaml");

/// What a run on a terminal showed, and the simulation's process ID.
struct Shown {
    text: String,
    pid: Option<u32>,
}

/// `foresight simulate ARGS` under a pseudo-terminal; returns what the terminal showed, up
/// to the first progress bar when `until_progress` (the run is then stopped) or to the end.
///
/// `script` starts the simulation in a session of its own, out of reach of a kill of the
/// test's process group, and hanging up its terminal stops nothing under `nohup` (SIGHUP is
/// ignored there, and the shell ignores it here too so that every run is tested that way):
/// the simulation writes down its process ID, and the test kills it by that.
fn on_a_terminal(args: &str, until_progress: bool) -> Shown {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let pid_file = dir.path().join("pid");
    let command = format!(
        "trap '' HUP; echo $$ > {}; exec {} simulate --spec {POLICY} --out {} {args}",
        pid_file.display(),
        env!("CARGO_BIN_EXE_foresight"),
        dir.path().display()
    );
    let mut script = Owned::spawn(
        Command::new("script")
            .args(["-qfec", &command, "/dev/null"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    )
    .expect("util-linux `script` runs (Debian's bsdutils)");
    let mut out = script.stdout.take().expect("stdout is piped");
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let mut pid = None;
    loop {
        match out.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
        if pid.is_none() {
            pid = simulation_pid(&pid_file);
            pid.inspect(|p| script.also_end(*p));
        }
        if until_progress && String::from_utf8_lossy(&seen).contains("% (") {
            break;
        }
    }
    script.end();
    Shown {
        text: String::from_utf8_lossy(&seen).into_owned(),
        pid,
    }
}

/// The process ID the simulation's shell wrote before it became the simulation.
fn simulation_pid(file: &Path) -> Option<u32> {
    std::fs::read_to_string(file).ok()?.trim().parse().ok()
}

#[test]
fn a_year_long_run_shows_progress_on_a_terminal() {
    let shown = on_a_terminal("--synthetic --days 366 --no-frontier", true);
    assert!(
        shown.text.contains("simulating") && shown.text.contains("% ("),
        "no progress bar on the terminal: {:?}",
        shown.text
    );
    // The run was stopped at its first progress bar, long before its end: the test ended it,
    // though it ignores hang-ups as under `nohup`.
    let pid = shown.pid.expect("the simulation wrote its process ID");
    assert!(
        stops_within(pid, Duration::from_secs(10)),
        "the simulation (pid {pid}) still runs after the test let go of it"
    );
}

/// Four synthetic days: each run takes well over the second after which a bar would show
/// (the example's objective tunes on the third and fourth days), and no longer than that.
#[test]
fn quiet_runs_and_pipes_show_none() {
    let quiet = on_a_terminal("--synthetic --days 4 --no-frontier --quiet", false).text;
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
            "4",
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

//! One duration syntax and Go-style booleans for every subcommand, through the real binary:
//! each row is a command line, whether it must be accepted, and what the error must say.

use std::process::Command;

fn foresight(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_foresight"))
        .args(args)
        .output()
        .expect("the foresight binary runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Parsing only: `--help` after the flags stops before anything runs, and clap reports a
/// bad value first.
#[test]
fn every_subcommand_reads_durations_and_booleans_the_same_way() {
    let cases: &[(&[&str], Result<(), &str>)] = &[
        (&["simulate", "--startup-delay", "90", "--help"], Ok(())),
        (&["simulate", "--startup-delay", "1m30s", "--help"], Ok(())),
        (&["simulate", "--refit-interval", "3600", "--help"], Ok(())),
        (&["simulate", "--startup-tail", "2m", "--help"], Ok(())),
        (
            &["simulate", "--startup-delay", "1.5s", "--help"],
            Err("use whole seconds"),
        ),
        (
            &["simulate", "--startup-delay=-5s", "--help"],
            Err("cannot be negative"),
        ),
        (&["backtest", "--window", "1h", "--help"], Ok(())),
        (&["backtest", "--window", "3600", "--help"], Ok(())),
        (&["backtest", "--refit", "43200", "--help"], Ok(())),
        (
            &["backtest", "--window", "0", "--help"],
            Err("must be at least 1s"),
        ),
        (
            &["backtest", "--window", "soon", "--help"],
            Err("write seconds (90) or a duration (90s, 5m, 1h30m)"),
        ),
        (&["controller", "--sync-period", "30", "--help"], Ok(())),
        (&["controller", "--sync-period", "30s", "--help"], Ok(())),
        (&["controller", "--lease-duration", "1m", "--help"], Ok(())),
        (&["controller", "--leader-elect", "--help"], Ok(())),
        (&["controller", "--leader-elect=false", "--help"], Ok(())),
        (
            &["controller", "--leader-elect=maybe", "--help"],
            Err("invalid value 'maybe'"),
        ),
    ];
    for (args, expected) in cases {
        let (ok, stderr) = foresight(args);
        match expected {
            Ok(()) => assert!(ok, "{args:?} was refused: {stderr}"),
            Err(message) => {
                assert!(!ok, "{args:?} was accepted");
                assert!(stderr.contains(message), "{args:?}: {stderr}");
            }
        }
    }
}

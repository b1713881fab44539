//! `foresight backtest` end to end: the binary on eight days of a daily rhythm.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

/// Eight days at one-minute samples (11,520 points) of a load with a daily rhythm, a
/// morning ramp and a little deterministic noise, written to a temporary file.
fn daily_trace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("daily.csv");
    let mut csv = String::from("ts,value\n");
    for i in 0..8 * 1440_i64 {
        let hour = (i % 1440) as f64 / 60.0;
        let day = 20.0 + 30.0 / (1.0 + (-(hour - 8.0) * 3.0).exp()) * (1.0 - hour / 30.0);
        let noise = ((i * 7919) % 101) as f64 / 100.0 - 0.5;
        let _ = writeln!(csv, "{},{:.3}", 1_628_640_000 + i * 60, day + noise);
    }
    std::fs::write(&path, csv).unwrap_or_else(|e| panic!("{e}"));
    (dir, path)
}

fn backtest(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_foresight"))
        .arg("backtest")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running foresight: {e}"))
}

#[test]
fn json_report_on_a_daily_rhythm_finds_the_daily_period() {
    let (_dir, trace) = daily_trace();
    let out = backtest(&["--trace", trace.to_str().unwrap_or_default(), "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON: {e}"));
    assert_eq!(report["algorithm"], "dsp");
    assert_eq!(report["period_seconds"], 86_400);
    assert_eq!(report["samples"], 11_520);
    let mape = report["mape"].as_f64().unwrap_or(f64::NAN);
    assert!(mape > 0.0 && mape < 50.0, "mape {mape}");
    let under = report["under_prediction_ratio"]
        .as_f64()
        .unwrap_or(f64::NAN);
    assert!((0.0..=1.0).contains(&under), "under {under}");
    let forecasts = report["forecasts"].as_array().cloned().unwrap_or_default();
    // Refits every 12 h over 8 days; the first three lack two days of history.
    assert_eq!(forecasts.len(), 15);
    assert_eq!(forecasts[0]["ready"], false);
    assert_eq!(forecasts[0]["reason"], "history 12h < 2 periods (2d)");
    assert!(forecasts.iter().filter(|f| f["ready"] == true).count() >= 10);
    assert!(report["definitions"]["mape"]
        .as_str()
        .is_some_and(|d| d.contains("|forecast - actual| / |actual|")));
}

#[test]
fn table_report_names_every_metric() {
    let (_dir, trace) = daily_trace();
    let out = backtest(&[
        "--trace",
        trace.to_str().unwrap_or_default(),
        "--algorithm",
        "percentile",
        "--window",
        "600",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "predictor  percentile",
        "window 10m",
        "MAPE",
        "peak err",
        "peak under",
        "Metrics:",
        "all ",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
    }
}

#[test]
fn bad_input_fails_with_the_line_and_bad_settings_with_the_field() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "ts,value\n1,2\n2,NaN\n").unwrap_or_else(|e| panic!("{e}"));
    let out = backtest(&["--trace", bad.to_str().unwrap_or_default()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 3: value \"NaN\" is not finite"));

    let (_dir, trace) = daily_trace();
    let out = backtest(&[
        "--trace",
        trace.to_str().unwrap_or_default(),
        "--history",
        "1d",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("predictionAlgorithm.dsp.historyLength"));
}

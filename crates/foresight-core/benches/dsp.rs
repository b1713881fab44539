//! A full DSP forecast over Crane's input0.csv (8 days at 1-minute samples, 11,520 points):
//! pre-processing, period detection with 100 shuffled FFTs, estimator back-test, forecast.
//! The trace is read from `FORESIGHT_TRACES_DIR` or `../shared/traces/crane-dsp` (the
//! repository does not hold third-party data); without it the benchmark says so and measures
//! nothing.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use foresight_core::prediction::{
    predict, predict_with, DspConfig, Prediction, PredictorConfig, Workspace,
};
use foresight_core::trace::parse_csv;

fn dsp_forecast(c: &mut Criterion) {
    let input0 = match foresight_fixtures::crane_traces() {
        Ok(dir) => foresight_fixtures::crane_file(&dir, "input0.csv"),
        Err(why) => {
            eprintln!("dsp: not measured: {why}");
            return;
        }
    };
    let Some(input0) = input0 else {
        eprintln!("dsp: not measured: the traces directory has no Crane input0.csv");
        return;
    };
    let samples = match std::fs::read_to_string(&input0).map(|t| parse_csv(&t)) {
        Ok(Ok(samples)) => samples,
        Ok(Err(e)) => panic!("input0.csv: {e}"),
        Err(e) => panic!("input0.csv: {e}"),
    };
    let now = samples.last().map_or(0, |s| s.ts);
    let config = PredictorConfig::Dsp(DspConfig::default());
    assert!(
        matches!(predict(&config, &samples, now), Prediction::Ready(_)),
        "input0 must be ready"
    );
    // Everything from scratch, FFT planning included: what a single `predict` costs.
    c.bench_function("dsp forecast input0 (11520 samples)", |b| {
        b.iter(|| predict(black_box(&config), black_box(&samples), black_box(now)))
    });
    // With the FFT plans kept between calls, as the controller and the backtest do.
    let mut workspace = Workspace::default();
    c.bench_function("dsp forecast input0 (11520 samples), plans reused", |b| {
        b.iter(|| {
            predict_with(
                &mut workspace,
                black_box(&config),
                black_box(&samples),
                black_box(now),
            )
        })
    });
}

criterion_group!(benches, dsp_forecast);
criterion_main!(benches);

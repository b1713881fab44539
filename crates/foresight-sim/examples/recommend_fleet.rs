//! `recommend` on workloads FROM..TO of the benchmark fleet (`benches/common`), one after
//! the other on one thread, printing each workload's full recommendation: what the cost
//! figures in `docs/cli.md` are measured with (`/usr/bin/time` around it), and what a change
//! that should not move the rows is checked with (the output before and after, diffed).
//!
//! Usage: recommend_fleet FROM TO

use foresight_sim::recommend::recommend;

#[path = "../benches/common/mod.rs"]
mod common;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut bound = |name: &str| -> Result<usize, Box<dyn std::error::Error>> {
        Ok(args
            .next()
            .ok_or(format!("usage: recommend_fleet FROM TO ({name} missing)"))?
            .parse()?)
    };
    let (from, to) = (bound("FROM")?, bound("TO")?);
    let (autoscaler, model) = (common::predictive(), common::model());
    for i in from..to {
        let r = recommend(&autoscaler, &common::load(i), &model, &|_| {});
        println!("workload {i}: {r:?}");
    }
    Ok(())
}

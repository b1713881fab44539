//! Kind `grouping`: pod classification (`groupPods`).

use foresight_api::Quantity;
use foresight_core::pods::{group_pods, PodClass, SampleTiming};
use foresight_core::snapshot::{self, PodJson};
use jiff::{SignedDuration, Timestamp};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::common::{self, expect_eq};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Sample {
    pod: String,
    #[allow(dead_code)]
    value: Quantity,
    timestamp: Timestamp,
    window_seconds: Option<i64>,
}

pub fn check(input: &Value, expect: &Value) -> Result<(), String> {
    let cfg = common::config(input);
    let now = common::now(input)?;
    let pods_json: Vec<PodJson> = common::field(input, "pods")?;
    let pods = snapshot::pods(&pods_json, "pods").map_err(|e| e.to_string())?;
    let samples: Vec<Sample> = common::field(input, "podMetrics")?;
    let resource: String = common::field(input, "resourceName")?;
    let timings: Vec<Option<SampleTiming>> = pods
        .iter()
        .map(|p| {
            samples
                .iter()
                .rev()
                .find(|s| s.pod == p.name)
                .map(|s| SampleTiming {
                    timestamp: s.timestamp,
                    window: SignedDuration::from_secs(s.window_seconds.unwrap_or(0)),
                })
        })
        .collect();
    let g = group_pods(
        &pods,
        |i| timings[i],
        resource == "cpu",
        &cfg.readiness,
        now,
    );
    let names = |class: PodClass| {
        let mut v: Vec<&str> = pods
            .iter()
            .zip(&g.classes)
            .filter(|(_, c)| **c == class)
            .map(|(p, _)| p.name.as_str())
            .collect();
        v.sort();
        v.dedup();
        json!(v)
    };
    expect_eq(
        "readyPodCount",
        &expect["readyPodCount"],
        &json!(g.ready_count),
    )?;
    expect_eq(
        "unreadyPods",
        &expect["unreadyPods"],
        &names(PodClass::Unready),
    )?;
    expect_eq(
        "missingPods",
        &expect["missingPods"],
        &names(PodClass::Missing),
    )?;
    expect_eq(
        "ignoredPods",
        &expect["ignoredPods"],
        &names(PodClass::Ignored),
    )
}

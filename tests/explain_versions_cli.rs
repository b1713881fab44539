//! `foresight explain --snapshot … --kubernetes-version`: the same snapshot decided as the HPA
//! of Kubernetes 1.28 and of 1.37 differs exactly where docs/kubernetes-versions.md says, and
//! nowhere else; a release outside 1.28 … 1.37 is refused with the range in the message.

use std::process::Command;

use serde_json::Value;

const EDGE: &str = "examples/snapshots/tolerance-edge.yaml";
const AWAY_FROM_EDGE: &str = "examples/snapshots/cpu-scale-up.yaml";

/// `foresight explain --snapshot PATH --json [--kubernetes-version VERSION]`, parsed.
fn explain(path: &str, version: Option<&str>) -> Value {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_foresight"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["explain", "--snapshot", path, "--json"]);
    if let Some(v) = version {
        cmd.args(["--kubernetes-version", v]);
    }
    let out = cmd.output().expect("run foresight");
    assert!(
        out.status.success(),
        "explain {path} {version:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("explain --json prints JSON")
}

fn condition<'a>(out: &'a Value, type_: &str) -> &'a Value {
    out["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == type_))
        .unwrap_or_else(|| panic!("no {type_} condition in {out}"))
}

/// The parts of the output the count does not decide: what was measured and how each
/// metric compares with its target.
fn measured(out: &Value) -> (Value, Value, Value) {
    (
        out["status"]["currentMetrics"].clone(),
        out["status"]["currentReplicas"].clone(),
        condition(out, "ScalingActive").clone(),
    )
}

#[test]
fn at_the_tolerance_edge_1_28_scales_and_1_37_holds() {
    let old = explain(EDGE, Some("1.28"));
    let new = explain(EDGE, Some("1.37"));

    // Row 1 of docs/kubernetes-versions.md: a usage ratio of exactly 1.1.
    assert_eq!(old["scaleTo"], 5, "{old}");
    assert_eq!(old["status"]["desiredReplicas"], 5);
    assert_eq!(condition(&old, "AbleToScale")["reason"], "SucceededRescale");
    assert_eq!(new["scaleTo"], Value::Null, "{new}");
    assert_eq!(new["status"]["desiredReplicas"], 4);
    assert_eq!(condition(&new, "AbleToScale")["reason"], "ReadyForNewScale");

    // The same measurement at both releases: 110% of the request, 550m per pod.
    assert_eq!(measured(&old), measured(&new));
    let current = &new["status"]["currentMetrics"][0]["resource"]["current"];
    assert_eq!(current["averageUtilization"], 110);
    assert_eq!(current["averageValue"], "550m");
    assert_eq!(old["error"], Value::Null);
    assert_eq!(new["error"], Value::Null);
}

#[test]
fn without_the_flag_the_newest_release_decides() {
    assert_eq!(explain(EDGE, None), explain(EDGE, Some("1.37")));
    assert_eq!(explain(EDGE, Some("v1.37.2")), explain(EDGE, Some("1.37")));
}

#[test]
fn away_from_the_differences_the_releases_agree() {
    // No rescale, every metric read: nothing of docs/kubernetes-versions.md applies.
    let path = "examples/snapshots/scale-down-stabilized.yaml";
    assert_eq!(explain(path, Some("1.28")), explain(path, Some("1.37")));

    // A rescale: 1.37 (HPAScaleToZero on) says on every rescale whether it went to zero
    // (row 9); nothing else differs.
    let old = explain(AWAY_FROM_EDGE, Some("1.28"));
    let mut new = explain(AWAY_FROM_EDGE, Some("1.37"));
    assert_eq!(old["scaleTo"], 6);
    assert_eq!(
        condition(&new, "ScaledToZero")["reason"],
        "NotScaledToZero",
        "{new}"
    );
    let conditions = new["status"]["conditions"].as_array_mut().unwrap();
    conditions.retain(|c| c["type"] != "ScaledToZero");
    assert_eq!(old, new);
}

#[test]
fn a_release_outside_the_range_is_refused_with_the_range() {
    for (version, words) in [
        ("1.27", "Kubernetes 1.27 is not supported"),
        ("v1.38.0", "Kubernetes 1.38 is not supported"),
        ("latest", "is not a Kubernetes version"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_foresight"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args([
                "explain",
                "--snapshot",
                EDGE,
                "--kubernetes-version",
                version,
            ])
            .output()
            .expect("run foresight");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{version}: {stderr}");
        assert!(stderr.contains(words), "{version}: {stderr}");
        assert!(
            stderr.contains("--kubernetes-version"),
            "{version}: {stderr}"
        );
        if words.contains("not supported") {
            assert!(stderr.contains("1.28 to 1.37"), "{version}: {stderr}");
        }
    }
}

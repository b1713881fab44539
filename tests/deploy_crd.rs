//! `deploy/crd.yaml` is the output of `foresight crd`, checked in so that `kubectl apply -k
//! deploy/` installs everything, and as the Helm chart's `crds/` file. This keeps them equal:
//! regenerate with `cargo run --quiet -- crd > deploy/crd.yaml` (and the chart's copy).

use std::path::Path;
use std::process::Command;

#[test]
fn deploy_crd_yaml_is_the_output_of_foresight_crd() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let checked_in = root.join("deploy/crd.yaml");
    let out = Command::new(env!("CARGO_BIN_EXE_foresight"))
        .arg("crd")
        .output()
        .expect("the foresight binary runs");
    if !out.status.success() {
        // No `foresight crd` in this build yet: then no stale copy may be checked in either.
        assert!(
            !checked_in.exists(),
            "deploy/crd.yaml exists but `foresight crd` fails: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let generated = String::from_utf8(out.stdout).expect("the CRD is UTF-8");
    let kustomization =
        std::fs::read_to_string(root.join("deploy/kustomization.yaml")).expect("kustomization");
    assert!(
        kustomization.contains("- crd.yaml"),
        "deploy/kustomization.yaml must list crd.yaml"
    );
    for copy in [
        "deploy/crd.yaml",
        "charts/foresight/crds/effectivehorizontalpodautoscalers.yaml",
    ] {
        let current = std::fs::read_to_string(root.join(copy)).unwrap_or_default();
        assert!(
            current == generated,
            "{copy} is not the output of `foresight crd`; regenerate it with \
             `cargo run --quiet -- crd > {copy}`"
        );
    }
}

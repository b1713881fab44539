//! The decision core stays pure: nothing in its (normal) dependency tree talks to Kubernetes,
//! runs an async runtime or opens HTTP connections.
//!
//! Read from `cargo tree -p foresight-core`, which resolves features as building the core alone
//! does: `foresight-api` derives the Kubernetes resource only when the controller asks for its
//! `kube` feature, and a workspace-wide view (`cargo metadata`) would show that feature's crates
//! under the core although the core never compiles against them.

use std::collections::BTreeSet;
use std::process::Command;

/// Crates whose presence would mean the core does I/O or knows the Kubernetes client.
const FORBIDDEN: &[&str] = &[
    "kube",
    "kube-client",
    "kube-runtime",
    "kube-core",
    "k8s-openapi",
    "tokio",
    "reqwest",
    "hyper",
];

#[test]
fn the_core_depends_on_no_client_runtime_or_http_crate() {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml");
    let out = Command::new(env!("CARGO"))
        .args(["tree", "--locked", "-p", "foresight-core", "-e", "normal"])
        .args(["--prefix", "none", "--format", "{p}"])
        .args(["--manifest-path", manifest])
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // One package per line: `name vX.Y.Z [(path)] [(*)]`.
    let names: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    assert!(
        names.contains("jiff") && names.contains("foresight-api"),
        "the tree lists the core's own dependencies: {names:?}"
    );
    let found: Vec<&&str> = FORBIDDEN.iter().filter(|f| names.contains(**f)).collect();
    assert!(found.is_empty(), "the core depends on {found:?}");
}

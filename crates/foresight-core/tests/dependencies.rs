//! The decision core stays pure: nothing in its (normal) dependency tree talks to Kubernetes,
//! runs an async runtime or opens HTTP connections. Read from `cargo metadata`'s resolved
//! graph, so a dependency that pulls one of them in transitively fails here.

use std::collections::BTreeSet;
use std::process::Command;

use serde_json::Value;

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
        .args(["metadata", "--format-version", "1", "--locked"])
        .args(["--manifest-path", manifest])
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON");
    let nodes = metadata["resolve"]["nodes"]
        .as_array()
        .expect("a resolved graph");
    let node = |id: &str| nodes.iter().find(|n| n["id"] == id);
    let name_of = |id: &str| {
        metadata["packages"]
            .as_array()
            .and_then(|p| p.iter().find(|p| p["id"] == id))
            .and_then(|p| p["name"].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    let core = nodes
        .iter()
        .find(|n| name_of(n["id"].as_str().unwrap_or_default()) == "foresight-core")
        .expect("foresight-core is in the graph");
    // Normal dependencies only: tests and benchmarks may use anything.
    let mut seen = BTreeSet::new();
    let mut todo = vec![core["id"].as_str().unwrap_or_default().to_owned()];
    while let Some(id) = todo.pop() {
        let Some(n) = node(&id) else { continue };
        for dep in n["deps"].as_array().into_iter().flatten() {
            let normal = dep["dep_kinds"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|k| k["kind"].is_null());
            let pkg = dep["pkg"].as_str().unwrap_or_default().to_owned();
            if normal && seen.insert(pkg.clone()) {
                todo.push(pkg);
            }
        }
    }
    let names: BTreeSet<String> = seen.iter().map(|id| name_of(id)).collect();
    assert!(
        names.contains("jiff"),
        "the walk found the core's own dependencies: {names:?}"
    );
    let found: Vec<&&str> = FORBIDDEN.iter().filter(|f| names.contains(**f)).collect();
    assert!(found.is_empty(), "the core depends on {found:?}");
}

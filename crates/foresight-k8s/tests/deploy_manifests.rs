//! The deployment manifests (`deploy/`), the Helm chart (`charts/foresight/`) and the
//! end-to-end script (`scripts/e2e.sh`), checked without a cluster.
//!
//! The chart is rendered and linted by real Helm: `scripts/helm-render.py` drives Helm's own Go
//! SDK through PyPI's `helm-python-sdk` (`scripts/test` installs it). Both the plain manifests
//! and the rendered chart are then parsed as YAML and checked for least-privilege RBAC and a
//! locked-down pod; the real-cluster suite (`tests/cluster_install.rs`) applies them to a real
//! API server.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

fn yaml_documents(text: &str) -> Vec<Value> {
    foresight_api::manifest::parse_documents(text)
        .unwrap_or_else(|e| panic!("not valid YAML: {e}\n{text}"))
}

/// Runs `scripts/helm-render.py` on the chart with `args`.
fn helm(args: &[&str]) -> std::process::Output {
    let out = std::process::Command::new("python3")
        .arg(repo().join("scripts/helm-render.py"))
        .arg(repo().join("charts/foresight"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("python3 could not run ({e})"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("No module named 'helm_python'"),
        "helm-python-sdk is missing: `python3 -m pip install helm-python-sdk` (scripts/test does)"
    );
    out
}

/// Renders every template of the chart, with real Helm, with `values.yaml` merged with
/// `overrides` (each of which must exist in `values.yaml`: a typo is a test error).
fn render_chart(overrides: Value) -> Vec<Value> {
    let chart = repo().join("charts/foresight");
    let mut values =
        yaml_documents(&std::fs::read_to_string(chart.join("values.yaml")).unwrap()).remove(0);
    merge(&mut values, overrides.clone());
    let out = helm(&[&overrides.to_string()]);
    assert!(
        out.status.success(),
        "helm could not render the chart: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    yaml_documents(&String::from_utf8(out.stdout).expect("UTF-8"))
        .into_iter()
        .filter(|d| d["kind"] != "CustomResourceDefinition")
        .collect()
}

fn merge(base: &mut Value, overrides: Value) {
    match (base, overrides) {
        // A map the chart leaves empty (nodeSelector, podAnnotations) is the user's to fill.
        (Value::Object(b), Value::Object(o)) if !b.is_empty() => {
            for (k, v) in o {
                assert!(b.contains_key(&k), "override {k} is not in values.yaml");
                merge(b.entry(k).or_insert(Value::Null), v);
            }
        }
        (b, o) => *b = o,
    }
}

fn plain_manifests() -> Vec<Value> {
    let kustomization = &yaml_documents(&read("deploy/kustomization.yaml"))[0];
    let mut docs = Vec::new();
    for file in kustomization["resources"].as_array().unwrap() {
        docs.extend(yaml_documents(&read(&format!(
            "deploy/{}",
            file.as_str().unwrap()
        ))));
    }
    docs
}

// ---------------------------------------------------------------------------------------------
// Checks shared by the plain manifests and the chart
// ---------------------------------------------------------------------------------------------

fn of_kind<'a>(docs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    docs.iter().filter(|d| d["kind"] == kind).collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The verbs granted on `group`/`resource` by `rules`.
fn verbs(rules: &[Value], group: &str, resource: &str) -> Vec<String> {
    let mut out = Vec::new();
    for r in rules {
        if strings(&r["apiGroups"]).iter().any(|g| g == group)
            && strings(&r["resources"]).iter().any(|x| x == resource)
        {
            out.extend(strings(&r["verbs"]));
        }
    }
    out.sort();
    out.dedup();
    out
}

fn check_rbac(docs: &[Value]) {
    let roles: Vec<&Value> = docs
        .iter()
        .filter(|d| d["kind"] == "ClusterRole" || d["kind"] == "Role")
        .collect();
    assert!(!roles.is_empty());
    for role in &roles {
        for rule in role["rules"].as_array().unwrap() {
            for field in ["apiGroups", "resources", "verbs", "resourceNames"] {
                for s in strings(&rule[field]) {
                    assert!(!s.contains('*'), "wildcard {s:?} in {field} of {rule}");
                }
            }
        }
    }
    let cluster = of_kind(docs, "ClusterRole");
    let rules = cluster[0]["rules"].as_array().unwrap();
    let v = |g: &str, r: &str| verbs(rules, g, r);
    let ehpa = "autoscaling.foresight.dev";
    assert_eq!(
        v(ehpa, "effectivehorizontalpodautoscalers"),
        ["get", "list", "watch"]
    );
    assert_eq!(
        v(ehpa, "effectivehorizontalpodautoscalers/status"),
        ["get", "patch", "update"]
    );
    for kind in ["deployments", "statefulsets", "replicasets"] {
        assert_eq!(v("apps", &format!("{kind}/scale")), ["get", "patch"]);
        assert_eq!(
            v("apps", kind),
            ["list", "watch"],
            "{kind} may only be watched"
        );
    }
    assert_eq!(v("", "pods"), ["list", "watch"]);
    assert_eq!(v("metrics.k8s.io", "pods"), ["get", "list"]);
    assert_eq!(v("events.k8s.io", "events"), ["create", "patch"]);
    assert_eq!(v("", "events"), ["create", "patch"]);
    // Nothing may be deleted, and nothing else is readable: no secrets, no configmaps.
    for rule in rules {
        assert!(!strings(&rule["verbs"])
            .iter()
            .any(|x| x == "delete" || x == "deletecollection"));
        assert!(!strings(&rule["resources"])
            .iter()
            .any(|x| x == "secrets" || x == "configmaps"));
    }
}

fn check_leader_election(docs: &[Value], lease: &str) {
    let role = of_kind(docs, "Role");
    assert_eq!(role.len(), 1);
    let rules = role[0]["rules"].as_array().unwrap();
    let named: Vec<&Value> = rules
        .iter()
        .filter(|r| !r["resourceNames"].is_null())
        .collect();
    assert_eq!(strings(&named[0]["resourceNames"]), [lease]);
    assert_eq!(
        verbs(
            &named.iter().map(|v| (*v).clone()).collect::<Vec<_>>(),
            "coordination.k8s.io",
            "leases"
        ),
        ["get", "patch", "update"]
    );
    assert_eq!(
        verbs(rules, "coordination.k8s.io", "leases"),
        ["create", "get", "patch", "update"]
    );
    // The Role binds to the same service account the Deployment runs as.
    let binding = of_kind(docs, "RoleBinding");
    let deployment = of_kind(docs, "Deployment");
    assert_eq!(
        binding[0]["subjects"][0]["name"],
        deployment[0]["spec"]["template"]["spec"]["serviceAccountName"]
    );
}

fn check_deployment(docs: &[Value]) -> Vec<String> {
    let deployment = of_kind(docs, "Deployment");
    assert_eq!(deployment.len(), 1);
    let pod = &deployment[0]["spec"]["template"]["spec"];
    let sa = pod["serviceAccountName"].as_str().unwrap();
    assert!(of_kind(docs, "ServiceAccount")
        .iter()
        .any(|s| s["metadata"]["name"] == sa));
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    let c = &pod["containers"][0];
    let sc = &c["securityContext"];
    assert_eq!(sc["readOnlyRootFilesystem"], true);
    assert_eq!(sc["allowPrivilegeEscalation"], false);
    assert_eq!(sc["runAsNonRoot"], true);
    assert_eq!(strings(&sc["capabilities"]["drop"]), ["ALL"]);
    assert!(sc["privileged"].is_null() || sc["privileged"] == false);
    assert!(c["resources"]["requests"]["cpu"].is_string());
    assert!(c["resources"]["requests"]["memory"].is_string());
    assert!(c["resources"]["limits"]["memory"].is_string());
    assert_eq!(c["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert_eq!(c["ports"][0]["name"], "http-metrics");
    let port = c["ports"][0]["containerPort"].as_u64().unwrap();
    let args = strings(&c["args"]);
    assert_eq!(args[0], "controller");
    assert!(
        args.contains(&format!("--metrics-address=0.0.0.0:{port}")),
        "{args:?}"
    );
    // The Lease namespace and holder identity come from the downward API.
    let env: Vec<(String, String)> = c["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_owned(),
                e["valueFrom"]["fieldRef"]["fieldPath"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned(),
            )
        })
        .collect();
    assert!(env.contains(&("POD_NAMESPACE".to_owned(), "metadata.namespace".to_owned())));
    assert!(env.contains(&("POD_NAME".to_owned(), "metadata.name".to_owned())));
    let selector = &deployment[0]["spec"]["selector"]["matchLabels"];
    for (k, v) in selector.as_object().unwrap() {
        assert_eq!(
            &deployment[0]["spec"]["template"]["metadata"]["labels"][k],
            v
        );
    }
    let service = of_kind(docs, "Service");
    assert_eq!(&service[0]["spec"]["selector"], selector);
    args
}

#[test]
fn plain_manifests_are_least_privilege_and_locked_down() {
    let docs = plain_manifests();
    check_rbac(&docs);
    check_leader_election(&docs, "foresight-controller");
    let args = check_deployment(&docs);
    assert!(args.contains(&"--lease-name=foresight-controller".to_owned()));
    // Everything namespaced lives in the namespace the manifests create.
    for d in &docs {
        let ns = &d["metadata"]["namespace"];
        assert!(ns.is_null() || ns == "foresight-system", "{d}");
    }
}

#[test]
fn the_chart_renders_with_its_defaults() {
    let docs = render_chart(json!({}));
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "Deployment",
            "ClusterRole",
            "ClusterRoleBinding",
            "Role",
            "RoleBinding",
            "Service",
            "ServiceAccount"
        ]
    );
    check_rbac(&docs);
    check_leader_election(&docs, "foresight-controller");
    let args = check_deployment(&docs);
    assert_eq!(
        args,
        [
            "controller",
            "--log-format=json",
            "--log-level=info",
            "--metrics-address=0.0.0.0:8080",
            "--concurrency=16",
            "--leader-elect=true",
            "--lease-name=foresight-controller",
        ]
    );
    let image =
        &of_kind(&docs, "Deployment")[0]["spec"]["template"]["spec"]["containers"][0]["image"];
    assert_eq!(image, "ghcr.io/foresight-autoscaler/foresight:0.1.0");
    for d in &docs {
        assert_eq!(
            d["metadata"]["labels"]["app.kubernetes.io/instance"], "foresight",
            "{d}"
        );
    }
}

/// Every optional value of the chart set.
fn every_option() -> Value {
    json!({
        "image": {"tag": "dev"},
        "replicaCount": 2,
        "prometheus": {"url": "http://prometheus.monitoring:9090", "bearerTokenSecret": {"name": "prom-token"}},
        "logFormat": "human",
        "leaderElection": {"enabled": false},
        "concurrency": 8,
        "extraArgs": ["--sync-period=30s"],
        "metricsPort": 9100,
        "serviceAccount": {"create": false, "name": "existing"},
        "rbac": {
            "extraScaleTargets": [{"apiGroup": "argoproj.io", "resource": "rollouts"}],
            "customMetrics": ["pods/http_requests"],
            "externalMetrics": ["queue_messages_ready"]
        },
        "podAnnotations": {"prometheus.io/scrape": "true"},
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [{"key": "dedicated", "operator": "Exists"}],
        "imagePullSecrets": [{"name": "regcred"}]
    })
}

#[test]
fn the_chart_renders_every_option() {
    let docs = render_chart(every_option());
    assert!(
        of_kind(&docs, "Role").is_empty(),
        "no Lease access without leader election"
    );
    assert!(of_kind(&docs, "ServiceAccount").is_empty());
    check_rbac(&docs);
    let rules = of_kind(&docs, "ClusterRole")[0]["rules"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(
        verbs(&rules, "argoproj.io", "rollouts/scale"),
        ["get", "patch"]
    );
    assert_eq!(
        verbs(&rules, "custom.metrics.k8s.io", "pods/http_requests"),
        ["get"]
    );
    assert_eq!(
        verbs(&rules, "external.metrics.k8s.io", "queue_messages_ready"),
        ["get"]
    );
    let deployment = of_kind(&docs, "Deployment")[0];
    assert_eq!(deployment["spec"]["replicas"], 2);
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(pod["serviceAccountName"], "existing");
    assert_eq!(pod["nodeSelector"]["kubernetes.io/os"], "linux");
    assert_eq!(pod["tolerations"][0]["key"], "dedicated");
    assert_eq!(pod["imagePullSecrets"][0]["name"], "regcred");
    assert_eq!(pod["volumes"][0]["secret"]["secretName"], "prom-token");
    assert_eq!(
        deployment["spec"]["template"]["metadata"]["annotations"]["prometheus.io/scrape"],
        "true"
    );
    let c = &pod["containers"][0];
    assert_eq!(c["image"], "ghcr.io/foresight-autoscaler/foresight:dev");
    assert_eq!(c["ports"][0]["containerPort"], 9100);
    assert_eq!(c["volumeMounts"][0]["readOnly"], true);
    assert_eq!(
        strings(&c["args"]),
        [
            "controller",
            "--log-format=human",
            "--log-level=info",
            "--metrics-address=0.0.0.0:9100",
            "--concurrency=8",
            "--leader-elect=false",
            "--prometheus-url=http://prometheus.monitoring:9090",
            "--prometheus-bearer-token-file=/var/run/secrets/prometheus/token",
            "--sync-period=30s",
        ]
    );
    assert_eq!(
        of_kind(&docs, "Service")[0]["spec"]["ports"][0]["port"],
        9100
    );
}

#[test]
fn helm_lints_the_chart_strictly_with_defaults_and_every_option() {
    for values in [json!({}), every_option()] {
        let out = helm(&[&values.to_string(), "--lint"]);
        assert!(
            out.status.success(),
            "helm lint --strict failed with {values}:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn an_override_the_chart_lacks_is_a_test_error() {
    let result = std::panic::catch_unwind(|| render_chart(json!({"noSuchValue": 1})));
    assert!(result.is_err());
}

#[test]
fn the_e2e_script_is_shellcheck_clean() {
    let script = repo().join("scripts/e2e.sh");
    assert!(script.exists(), "scripts/e2e.sh is missing");
    let out = std::process::Command::new("shellcheck")
        .arg("--severity=style")
        .arg(&script)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "shellcheck could not run ({e}): install it with `apt-get install -y shellcheck`"
            )
        });
    assert!(
        out.status.success(),
        "shellcheck found problems:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let text = read("scripts/e2e.sh");
    assert!(text.starts_with("#!/usr/bin/env bash\n"));
    assert!(text.contains("set -euo pipefail"));
    assert!(
        text.contains("trap "),
        "the script must clean up after itself"
    );
}

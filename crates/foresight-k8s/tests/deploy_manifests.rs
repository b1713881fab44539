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

/// Checks that every top-level override is a value of the chart; deeper keys are the
/// schema's to check (values.schema.json, which Helm applies while rendering).
fn merge(base: &mut Value, overrides: Value) {
    let (Value::Object(b), Value::Object(o)) = (base, overrides) else {
        panic!("values are a map");
    };
    for (k, v) in o {
        assert!(b.contains_key(&k), "override {k} is not in values.yaml");
        b.insert(k, v);
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
    let accounts = of_kind(docs, "ServiceAccount");
    // Without one of its own (serviceAccount.create: false) the pod runs as an existing one.
    assert!(accounts.is_empty() || accounts.iter().any(|s| s["metadata"]["name"] == sa));
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
            "--concurrency=64",
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
        "leaderElection": {"enabled": true, "leaseName": "fs-lease"},
        "concurrency": 8,
        "extraArgs": ["--sync-period=30s"],
        "extraEnv": [{"name": "TZ", "value": "UTC"}],
        "metricsPort": 9100,
        "serviceAccount": {"create": false, "name": "existing"},
        "rbac": {
            "extraScaleTargets": [{"apiGroup": "argoproj.io", "resource": "rollouts"}],
            "customMetrics": ["pods/http_requests"],
            "externalMetrics": ["queue_messages_ready"]
        },
        "resources": {"requests": {"cpu": "200m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}},
        "podAnnotations": {"prometheus.io/scrape": "true"},
        "podLabels": {"team": "platform"},
        "priorityClassName": "system-cluster-critical",
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [{"key": "dedicated", "operator": "Exists"}],
        "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": 100,
            "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "foresight"}}}}]}},
        "imagePullSecrets": [{"name": "regcred"}],
        "podSecurityContext": {"runAsNonRoot": true, "runAsUser": 10001, "runAsGroup": 10001,
            "fsGroup": 10001, "seccompProfile": {"type": "RuntimeDefault"}},
        "securityContext": {"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true,
            "runAsNonRoot": true, "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"}},
        "podDisruptionBudget": {"enabled": true, "maxUnavailable": 1},
        "serviceMonitor": {"enabled": true, "interval": "15s", "labels": {"release": "kps"}},
        "grafanaDashboard": {"enabled": true, "namespace": "monitoring"}
    })
}

#[test]
fn the_chart_renders_every_option() {
    let docs = render_chart(every_option());
    assert!(of_kind(&docs, "ServiceAccount").is_empty());
    check_rbac(&docs);
    check_leader_election(&docs, "fs-lease");
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
        ["get", "list"]
    );
    assert_eq!(
        verbs(&rules, "external.metrics.k8s.io", "queue_messages_ready"),
        ["list"]
    );
    let args = check_deployment(&docs);
    let deployment = of_kind(&docs, "Deployment")[0];
    assert_eq!(deployment["spec"]["replicas"], 2);
    let template = &deployment["spec"]["template"];
    let pod = &template["spec"];
    assert_eq!(pod["serviceAccountName"], "existing");
    assert_eq!(pod["nodeSelector"]["kubernetes.io/os"], "linux");
    assert_eq!(pod["tolerations"][0]["key"], "dedicated");
    assert_eq!(pod["imagePullSecrets"][0]["name"], "regcred");
    assert_eq!(pod["volumes"][0]["secret"]["secretName"], "prom-token");
    assert_eq!(pod["priorityClassName"], "system-cluster-critical");
    assert_eq!(pod["securityContext"]["fsGroup"], 10001);
    assert_eq!(
        pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
            ["weight"],
        100
    );
    assert_eq!(
        template["metadata"]["annotations"]["prometheus.io/scrape"],
        "true"
    );
    assert_eq!(template["metadata"]["labels"]["team"], "platform");
    // The selector's labels stay as they are: extra pod labels do not change what it selects.
    assert!(deployment["spec"]["selector"]["matchLabels"]["team"].is_null());
    let c = &pod["containers"][0];
    assert_eq!(c["image"], "ghcr.io/foresight-autoscaler/foresight:dev");
    assert_eq!(c["ports"][0]["containerPort"], 9100);
    assert_eq!(c["volumeMounts"][0]["readOnly"], true);
    assert_eq!(c["resources"]["limits"]["memory"], "1Gi");
    assert!(c["env"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["name"] == "TZ" && e["value"] == "UTC"));
    assert_eq!(
        args,
        [
            "controller",
            "--log-format=human",
            "--log-level=info",
            "--metrics-address=0.0.0.0:9100",
            "--concurrency=8",
            "--leader-elect=true",
            "--lease-name=fs-lease",
            "--prometheus-url=http://prometheus.monitoring:9090",
            "--prometheus-bearer-token-file=/var/run/secrets/prometheus/token",
            "--sync-period=30s",
        ]
    );
    let service = of_kind(&docs, "Service")[0];
    assert_eq!(service["spec"]["ports"][0]["port"], 9100);

    let pdb = of_kind(&docs, "PodDisruptionBudget")[0];
    assert_eq!(pdb["spec"]["maxUnavailable"], 1);
    assert!(pdb["spec"]["minAvailable"].is_null());
    assert_eq!(
        pdb["spec"]["selector"]["matchLabels"],
        deployment["spec"]["selector"]["matchLabels"]
    );

    // The ServiceMonitor selects the metrics Service by its labels, on its port name.
    let monitor = of_kind(&docs, "ServiceMonitor")[0];
    assert_eq!(monitor["metadata"]["labels"]["release"], "kps");
    let endpoint = &monitor["spec"]["endpoints"][0];
    assert_eq!(endpoint["port"], service["spec"]["ports"][0]["name"]);
    assert_eq!(endpoint["interval"], "15s");
    for (k, v) in monitor["spec"]["selector"]["matchLabels"]
        .as_object()
        .unwrap()
    {
        assert_eq!(&service["metadata"]["labels"][k], v, "label {k}");
    }

    let dashboard = of_kind(&docs, "ConfigMap")[0];
    assert_eq!(dashboard["metadata"]["namespace"], "monitoring");
    assert_eq!(dashboard["metadata"]["labels"]["grafana_dashboard"], "1");
    let json: Value = serde_json::from_str(dashboard["data"]["foresight.json"].as_str().unwrap())
        .expect("the dashboard is JSON");
    assert_eq!(json["uid"], "foresight");
}

#[test]
fn the_chart_refuses_replicas_without_leader_election_and_values_outside_its_schema() {
    for (values, expected) in [
        (
            json!({"replicaCount": 2, "leaderElection": {"enabled": false}}),
            "replicaCount > 1 needs leaderElection.enabled",
        ),
        (json!({"replicaCount": "two"}), "/replicaCount"),
        (json!({"logFormat": "xml"}), "/logFormat"),
        (
            json!({"serviceMonitor": {"interval": "soon"}}),
            "/serviceMonitor/interval",
        ),
        (json!({"noSuchValue": 1}), "noSuchValue"),
    ] {
        let out = helm(&[&values.to_string()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{values} rendered");
        assert!(stderr.contains(expected), "{values}: {stderr}");
    }
}

/// The series a PromQL expression reads: the identifiers outside string literals that start
/// with `foresight_` or `process_` (no function, keyword or label of ours does).
fn metric_names(expr: &str) -> Vec<String> {
    let mut names = Vec::new();
    // Every other piece between quotes is a string literal.
    for (i, piece) in expr.split('"').enumerate() {
        if i % 2 == 1 {
            continue;
        }
        for word in piece.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            if ["foresight_", "process_", "horizontal_pod_autoscaler_"]
                .iter()
                .any(|prefix| word.starts_with(prefix))
            {
                names.push(word.to_owned());
            }
        }
    }
    names
}

#[test]
fn every_dashboard_query_reads_a_documented_series() {
    let dashboard: Value =
        serde_json::from_str(&read("charts/foresight/dashboards/foresight.json"))
            .expect("the dashboard is JSON");
    let doc = read("docs/metrics.md");
    let documented: Vec<&str> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .collect();
    let mut exprs: Vec<String> = Vec::new();
    for panel in dashboard["panels"].as_array().unwrap() {
        for t in panel["targets"].as_array().into_iter().flatten() {
            exprs.push(t["expr"].as_str().unwrap().to_owned());
        }
    }
    for v in dashboard["templating"]["list"].as_array().unwrap() {
        if v["type"] == "query" {
            exprs.push(v["query"].as_str().unwrap().to_owned());
        }
    }
    assert!(exprs.len() > 15, "{exprs:?}");
    let mut seen = 0;
    for expr in &exprs {
        for name in metric_names(expr) {
            let base = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| name.strip_suffix(s))
                .filter(|b| documented.contains(b))
                .unwrap_or(&name);
            assert!(
                documented.contains(&base),
                "the dashboard queries {name}, which docs/metrics.md does not list: {expr}"
            );
            seen += 1;
        }
    }
    assert!(seen >= exprs.len(), "every query names a series");
    // The per-autoscaler panels cover what an operator asks first.
    for family in [
        "foresight_autoscaler_desired_replicas",
        "foresight_autoscaler_proposed_replicas",
        "foresight_autoscaler_limited",
        "foresight_autoscaler_prediction_ready",
        "foresight_reconcile_duration_seconds_bucket",
        "horizontal_pod_autoscaler_controller_reconciliations_total",
        "foresight_reconcile_errors_total",
    ] {
        assert!(
            exprs.iter().any(|e| e.contains(family)),
            "no panel reads {family}"
        );
    }
}

#[test]
fn deploy_and_the_chart_name_the_image_scripts_image_builds() {
    let out = std::process::Command::new(repo().join("scripts/image"))
        .arg("--print-name")
        .env_remove("IMAGE")
        .output()
        .expect("scripts/image runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let image = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let chart = of_kind(&render_chart(json!({})), "Deployment")[0]["spec"]["template"]["spec"]
        ["containers"][0]["image"]
        .clone();
    assert_eq!(chart, image.as_str());
    let deploy = yaml_documents(&read("deploy/controller.yaml"));
    let deployment = deploy.iter().find(|d| d["kind"] == "Deployment").unwrap();
    assert_eq!(
        deployment["spec"]["template"]["spec"]["containers"][0]["image"],
        image.as_str(),
        "deploy/controller.yaml must use the image scripts/image builds"
    );
    // The tag is the release: the chart's appVersion is the workspace version.
    let cargo = read("Cargo.toml");
    let version = cargo
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|l| l.strip_suffix('"'))
        .expect("workspace version");
    assert!(
        image.ends_with(&format!(":{version}")),
        "{image} vs {version}"
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

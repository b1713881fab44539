//! Bad EffectiveHorizontalPodAutoscaler manifests, one rule each, shared by the tests that
//! check the rules: `foresight validate` must reject every one at its field path
//! (`tests/validate_cli.rs`), and the API server with the CRD installed must agree wherever
//! the CRD's schema and CEL rules can say the rule (`tests/cluster_install.rs`).

pub const BASE: &str = r#"apiVersion: autoscaling.foresight.dev/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata:
  name: web
  namespace: shop
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 20
"#;

/// `BASE` with `extra` spec lines added; a top-level spec key in `extra` replaces BASE's.
pub fn manifest(extra: &str) -> String {
    let key = |line: &str| {
        line.strip_prefix("  ")
            .and_then(|l| l.split(':').next())
            .map(str::to_owned)
    };
    let replaced: Vec<String> = extra
        .lines()
        .filter(|l| !l.starts_with("   "))
        .filter_map(key)
        .collect();
    let mut out: String = BASE
        .lines()
        .filter(|l| key(l).is_none_or(|k| !replaced.contains(&k)))
        .map(|l| format!("{l}\n"))
        .collect();
    out.push_str(extra);
    out
}

/// What the API server, with the CRD installed, does with a case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Server {
    /// Rejects it too: the schema or a CEL rule says the same rule.
    Rejects,
    /// Accepts it: the rule cannot be said in the schema or CEL, for the reason given;
    /// only `foresight validate` and the controller's own validation catch it.
    Accepts(&'static str),
}

/// One bad manifest.
pub struct Case {
    /// What is wrong.
    pub name: &'static str,
    /// Spec lines appended under `spec:` (see [`manifest`]).
    pub spec: &'static str,
    /// The field path `foresight validate` names.
    pub path: &'static str,
    /// What the API server does with it.
    pub server: Server,
}

/// Every case.
pub const BAD: &[Case] = &[
    Case {
        name: "max zero",
        spec: "  maxReplicas: 0\n",
        path: "spec.maxReplicas",
        server: Server::Rejects,
    },
    Case {
        name: "max below min",
        spec: "  minReplicas: 30\n",
        path: "spec.maxReplicas",
        server: Server::Rejects,
    },
    Case {
        name: "negative min",
        spec: "  minReplicas: -1\n",
        path: "spec.minReplicas",
        server: Server::Rejects,
    },
    Case {
        name: "max not a number",
        spec: "  maxReplicas: ten\n",
        path: "spec.maxReplicas",
        server: Server::Rejects,
    },
    Case {
        name: "target kind missing",
        spec: "  scaleTargetRef: {name: web}\n",
        path: "spec.scaleTargetRef.kind",
        server: Server::Rejects,
    },
    Case {
        name: "target name dot-dot",
        spec: "  scaleTargetRef: {kind: Deployment, name: '..'}\n",
        path: "spec.scaleTargetRef.name",
        server: Server::Rejects,
    },
    Case {
        name: "target name slash",
        spec: "  scaleTargetRef: {kind: Deployment, name: 'a/b'}\n",
        path: "spec.scaleTargetRef.name",
        server: Server::Rejects,
    },
    Case {
        name: "metric type missing",
        spec: "  metrics: [{resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]\n",
        path: "spec.metrics[0].type",
        server: Server::Rejects,
    },
    Case {
        name: "metric type unknown",
        spec: "  metrics: [{type: Bogus}]\n",
        path: "spec.metrics[0].type",
        server: Server::Rejects,
    },
    Case {
        name: "resource source missing",
        spec: "  metrics: [{type: Resource}]\n",
        path: "spec.metrics[0].resource",
        server: Server::Rejects,
    },
    Case {
        name: "resource name missing",
        spec: "  metrics: [{type: Resource, resource: {target: {type: Utilization, averageUtilization: 50}}}]\n",
        path: "spec.metrics[0].resource.name",
        server: Server::Rejects,
    },
    Case {
        name: "utilization zero",
        spec: "  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 0}}}]\n",
        path: "spec.metrics[0].resource.target.averageUtilization",
        server: Server::Rejects,
    },
    Case {
        name: "both utilization and value",
        spec: "  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50, averageValue: 100m}}}]\n",
        path: "spec.metrics[0].resource.target.averageValue",
        server: Server::Rejects,
    },
    Case {
        name: "target type unknown",
        spec: "  metrics: [{type: Resource, resource: {name: cpu, target: {type: Percent, averageUtilization: 50}}}]\n",
        path: "spec.metrics[0].resource.target.type",
        server: Server::Rejects,
    },
    Case {
        name: "negative average value",
        spec: "  metrics: [{type: Pods, pods: {metric: {name: qps}, target: {type: AverageValue, averageValue: '-5'}}}]\n",
        path: "spec.metrics[0].pods.target.averageValue",
        server: Server::Rejects,
    },
    Case {
        name: "zero average value",
        spec: "  metrics: [{type: Pods, pods: {metric: {name: qps}, target: {type: AverageValue, averageValue: '0.0m'}}}]\n",
        path: "spec.metrics[0].pods.target.averageValue",
        server: Server::Rejects,
    },
    Case {
        name: "zero value as an integer",
        spec: "  metrics: [{type: External, external: {metric: {name: q}, target: {type: Value, value: 0}}}]\n",
        path: "spec.metrics[0].external.target.value",
        server: Server::Rejects,
    },
    Case {
        name: "negative tolerance as an integer",
        spec: "  behavior: {scaleDown: {tolerance: -1}}\n",
        path: "spec.behavior.scaleDown.tolerance",
        server: Server::Rejects,
    },
    Case {
        name: "malformed quantity",
        spec: "  metrics: [{type: Pods, pods: {metric: {name: qps}, target: {type: AverageValue, averageValue: 12xyz}}}]\n",
        path: "spec.metrics[0].pods.target.averageValue",
        server: Server::Rejects,
    },
    Case {
        name: "pods without average value",
        spec: "  metrics: [{type: Pods, pods: {metric: {name: qps}, target: {type: Value, value: '5'}}}]\n",
        path: "spec.metrics[0].pods.target.averageValue",
        server: Server::Rejects,
    },
    Case {
        name: "pods metric name missing",
        spec: "  metrics: [{type: Pods, pods: {metric: {}, target: {type: AverageValue, averageValue: '5'}}}]\n",
        path: "spec.metrics[0].pods.metric.name",
        server: Server::Rejects,
    },
    Case {
        name: "object without described object",
        spec: "  metrics: [{type: Object, object: {metric: {name: rps}, target: {type: Value, value: '10'}}}]\n",
        path: "spec.metrics[0].object.describedObject.kind",
        server: Server::Rejects,
    },
    Case {
        name: "external with both targets",
        spec: "  metrics: [{type: External, external: {metric: {name: q}, target: {type: Value, value: '1', averageValue: '2'}}}]\n",
        path: "spec.metrics[0].external.target.value",
        server: Server::Rejects,
    },
    Case {
        name: "external metric name with slash",
        spec: "  metrics: [{type: External, external: {metric: {name: 'a/b'}, target: {type: Value, value: '1'}}}]\n",
        path: "spec.metrics[0].external.metric.name",
        server: Server::Rejects,
    },
    Case {
        name: "container resource without container",
        spec: "  metrics: [{type: ContainerResource, containerResource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]\n",
        path: "spec.metrics[0].containerResource.container",
        server: Server::Rejects,
    },
    Case {
        name: "container name not a DNS label",
        spec: "  metrics: [{type: ContainerResource, containerResource: {name: cpu, container: App_1, target: {type: Utilization, averageUtilization: 50}}}]\n",
        path: "spec.metrics[0].containerResource.container",
        server: Server::Rejects,
    },
    Case {
        name: "two sources in one metric",
        spec: "  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}, pods: {metric: {name: qps}, target: {type: AverageValue, averageValue: '1'}}}]\n",
        path: "spec.metrics[0].pods",
        server: Server::Rejects,
    },
    Case {
        name: "prometheus without query",
        spec: "  metrics: [{type: Prometheus, prometheus: {name: rps, target: {type: Value, value: '100'}}}]\n",
        path: "spec.metrics[0].prometheus.query",
        server: Server::Rejects,
    },
    Case {
        name: "prometheus utilization target",
        spec: "  metrics: [{type: Prometheus, prometheus: {name: rps, query: 'sum(rate(x[1m]))', target: {type: Utilization, averageUtilization: 50}}}]\n",
        path: "spec.metrics[0].prometheus.target.type",
        server: Server::Rejects,
    },
    Case {
        name: "formula that cannot be read",
        spec: "  metrics: [{type: Formula, formula: {name: load, formula: '(a + ) / 2', inputs: [{name: a, type: Prometheus, prometheus: {query: up}}], target: {type: AverageValue, averageValue: '2'}}}]\n",
        path: "spec.metrics[0].formula.formula",
        server: Server::Accepts("reading a formula takes expr-lang's grammar, beyond a CEL rule"),
    },
    Case {
        name: "formula input with two sources",
        spec: "  metrics: [{type: Formula, formula: {name: load, formula: 'a', inputs: [{name: a, type: External, external: {metric: {name: queue}}, prometheus: {query: up}}], target: {type: AverageValue, averageValue: '2'}}}]\n",
        path: "spec.metrics[0].formula.inputs[0].prometheus",
        server: Server::Rejects,
    },
    Case {
        name: "formula input name a formula cannot use",
        spec: "  metrics: [{type: Formula, formula: {name: load, formula: '1', inputs: [{name: my-trig, type: Prometheus, prometheus: {query: up}}], target: {type: AverageValue, averageValue: '2'}}}]\n",
        path: "spec.metrics[0].formula.inputs[0].name",
        server: Server::Rejects,
    },
    Case {
        name: "formula utilization target",
        spec: "  metrics: [{type: Formula, formula: {name: load, formula: 'a', inputs: [{name: a, type: Prometheus, prometheus: {query: up}}], target: {type: Utilization, averageUtilization: 50}}}]\n",
        path: "spec.metrics[0].formula.target.type",
        server: Server::Rejects,
    },
    Case {
        name: "stabilization window too long",
        spec: "  behavior: {scaleDown: {stabilizationWindowSeconds: 3601}}\n",
        path: "spec.behavior.scaleDown.stabilizationWindowSeconds",
        server: Server::Rejects,
    },
    Case {
        name: "negative stabilization window",
        spec: "  behavior: {scaleUp: {stabilizationWindowSeconds: -1}}\n",
        path: "spec.behavior.scaleUp.stabilizationWindowSeconds",
        server: Server::Rejects,
    },
    Case {
        name: "select policy unknown",
        spec: "  behavior: {scaleUp: {selectPolicy: Fastest}}\n",
        path: "spec.behavior.scaleUp.selectPolicy",
        server: Server::Rejects,
    },
    Case {
        name: "empty policy list",
        spec: "  behavior: {scaleDown: {policies: []}}\n",
        path: "spec.behavior.scaleDown.policies",
        server: Server::Rejects,
    },
    Case {
        name: "policy period too long",
        spec: "  behavior: {scaleUp: {policies: [{type: Pods, value: 4, periodSeconds: 1801}]}}\n",
        path: "spec.behavior.scaleUp.policies[0].periodSeconds",
        server: Server::Rejects,
    },
    Case {
        name: "policy value zero",
        spec: "  behavior: {scaleUp: {policies: [{type: Percent, value: 0, periodSeconds: 60}]}}\n",
        path: "spec.behavior.scaleUp.policies[0].value",
        server: Server::Rejects,
    },
    Case {
        name: "policy type unknown",
        spec: "  behavior: {scaleDown: {policies: [{type: Replicas, value: 1, periodSeconds: 60}]}}\n",
        path: "spec.behavior.scaleDown.policies[0].type",
        server: Server::Rejects,
    },
    Case {
        name: "negative tolerance",
        spec: "  behavior: {scaleUp: {tolerance: '-0.1'}}\n",
        path: "spec.behavior.scaleUp.tolerance",
        server: Server::Rejects,
    },
    Case {
        name: "specificReplicas without Preview",
        spec: "  specificReplicas: 5\n",
        path: "spec.specificReplicas",
        server: Server::Rejects,
    },
    Case {
        name: "unknown strategy",
        spec: "  scaleStrategy: Manual\n",
        path: "spec.scaleStrategy",
        server: Server::Rejects,
    },
    Case {
        name: "sync period zero",
        spec: "  syncPeriodSeconds: 0\n",
        path: "spec.syncPeriodSeconds",
        server: Server::Rejects,
    },
    Case {
        name: "prediction without algorithm",
        spec: "  prediction: {predictionWindowSeconds: 600}\n",
        path: "spec.prediction.predictionAlgorithm",
        server: Server::Rejects,
    },
    Case {
        name: "prediction unknown algorithm",
        spec: "  prediction: {predictionAlgorithm: {algorithmType: arima}}\n",
        path: "spec.prediction.predictionAlgorithm.algorithmType",
        server: Server::Rejects,
    },
    Case {
        name: "prediction negative window",
        spec: "  prediction: {predictionWindowSeconds: -60, predictionAlgorithm: {algorithmType: dsp}}\n",
        path: "spec.prediction.predictionWindowSeconds",
        server: Server::Rejects,
    },
    Case {
        name: "dsp sample interval over an hour",
        spec: "  prediction: {predictionAlgorithm: {algorithmType: dsp, dsp: {sampleInterval: 2h}}}\n",
        path: "spec.prediction.predictionAlgorithm.dsp.sampleInterval",
        server: Server::Accepts("durations may be written in days (3d), which CEL's duration() cannot read"),
    },
    Case {
        name: "dsp history under 48h",
        spec: "  prediction: {predictionAlgorithm: {algorithmType: dsp, dsp: {historyLength: 1d}}}\n",
        path: "spec.prediction.predictionAlgorithm.dsp.historyLength",
        server: Server::Accepts("durations may be written in days (3d), which CEL's duration() cannot read"),
    },
    Case {
        name: "headroom risk budget of zero",
        spec: "  prediction: {predictionAlgorithm: {algorithmType: dsp}, headroom: {riskBudgetPercent: '0'}}\n",
        path: "spec.prediction.headroom.riskBudgetPercent",
        server: Server::Rejects,
    },
    Case {
        name: "headroom risk budget over half the time",
        spec: "  prediction: {predictionAlgorithm: {algorithmType: dsp}, headroom: {riskBudgetPercent: '60'}}\n",
        path: "spec.prediction.headroom.riskBudgetPercent",
        server: Server::Accepts("an upper bound on a quantity needs CEL's quantity(), which the API server prices over budget on a CRD this size"),
    },
    Case {
        name: "objective shortfall neither AsReactive nor a share",
        spec: "  prediction: {predictionAlgorithm: {algorithmType: dsp}}\n  objective: {shortfall: asReactive}\n",
        path: "spec.objective.shortfall",
        server: Server::Rejects,
    },
    Case {
        name: "objective shortfall of no time at all",
        spec: "  prediction: {predictionAlgorithm: {algorithmType: dsp}}\n  objective: {shortfall: '0%'}\n",
        path: "spec.objective.shortfall",
        server: Server::Accepts("the pattern reads a share; its bounds (more than 0, at most 50%) are Rust's"),
    },
    Case {
        name: "objective without prediction",
        spec: "  objective: {shortfall: AsReactive}\n",
        path: "spec.prediction",
        server: Server::Rejects,
    },
    Case {
        name: "objective maxUtilization below the target",
        spec: "  metrics:\n  - type: Resource\n    resource: {name: cpu, target: {type: Utilization, averageUtilization: 75}}\n  prediction: {predictionAlgorithm: {algorithmType: dsp}}\n  objective: {shortfall: AsReactive, maxUtilization: 70}\n",
        path: "spec.objective.maxUtilization",
        server: Server::Accepts("comparing it with every metric's target is a CEL loop over the metrics the API server prices over budget on a CRD this size"),
    },
    Case {
        name: "minReplicas 0 with only a CPU metric",
        spec: "  minReplicas: 0\n  metrics:\n  - type: Resource\n    resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}\n",
        path: "spec.metrics",
        server: Server::Rejects,
    },
    Case {
        name: "fallback without replicas",
        spec: "  fallback: {failureThreshold: 3}\n",
        path: "spec.fallback.replicas",
        server: Server::Rejects,
    },
    Case {
        name: "fallback with a negative threshold",
        spec: "  fallback: {failureThreshold: -1, replicas: 2}\n",
        path: "spec.fallback.failureThreshold",
        server: Server::Rejects,
    },
    Case {
        name: "idle replicas not below minReplicas",
        spec: "  idle: {replicas: 2}\n  metrics:\n  - type: External\n    external: {metric: {name: queue}, target: {type: AverageValue, averageValue: '10'}}\n",
        path: "spec.idle.replicas",
        server: Server::Rejects,
    },
    Case {
        name: "idle with nothing that reads load without pods",
        spec: "  idle: {}\n",
        path: "spec.idle",
        server: Server::Rejects,
    },
    Case {
        name: "activation on a CPU metric",
        spec: "  idle: {}\n  crons:\n  - {name: day, start: '0 8 * * *', end: '0 18 * * *', targetReplicas: 3}\n  metrics:\n  - type: Resource\n    activation: '1'\n    resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}\n",
        path: "spec.metrics[0].activation",
        server: Server::Rejects,
    },
    Case {
        name: "activation without idle",
        spec: "  metrics:\n  - type: External\n    activation: '1'\n    external: {metric: {name: queue}, target: {type: AverageValue, averageValue: '10'}}\n",
        path: "spec.metrics[0].activation",
        server: Server::Rejects,
    },
    Case {
        name: "cron duplicate names",
        spec: "  crons:\n  - {name: a, start: '0 6 * * *', end: '0 9 * * *', targetReplicas: 3}\n  - {name: a, start: '0 18 * * *', end: '0 20 * * *', targetReplicas: 3}\n",
        path: "spec.crons[1].name",
        server: Server::Rejects,
    },
    Case {
        name: "cron schedule with six fields",
        spec: "  crons: [{name: a, start: '0 0 6 * * *', end: '0 9 * * *', targetReplicas: 3}]\n",
        path: "spec.crons[0].start",
        server: Server::Accepts("the cron grammar (fields, ranges, steps, names) is beyond a CEL rule"),
    },
    Case {
        name: "cron minute out of range",
        spec: "  crons: [{name: a, start: '0 6 * * *', end: '60 9 * * *', targetReplicas: 3}]\n",
        path: "spec.crons[0].end",
        server: Server::Accepts("the cron grammar (fields, ranges, steps, names) is beyond a CEL rule"),
    },
    Case {
        name: "cron start equals end",
        spec: "  crons: [{name: a, start: '0 6 * * *', end: '0 6 * * *', targetReplicas: 3}]\n",
        path: "spec.crons[0].end",
        server: Server::Rejects,
    },
    Case {
        name: "cron unknown time zone",
        spec: "  crons: [{name: a, timezone: Mars/Olympus, start: '0 6 * * *', end: '0 9 * * *', targetReplicas: 3}]\n",
        path: "spec.crons[0].timezone",
        server: Server::Accepts("CEL has no time-zone database"),
    },
    Case {
        name: "cron negative target",
        spec: "  crons: [{name: a, start: '0 6 * * *', end: '0 9 * * *', targetReplicas: -2}]\n",
        path: "spec.crons[0].targetReplicas",
        server: Server::Rejects,
    },
];

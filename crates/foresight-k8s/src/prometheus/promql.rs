//! The PromQL Foresight writes itself: the default history query of each metric, for
//! prediction, and the templates a cluster operator may override them with.
//!
//! The defaults follow Crane's (docs/prometheus.md, "Prediction history: the default queries") with three changes:
//! - CPU uses `rate(...[5m])`, not `irate(...[3m])`. `irate` looks only at the last two samples
//!   in its window, so a history sampled every minute is a series of spot readings that alias
//!   short spikes in or out at random; `rate` averages every sample of the window, which is the
//!   load the pods actually carried, survives a few missed scrapes, and matches what
//!   metrics-server reports to the observed metric, so forecast and observation agree.
//! - ContainerResource queries are summed over the target's pods (Crane's return one series
//!   per pod, which its predictor rejects, so they never became usable).
//! - Pods metrics are narrowed to the target's pods, not the whole namespace.

use std::collections::BTreeMap;

use foresight_api::hpa::{
    CrossVersionObjectReference, LabelSelector, MetricIdentifier, SelectorOperator,
};
use foresight_core::autoscaler::{Autoscaler, Metric, MetricSource};
use foresight_core::resources::ResourceName;

/// A PromQL string literal: `"..."` with backslashes, quotes and newlines escaped.
pub fn string_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `s` with RE2 metacharacters escaped, to match literally inside a regex.
pub fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A regex (anchored by PromQL itself) for the names of the pods a workload of `kind` named
/// `name` creates, as Crane builds it. Kinds it does not know (Argo Rollouts, CRDs) get
/// `<name>-.*`, which may also match another workload sharing the prefix.
pub fn pod_name_regex(kind: &str, name: &str) -> String {
    let name = regex_escape(name);
    match kind {
        // <deployment>-<pod-template-hash>-<5 random>
        "Deployment" => format!("{name}-[a-z0-9]+-[a-z0-9]{{5}}"),
        "ReplicaSet" | "DaemonSet" => format!("{name}-[a-z0-9]{{5}}"),
        "StatefulSet" => format!("{name}-[0-9]+"),
        _ => format!("{name}-.*"),
    }
}

fn is_metric_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

fn is_label_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A Kubernetes label selector as PromQL label matchers. `Err` names a key that is not a
/// Prometheus label name (e.g. `app.kubernetes.io/name`) or an unknown operator.
pub fn label_matchers(selector: Option<&LabelSelector>) -> Result<Vec<String>, String> {
    let Some(selector) = selector else {
        return Ok(Vec::new());
    };
    let check = |key: &str| {
        if is_label_name(key) {
            Ok(())
        } else {
            Err(format!(
                "selector key {key:?} is not a Prometheus label name"
            ))
        }
    };
    let mut out = Vec::new();
    for (k, v) in selector.match_labels.iter().flatten() {
        check(k)?;
        out.push(format!("{k}={}", string_literal(v)));
    }
    for req in selector.match_expressions.iter().flatten() {
        check(&req.key)?;
        let alternatives = || {
            let values: Vec<String> = req
                .values
                .iter()
                .flatten()
                .map(|v| regex_escape(v))
                .collect();
            string_literal(&values.join("|"))
        };
        out.push(match SelectorOperator::parse(&req.operator) {
            Some(SelectorOperator::In) => format!("{}=~{}", req.key, alternatives()),
            Some(SelectorOperator::NotIn) => format!("{}!~{}", req.key, alternatives()),
            Some(SelectorOperator::Exists) => format!("{}!=\"\"", req.key),
            Some(SelectorOperator::DoesNotExist) => format!("{}=\"\"", req.key),
            None => {
                return Err(format!(
                    "selector operator {:?} is not supported",
                    req.operator
                ))
            }
        });
    }
    Ok(out)
}

/// `name{matchers}`, or `{__name__="name",matchers}` when `name` is not a valid metric name.
fn selector_expr(name: &str, mut matchers: Vec<String>) -> String {
    if is_metric_name(name) {
        format!("{name}{{{}}}", matchers.join(","))
    } else {
        matchers.insert(0, format!("__name__={}", string_literal(name)));
        format!("{{{}}}", matchers.join(","))
    }
}

/// The values a default query or an override template is filled with.
#[derive(Clone, Debug)]
pub struct QueryContext<'a> {
    /// The autoscaler's (and its target's) namespace.
    pub namespace: &'a str,
    /// The scale target.
    pub target: &'a CrossVersionObjectReference,
}

impl QueryContext<'_> {
    /// The matchers for the target's pods: namespace and pod-name regex.
    fn pod_matchers(&self) -> Vec<String> {
        vec![
            format!("namespace={}", string_literal(self.namespace)),
            format!(
                "pod=~{}",
                string_literal(&pod_name_regex(&self.target.kind, &self.target.name))
            ),
        ]
    }
}

/// The default history query of `metric`, summed into one series in the metric's unit
/// (cores, bytes, the custom metric's own unit). `Err` says why there is none.
pub fn default_history_query(metric: &Metric, ctx: &QueryContext<'_>) -> Result<String, String> {
    match &metric.source {
        MetricSource::Resource {
            resource,
            container,
        } => {
            let mut matchers = ctx.pod_matchers();
            match container {
                Some(c) => matchers.push(format!("container={}", string_literal(c))),
                // container="" is the pod-level cgroup total (it would count twice); POD is
                // the pause container of older runtimes.
                None => {
                    matchers.push("container!=\"\"".to_owned());
                    matchers.push("container!=\"POD\"".to_owned());
                }
            }
            let matchers = matchers.join(",");
            match resource {
                ResourceName::Cpu => Ok(format!(
                    "sum(rate(container_cpu_usage_seconds_total{{{matchers}}}[5m]))"
                )),
                ResourceName::Memory => Ok(format!(
                    "sum(container_memory_working_set_bytes{{{matchers}}})"
                )),
                ResourceName::Other(other) => {
                    Err(format!("no default history query for resource {other}"))
                }
            }
        }
        MetricSource::Pods { metric } => {
            let mut matchers = ctx.pod_matchers();
            matchers.extend(label_matchers(metric.selector.as_ref())?);
            Ok(format!("sum({})", selector_expr(&metric.name, matchers)))
        }
        MetricSource::External { metric } => {
            let matchers = label_matchers(metric.selector.as_ref())?;
            Ok(format!("sum({})", selector_expr(&metric.name, matchers)))
        }
        MetricSource::Prometheus { history_query, .. } => Ok(history_query.clone()),
        MetricSource::Object { .. } => {
            Err("Object metrics have no default history query".to_owned())
        }
        // The formula's value over time would need each input's history evaluated point by
        // point; a `historyQueries` entry (`formula.<name>`) can write it as one query.
        MetricSource::Formula { .. } => {
            Err("Formula metrics have no default history query".to_owned())
        }
        MetricSource::Unknown { type_ } => Err(format!("{type_} metrics cannot be predicted")),
    }
}

/// Fills an override template. Placeholders: `${namespace}`, `${target_kind}`,
/// `${target_name}`, `${pod_regex}` (the target's pod-name regex, escaped for a PromQL
/// string), `${metric_name}`, `${label_matchers}` (the metric's selector as matchers,
/// comma-separated, or empty).
pub fn fill_template(
    template: &str,
    metric: &Metric,
    ctx: &QueryContext<'_>,
) -> Result<String, String> {
    let quoted = |s: &str| {
        let lit = string_literal(s);
        lit[1..lit.len() - 1].to_owned()
    };
    let identifier: Option<&MetricIdentifier> = match &metric.source {
        MetricSource::Pods { metric }
        | MetricSource::External { metric }
        | MetricSource::Object { metric, .. } => Some(metric),
        _ => None,
    };
    let mut out = template
        .replace("${namespace}", &quoted(ctx.namespace))
        .replace("${target_kind}", &quoted(&ctx.target.kind))
        .replace("${target_name}", &quoted(&ctx.target.name))
        .replace(
            "${pod_regex}",
            &quoted(&pod_name_regex(&ctx.target.kind, &ctx.target.name)),
        );
    if out.contains("${metric_name}") {
        let name = match (&metric.source, identifier) {
            (_, Some(id)) => id.name.clone(),
            (MetricSource::Prometheus { name, .. } | MetricSource::Formula { name, .. }, _) => {
                name.clone()
            }
            (MetricSource::Resource { resource, .. }, _) => resource.as_str().to_owned(),
            _ => String::new(),
        };
        out = out.replace("${metric_name}", &name);
    }
    if out.contains("${label_matchers}") {
        let matchers = label_matchers(identifier.and_then(|m| m.selector.as_ref()))?;
        out = out.replace("${label_matchers}", &matchers.join(","));
    }
    Ok(out)
}

/// Where a metric's history query came from, for the explanation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryOrigin {
    /// `spec.prediction.historyQueries`.
    Spec,
    /// The controller's per-identifier override.
    Controller,
    /// The built-in default.
    Default,
}

/// The history query of the metric at `index` of `autoscaler`: the object's own
/// `spec.prediction.historyQueries[<identifier>]`, else the controller's override template
/// for the identifier, else the default. `Err` says why there is none.
pub fn history_query(
    autoscaler: &Autoscaler,
    metric: &Metric,
    controller_overrides: &BTreeMap<String, String>,
) -> Result<(String, QueryOrigin), String> {
    let id = metric.identifier();
    let ctx = QueryContext {
        namespace: &autoscaler.namespace,
        target: &autoscaler.target,
    };
    let from_spec = autoscaler
        .prediction
        .as_ref()
        .and_then(|p| p.history_queries.get(&id));
    if let Some(q) = from_spec {
        return Ok((q.clone(), QueryOrigin::Spec));
    }
    if let Some(t) = controller_overrides.get(&id) {
        return Ok((fill_template(t, metric, &ctx)?, QueryOrigin::Controller));
    }
    default_history_query(metric, &ctx)
        .map(|q| (q, QueryOrigin::Default))
        .map_err(|e| format!("{e}; set spec.prediction.historyQueries[{id:?}]"))
}

/// The placeholders [`fill_template`] knows.
pub const PLACEHOLDERS: [&str; 6] = [
    "namespace",
    "target_kind",
    "target_name",
    "pod_regex",
    "metric_name",
    "label_matchers",
];

/// The kinds of metric identifier, as `Metric::identifier()` writes them
/// (`resource.cpu`, `container-resource.app.cpu`, `pods.http_requests`, ...).
const IDENTIFIER_KINDS: [&str; 6] = [
    "resource.",
    "container-resource.",
    "pods.",
    "external.",
    "object.",
    "prometheus.",
];

/// Reads one controller override, `IDENTIFIER=TEMPLATE` (the `--history-query` flag): the
/// identifier must be one a metric can have, and the template non-empty with only known
/// placeholders, so that a typo fails at start rather than as a query Prometheus rejects
/// hours later.
pub fn parse_override(text: &str) -> Result<(String, String), String> {
    let Some((id, template)) = text.split_once('=') else {
        return Err(format!(
            "{text:?} is not IDENTIFIER=PROMQL (e.g. resource.cpu=sum(rate(...)))"
        ));
    };
    let id = id.trim();
    let template = template.trim();
    let known_kind = IDENTIFIER_KINDS
        .iter()
        .any(|k| id.strip_prefix(k).is_some_and(|rest| !rest.is_empty()));
    if !known_kind || id.chars().any(char::is_whitespace) {
        return Err(format!(
            "{id:?} is not a metric identifier: write resource.<name>, \
             container-resource.<container>.<name>, pods.<metric>, external.<metric>, \
             object.<metric> or prometheus.<name>"
        ));
    }
    if template.is_empty() {
        return Err(format!("the query for {id} is empty"));
    }
    let mut rest = template;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("the query for {id} has an unclosed \"${{\""));
        };
        let name = &after[..end];
        if !PLACEHOLDERS.contains(&name) {
            return Err(format!(
                "the query for {id} uses ${{{name}}}; the placeholders are {}",
                PLACEHOLDERS.map(|p| format!("${{{p}}}")).join(", ")
            ));
        }
        rest = &after[end + 1..];
    }
    Ok((id.to_owned(), template.to_owned()))
}

/// Reads every `--history-query` into the map `ForecastSettings::query_overrides` takes; an
/// identifier given twice is an error, not a silent last-one-wins.
pub fn parse_overrides<S: AsRef<str>>(
    items: impl IntoIterator<Item = S>,
) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for item in items {
        let (id, template) = parse_override(item.as_ref())?;
        if out.contains_key(&id) {
            return Err(format!("{id} is given twice"));
        }
        out.insert(id, template);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use foresight_api::hpa::LabelSelectorRequirement;
    use foresight_core::autoscaler::{ControllerConfig, Target};

    fn target(kind: &str, name: &str) -> CrossVersionObjectReference {
        CrossVersionObjectReference {
            kind: kind.to_owned(),
            name: name.to_owned(),
            api_version: Some("apps/v1".to_owned()),
        }
    }

    /// A metric with `source`; only the source matters to the queries.
    fn metric(source: MetricSource) -> Metric {
        let mut m = Metric::compile(&foresight_api::hpa::MetricSpec::default());
        m.source = source;
        m.target = Target::AverageValue(1000);
        m
    }

    fn resource(name: &str, container: Option<&str>) -> Metric {
        metric(MetricSource::Resource {
            resource: ResourceName::from(name),
            container: container.map(str::to_owned),
        })
    }

    #[test]
    fn default_cpu_and_memory_queries_select_the_targets_pods() {
        let t = target("Deployment", "web.v2");
        let ctx = QueryContext {
            namespace: "prod",
            target: &t,
        };
        assert_eq!(
            default_history_query(&resource("cpu", None), &ctx).unwrap(),
            r#"sum(rate(container_cpu_usage_seconds_total{namespace="prod",pod=~"web\\.v2-[a-z0-9]+-[a-z0-9]{5}",container!="",container!="POD"}[5m]))"#
        );
        assert_eq!(
            default_history_query(&resource("memory", Some("app")), &ctx).unwrap(),
            r#"sum(container_memory_working_set_bytes{namespace="prod",pod=~"web\\.v2-[a-z0-9]+-[a-z0-9]{5}",container="app"})"#
        );
        assert!(
            default_history_query(&resource("ephemeral-storage", None), &ctx)
                .unwrap_err()
                .contains("ephemeral-storage")
        );
    }

    #[test]
    fn pod_regexes_follow_the_target_kind() {
        assert_eq!(pod_name_regex("StatefulSet", "db"), "db-[0-9]+");
        assert_eq!(pod_name_regex("ReplicaSet", "rs"), "rs-[a-z0-9]{5}");
        assert_eq!(pod_name_regex("DaemonSet", "ds"), "ds-[a-z0-9]{5}");
        assert_eq!(pod_name_regex("Rollout", "r"), "r-.*");
    }

    #[test]
    fn pods_and_external_metrics_use_their_selectors() {
        let t = target("StatefulSet", "db");
        let ctx = QueryContext {
            namespace: "ns",
            target: &t,
        };
        let selector = LabelSelector {
            match_labels: Some([("queue".to_owned(), "jobs \"a\"".to_owned())].into()),
            match_expressions: Some(vec![
                LabelSelectorRequirement {
                    key: "env".to_owned(),
                    operator: "In".to_owned(),
                    values: Some(vec!["prod".to_owned(), "pre.prod".to_owned()]),
                },
                LabelSelectorRequirement {
                    key: "canary".to_owned(),
                    operator: "DoesNotExist".to_owned(),
                    values: None,
                },
            ]),
        };
        let pods = metric(MetricSource::Pods {
            metric: MetricIdentifier {
                name: "http_requests".to_owned(),
                selector: None,
            },
        });
        assert_eq!(
            default_history_query(&pods, &ctx).unwrap(),
            r#"sum(http_requests{namespace="ns",pod=~"db-[0-9]+"})"#
        );
        let external = metric(MetricSource::External {
            metric: MetricIdentifier {
                name: "queue_depth".to_owned(),
                selector: Some(selector),
            },
        });
        assert_eq!(
            default_history_query(&external, &ctx).unwrap(),
            r#"sum(queue_depth{queue="jobs \"a\"",env=~"prod|pre\\.prod",canary=""})"#
        );
        let odd_name = metric(MetricSource::External {
            metric: MetricIdentifier {
                name: "queue/depth".to_owned(),
                selector: None,
            },
        });
        assert_eq!(
            default_history_query(&odd_name, &ctx).unwrap(),
            r#"sum({__name__="queue/depth"})"#
        );
        let bad_key = metric(MetricSource::External {
            metric: MetricIdentifier {
                name: "q".to_owned(),
                selector: Some(LabelSelector {
                    match_labels: Some(
                        [("app.kubernetes.io/name".to_owned(), "x".to_owned())].into(),
                    ),
                    match_expressions: None,
                }),
            },
        });
        assert!(default_history_query(&bad_key, &ctx)
            .unwrap_err()
            .contains("app.kubernetes.io/name"));
    }

    #[test]
    fn object_and_unknown_metrics_have_no_default() {
        let t = target("Deployment", "web");
        let ctx = QueryContext {
            namespace: "ns",
            target: &t,
        };
        let object = metric(MetricSource::Object {
            metric: MetricIdentifier::default(),
            described_object: t.clone(),
        });
        assert!(default_history_query(&object, &ctx).is_err());
        let unknown = metric(MetricSource::Unknown {
            type_: "Foo".to_owned(),
        });
        assert!(default_history_query(&unknown, &ctx).is_err());
    }

    fn autoscaler(yaml_metrics: serde_json::Value, history: serde_json::Value) -> Autoscaler {
        let spec: foresight_api::EffectiveHorizontalPodAutoscalerSpec =
            serde_json::from_value(serde_json::json!({
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "maxReplicas": 10,
                "metrics": yaml_metrics,
                "prediction": {
                    "predictionAlgorithm": {"algorithmType": "dsp"},
                    "historyQueries": history
                }
            }))
            .unwrap();
        Autoscaler::new("shop", "web", &spec, &ControllerConfig::default()).unwrap()
    }

    #[test]
    fn the_spec_beats_the_controller_which_beats_the_default() {
        let metrics = serde_json::json!([
            {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}},
            {"type": "Resource", "resource": {"name": "memory", "target": {"type": "Utilization", "averageUtilization": 50}}},
            {"type": "Prometheus", "prometheus": {"name": "rps", "query": "sum(rate(req[1m]))", "target": {"type": "Value", "value": "100"}}}
        ]);
        let a = autoscaler(metrics, serde_json::json!({"resource.cpu": "my_cpu"}));
        let overrides: BTreeMap<String, String> = [
            ("resource.cpu".to_owned(), "ignored".to_owned()),
            (
                "resource.memory".to_owned(),
                r#"sum(mem{namespace="${namespace}",pod=~"${pod_regex}"}) # ${target_kind}/${target_name}"#
                    .to_owned(),
            ),
        ]
        .into();
        let cpu: &Metric = &a.metrics[0];
        assert_eq!(
            history_query(&a, cpu, &overrides).unwrap(),
            ("my_cpu".to_owned(), QueryOrigin::Spec)
        );
        assert_eq!(
            history_query(&a, &a.metrics[1], &overrides).unwrap(),
            (
                r#"sum(mem{namespace="shop",pod=~"web-[a-z0-9]+-[a-z0-9]{5}"}) # Deployment/web"#
                    .to_owned(),
                QueryOrigin::Controller
            )
        );
        assert_eq!(
            history_query(&a, &a.metrics[2], &BTreeMap::new()).unwrap(),
            ("sum(rate(req[1m]))".to_owned(), QueryOrigin::Default)
        );
    }

    #[test]
    fn a_missing_query_says_how_to_supply_one() {
        let metrics = serde_json::json!([
            {"type": "Object", "object": {"describedObject": {"kind": "Ingress", "name": "main", "apiVersion": "networking.k8s.io/v1"},
             "metric": {"name": "hits"}, "target": {"type": "Value", "value": "10"}}}
        ]);
        let a = autoscaler(metrics, serde_json::json!({}));
        let err = history_query(&a, &a.metrics[0], &BTreeMap::new()).unwrap_err();
        assert!(err.contains("historyQueries[\"object.hits\"]"), "{err}");
    }

    #[test]
    fn templates_fill_metric_names_and_matchers() {
        let t = target("Deployment", "web");
        let ctx = QueryContext {
            namespace: "ns",
            target: &t,
        };
        let external = metric(MetricSource::External {
            metric: MetricIdentifier {
                name: "jobs".to_owned(),
                selector: Some(LabelSelector {
                    match_labels: Some([("queue".to_owned(), "a".to_owned())].into()),
                    match_expressions: None,
                }),
            },
        });
        assert_eq!(
            fill_template("max(${metric_name}{${label_matchers}})", &external, &ctx).unwrap(),
            r#"max(jobs{queue="a"})"#
        );
    }

    #[test]
    fn overrides_are_identifier_and_template_with_known_placeholders() {
        let (id, q) = parse_override(
            r#"resource.cpu = sum(cpu:rate5m{namespace="${namespace}",pod=~"${pod_regex}"})"#,
        )
        .unwrap();
        assert_eq!(id, "resource.cpu");
        assert_eq!(
            q,
            r#"sum(cpu:rate5m{namespace="${namespace}",pod=~"${pod_regex}"})"#
        );
        // Only the first `=` separates: PromQL matchers keep theirs.
        let (id, q) = parse_override(r#"external.jobs=sum(jobs{queue="a"})"#).unwrap();
        assert_eq!(
            (id.as_str(), q.as_str()),
            ("external.jobs", r#"sum(jobs{queue="a"})"#)
        );

        let err = |s: &str| parse_override(s).unwrap_err();
        assert!(err("resource.cpu").contains("IDENTIFIER=PROMQL"));
        assert!(err("cpu=sum(x)").contains("\"cpu\" is not a metric identifier"));
        assert!(err("resource.=sum(x)").contains("not a metric identifier"));
        assert!(err("resource.cpu=  ").contains("empty"));
        let e = err("resource.cpu=sum(x{ns=\"${namespaces}\"})");
        assert!(
            e.contains("${namespaces}") && e.contains("${namespace}"),
            "{e}"
        );
        assert!(err("resource.cpu=sum(x) + ${namespace").contains("unclosed"));
    }

    #[test]
    fn an_override_given_twice_is_an_error() {
        let map = parse_overrides(["resource.cpu=a", "resource.memory=b"]).unwrap();
        assert_eq!(map.len(), 2);
        let e = parse_overrides(["resource.cpu=a", "resource.cpu=b"]).unwrap_err();
        assert_eq!(e, "resource.cpu is given twice");
        assert!(parse_overrides(Vec::<String>::new()).unwrap().is_empty());
    }

    #[test]
    fn every_placeholder_the_parser_accepts_is_filled() {
        let template: String = PLACEHOLDERS.iter().map(|p| format!("${{{p}}} ")).collect();
        let (_, template) = parse_override(&format!("pods.http_requests={template}")).unwrap();
        let metric = metric(MetricSource::Pods {
            metric: MetricIdentifier {
                name: "http_requests".to_owned(),
                selector: None,
            },
        });
        let t = target("Deployment", "web");
        let ctx = QueryContext {
            namespace: "shop",
            target: &t,
        };
        let filled = fill_template(&template, &metric, &ctx).unwrap();
        assert!(!filled.contains("${"), "{filled}");
    }
}

//! `foresight explain NAME` and `foresight explain -A`: what the controller decided for live
//! autoscalers, read from their status and events (no decision is recomputed here: this is
//! the record the controller wrote).

use std::process::ExitCode;

use anyhow::Context as _;
use foresight_api::status::ConditionStatus;
use foresight_api::EffectiveHorizontalPodAutoscaler;
use foresight_core::autoscaler::{Autoscaler, ControllerConfig};
use foresight_core::decision::{Event, EventType};
use foresight_core::explain::{render, table};
use k8s_openapi::api::events::v1::Event as KubeEvent;
use kube::api::ListParams;
use kube::{Api, Client};

use super::explain::ExplainArgs;

/// How many of the latest events `explain NAME` shows.
const RECENT_EVENTS: usize = 10;

/// Runs the live forms of `foresight explain`.
pub fn explain(args: &ExplainArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let config =
            super::kubeconfig::load(args.kubeconfig.as_deref(), args.context.as_deref()).await?;
        let namespace = args
            .namespace
            .clone()
            .unwrap_or_else(|| config.default_namespace.clone());
        let client =
            foresight_k8s::client::build(config).context("building the Kubernetes client")?;
        match &args.name {
            Some(name) if !args.all_namespaces => one(&client, &namespace, name, args.json).await,
            _ => summary(&client, args.json).await,
        }
    })
}

async fn one(client: &Client, ns: &str, name: &str, json: bool) -> anyhow::Result<ExitCode> {
    let api: Api<EffectiveHorizontalPodAutoscaler> = Api::namespaced(client.clone(), ns);
    let obj = match api.get_opt(name).await {
        Ok(Some(o)) => o,
        Ok(None) => {
            anyhow::bail!("no EffectiveHorizontalPodAutoscaler {name:?} in namespace {ns:?}")
        }
        Err(e) => return Err(e).with_context(|| format!("reading {ns}/{name}")),
    };
    let status = obj.status.clone().unwrap_or_default();
    let events = recent_events(client, ns, name).await?;
    if json {
        let out = serde_json::json!({
            "namespace": ns,
            "name": name,
            "decision": status.last_decision,
            "conditions": status.conditions,
            "events": events.iter().map(|e| serde_json::json!({
                "type": e.type_.as_str(), "reason": e.reason, "message": e.message,
            })).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    let Some(record) = status.last_decision.clone() else {
        println!("{ns}/{name}: no decision recorded yet (is the controller running and allowed to write status?)");
        return Ok(ExitCode::SUCCESS);
    };
    match Autoscaler::new(ns, name, &obj.spec, &ControllerConfig::default()) {
        Ok(autoscaler) => {
            let scale_to = record.rescale.then_some(record.desired_replicas);
            print!(
                "{}",
                render(&autoscaler, &record, &status, &events, scale_to)
            );
        }
        // The last decision was made for an older spec; the current one does not compile.
        Err(errors) => {
            println!("{ns}/{name}: the spec is invalid now:");
            for e in errors {
                println!("  {e}");
            }
            println!("last decision ({}): {}", record.time, record.summary);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The latest events regarding the autoscaler, oldest first, as the decision's events.
async fn recent_events(client: &Client, ns: &str, name: &str) -> anyhow::Result<Vec<Event>> {
    let api: Api<KubeEvent> = Api::namespaced(client.clone(), ns);
    let selector = format!("regarding.kind=EffectiveHorizontalPodAutoscaler,regarding.name={name}");
    let mut events = api
        .list(&ListParams::default().fields(&selector))
        .await
        .with_context(|| format!("listing the events of {ns}/{name}"))?
        .items;
    events.sort_by_key(|e| e.event_time.as_ref().map(|t| t.0));
    let skip = events.len().saturating_sub(RECENT_EVENTS);
    Ok(events
        .into_iter()
        .skip(skip)
        .map(|e| Event {
            type_: if e.type_.as_deref() == Some("Warning") {
                EventType::Warning
            } else {
                EventType::Normal
            },
            reason: e.reason.unwrap_or_default(),
            message: e.note.unwrap_or_default(),
        })
        .collect())
}

async fn summary(client: &Client, json: bool) -> anyhow::Result<ExitCode> {
    let api: Api<EffectiveHorizontalPodAutoscaler> = Api::all(client.clone());
    let mut items = api
        .list(&ListParams::default())
        .await
        .context("listing EffectiveHorizontalPodAutoscalers")?
        .items;
    items.sort_by(|a, b| {
        (&a.metadata.namespace, &a.metadata.name).cmp(&(&b.metadata.namespace, &b.metadata.name))
    });
    let rows: Vec<Vec<String>> = items
        .iter()
        .map(|o| {
            let status = o.status.clone().unwrap_or_default();
            let dash = || "-".to_owned();
            let ready = status
                .conditions
                .iter()
                .find(|c| c.type_ == "Ready")
                .map(|c| match c.status {
                    ConditionStatus::True => "True".to_owned(),
                    ConditionStatus::False => format!("False ({})", c.reason),
                    ConditionStatus::Unknown => "Unknown".to_owned(),
                })
                .unwrap_or_else(dash);
            vec![
                o.metadata.namespace.clone().unwrap_or_default(),
                o.metadata.name.clone().unwrap_or_default(),
                format!(
                    "{}/{}",
                    o.spec.scale_target_ref.kind, o.spec.scale_target_ref.name
                ),
                format!("{:?}", o.spec.strategy()),
                o.spec.min_replicas_or_default().to_string(),
                o.spec.max_replicas.to_string(),
                status
                    .current_replicas
                    .map(|n| n.to_string())
                    .unwrap_or_else(dash),
                status
                    .desired_replicas
                    .map(|n| n.to_string())
                    .unwrap_or_else(dash),
                ready,
                status
                    .last_decision
                    .as_ref()
                    .map(|d| d.summary.clone())
                    .unwrap_or_else(dash),
            ]
        })
        .collect();
    if json {
        let keys = [
            "namespace",
            "name",
            "target",
            "strategy",
            "min",
            "max",
            "current",
            "desired",
            "ready",
            "lastDecision",
        ];
        let out: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                keys.iter()
                    .zip(r)
                    .map(|(k, v)| (k.to_string(), serde_json::json!(v)))
                    .collect()
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        println!("no EffectiveHorizontalPodAutoscalers in any namespace");
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = String::new();
    table(
        &mut out,
        &[
            "NAMESPACE",
            "NAME",
            "TARGET",
            "STRATEGY",
            "MIN",
            "MAX",
            "CURRENT",
            "DESIRED",
            "READY",
            "LAST DECISION",
        ],
        &rows,
    );
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}

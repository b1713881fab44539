//! The explanation of a decision as a short, readable table.

use std::fmt::Write;

use foresight_api::status::{DecisionRecord, EffectiveHorizontalPodAutoscalerStatus};

use crate::autoscaler::Autoscaler;
use crate::decision::Event;

/// Lays out rows as left-aligned columns separated by two spaces, as kubectl does.
pub fn table(out: &mut String, header: &[&str], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(cell.chars().count());
            }
        }
    }
    let line = |out: &mut String, cells: &mut dyn Iterator<Item = &str>| {
        let mut s = String::new();
        for (i, c) in cells.enumerate() {
            let pad = widths.get(i).copied().unwrap_or(0);
            let _ = write!(s, "{c:<pad$}  ");
        }
        let _ = writeln!(out, "{}", s.trim_end());
    };
    line(out, &mut header.iter().copied());
    for row in rows {
        line(out, &mut row.iter().map(String::as_str));
    }
}

/// Renders the decision: what was decided and why, each source's proposal, the limits that
/// shaped the result, the conditions, and the events.
pub fn render(
    autoscaler: &Autoscaler,
    record: &DecisionRecord,
    status: &EffectiveHorizontalPodAutoscalerStatus,
    events: &[Event],
    scale_to: Option<i32>,
) -> String {
    let mut out = String::new();
    let t = &autoscaler.target;
    let _ = writeln!(
        out,
        "{}/{} -> {} {}   at {}   strategy {}",
        autoscaler.namespace, autoscaler.name, t.kind, t.name, record.time, record.strategy
    );
    let _ = writeln!(out, "{}", record.summary);
    let action = match scale_to {
        Some(n) => format!("write {n} replicas to the target's scale"),
        None => "leave the target's scale unchanged".to_owned(),
    };
    let _ = writeln!(
        out,
        "current {}  recommendation {}  desired {}  bounds [{}, {}]  -> {action}",
        record.current_replicas,
        record
            .recommendation
            .map(|r| r.to_string())
            .unwrap_or_else(|| "-".to_owned()),
        record.desired_replicas,
        autoscaler.min_replicas,
        autoscaler.max_replicas,
    );
    let dash = || "-".to_owned();
    if !record.proposals.is_empty() {
        out.push('\n');
        let rows: Vec<Vec<String>> = record
            .proposals
            .iter()
            .map(|p| {
                vec![
                    p.source.clone(),
                    p.name.clone(),
                    p.current.clone().unwrap_or_else(dash),
                    p.target.clone().unwrap_or_else(dash),
                    p.replicas.map(|r| r.to_string()).unwrap_or_else(dash),
                    p.error
                        .clone()
                        .or_else(|| p.detail.clone())
                        .unwrap_or_default(),
                ]
            })
            .collect();
        table(
            &mut out,
            &["SOURCE", "NAME", "CURRENT", "TARGET", "PROPOSAL", "NOTE"],
            &rows,
        );
    }
    if !record.limits.is_empty() {
        out.push('\n');
        let rows: Vec<Vec<String>> = record
            .limits
            .iter()
            .map(|l| {
                vec![
                    l.stage.clone(),
                    l.from.to_string(),
                    l.to.to_string(),
                    l.reason.clone(),
                    l.message.clone(),
                ]
            })
            .collect();
        table(&mut out, &["LIMIT", "FROM", "TO", "REASON", "WHY"], &rows);
    }
    if !status.conditions.is_empty() {
        out.push('\n');
        let rows: Vec<Vec<String>> = status
            .conditions
            .iter()
            .map(|c| {
                vec![
                    c.type_.clone(),
                    format!("{:?}", c.status),
                    c.reason.clone(),
                    c.message.clone(),
                ]
            })
            .collect();
        table(
            &mut out,
            &["CONDITION", "STATUS", "REASON", "MESSAGE"],
            &rows,
        );
    }
    if !events.is_empty() {
        out.push('\n');
        let rows: Vec<Vec<String>> = events
            .iter()
            .map(|e| {
                vec![
                    e.type_.as_str().to_owned(),
                    e.reason.clone(),
                    e.message.clone(),
                ]
            })
            .collect();
        table(&mut out, &["EVENT", "REASON", "MESSAGE"], &rows);
    }
    out
}

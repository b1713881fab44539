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
    headline(&mut out, autoscaler, record, scale_to);
    if let Some(p) = &status.operating_point {
        let _ = writeln!(out, "operating point: {}", p.description);
    }
    let dash = || "-".to_owned();
    let proposals = record.proposals.iter().map(|p| {
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
    });
    section(
        &mut out,
        &["SOURCE", "NAME", "CURRENT", "TARGET", "PROPOSAL", "NOTE"],
        proposals,
    );
    let limits = record.limits.iter().map(|l| {
        let (from, to) = (l.from.to_string(), l.to.to_string());
        vec![
            l.stage.clone(),
            from,
            to,
            l.reason.clone(),
            l.message.clone(),
        ]
    });
    section(&mut out, &["LIMIT", "FROM", "TO", "REASON", "WHY"], limits);
    let conditions = status.conditions.iter().map(|c| {
        let state = format!("{:?}", c.status);
        vec![c.type_.clone(), state, c.reason.clone(), c.message.clone()]
    });
    section(
        &mut out,
        &["CONDITION", "STATUS", "REASON", "MESSAGE"],
        conditions,
    );
    let events = events.iter().map(|e| {
        let type_ = e.type_.as_str().to_owned();
        vec![type_, e.reason.clone(), e.message.clone()]
    });
    section(&mut out, &["EVENT", "REASON", "MESSAGE"], events);
    out
}

/// Which autoscaler, when, what it concluded and what it does about it.
fn headline(
    out: &mut String,
    autoscaler: &Autoscaler,
    record: &DecisionRecord,
    scale_to: Option<i32>,
) {
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
    let recommendation = record
        .recommendation
        .map_or_else(|| "-".to_owned(), |r| r.to_string());
    let _ = writeln!(
        out,
        "current {}  recommendation {recommendation}  desired {}  bounds [{}, {}]  -> {action}",
        record.current_replicas,
        record.desired_replicas,
        autoscaler.min_replicas,
        autoscaler.max_replicas,
    );
}

/// A blank line and a table, when there are rows.
fn section(out: &mut String, header: &[&str], rows: impl Iterator<Item = Vec<String>>) {
    let rows: Vec<Vec<String>> = rows.collect();
    if !rows.is_empty() {
        out.push('\n');
        table(out, header, &rows);
    }
}

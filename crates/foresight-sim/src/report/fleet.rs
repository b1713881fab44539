//! The fleet report of `foresight recommend`: one table of every workload, sorted by what the
//! recommendation saves, each row linking to the workload's own simulation report (written
//! beside it by [`super::render`]), and the autoscalers that could not be replayed, with why.

use std::fmt::Write;

use super::svg::escape;

/// One replayed workload's row.
#[derive(Clone, Debug, PartialEq)]
pub struct FleetRow {
    /// `namespace/name`.
    pub workload: String,
    /// The source kind (`HorizontalPodAutoscaler`, `ScaledObject`, ...).
    pub kind: String,
    /// The current policy's replica-hours and under-provisioned minutes.
    pub current: (f64, f64),
    /// The recommendation's.
    pub recommended: (f64, f64),
    /// The share of replica-hours saved, percent.
    pub saving_percent: f64,
    /// Whether the recommendation predicts, and why (not).
    pub prediction: (bool, String),
    /// The workload's own report, relative to the fleet report.
    pub page: Option<String>,
}

/// An autoscaler that was not replayed.
#[derive(Clone, Debug, PartialEq)]
pub struct Unreplayed {
    /// `namespace/name`, or where it was found.
    pub workload: String,
    /// Why.
    pub reason: String,
}

/// The fleet report as one HTML page: rows sorted by saving, the largest first.
pub fn render_fleet(rows: &[FleetRow], unreplayed: &[Unreplayed], source: &str) -> String {
    let mut sorted: Vec<&FleetRow> = rows.iter().collect();
    sorted.sort_by(|a, b| {
        b.saving_percent
            .total_cmp(&a.saving_percent)
            .then_with(|| a.workload.cmp(&b.workload))
    });
    let mut html = String::with_capacity(4096 + 512 * rows.len());
    html.push_str(concat!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        "<title>Foresight recommendations</title><style>",
        include_str!("report.css"),
        "table.fleet td:nth-child(2), table.fleet th:nth-child(2), table.fleet th:last-child \
         { text-align: left; }",
        "</style></head><body>"
    ));
    let (current, recommended) = totals(rows);
    let _ = write!(
        html,
        "<h1>Foresight recommendations</h1><p class=\"lead\">{} workloads replayed from <b>{}</b>: \
         {:.1} replica-hours as they run now, {:.1} with the recommendations at the same risk \
         ({}).</p><p class=\"note\">Each workload's current policy (its autoscaler without \
         prediction) and the recommendation (the same with prediction, at the operating point \
         as short as the current one for the fewest replica-hours) replayed over the recorded \
         history. Sorted by saving; a name opens the workload's charts.</p>",
        rows.len(),
        escape(source),
        current,
        recommended,
        saving_text(current, recommended)
    );
    html.push_str(
        "<table class=\"scores fleet\"><tr><th>workload</th><th>kind</th>\
         <th>replica-h now</th><th>under (min) now</th><th>replica-h recommended</th>\
         <th>under (min) recommended</th><th>saving</th><th>prediction</th></tr>",
    );
    for r in &sorted {
        let name = match &r.page {
            Some(page) => format!("<a href=\"{}\">{}</a>", escape(page), escape(&r.workload)),
            None => escape(&r.workload),
        };
        let _ = write!(
            html,
            "<tr><td>{name}</td><td>{}</td><td>{:.1}</td><td>{:.1}</td><td>{:.1}</td>\
             <td>{:.1}</td><td{}>{:.1}%</td><td style=\"text-align:left\">{}: {}</td></tr>",
            escape(&r.kind),
            r.current.0,
            r.current.1,
            r.recommended.0,
            r.recommended.1,
            if r.saving_percent > 0.0 {
                " class=\"best\""
            } else {
                ""
            },
            r.saving_percent,
            if r.prediction.0 { "kept" } else { "not kept" },
            escape(&r.prediction.1),
        );
    }
    let _ = write!(
        html,
        "<tr><th>fleet</th><th></th><th>{current:.1}</th><th>{:.1}</th><th>{recommended:.1}</th>\
         <th>{:.1}</th><th>{}</th><th></th></tr></table>",
        rows.iter().map(|r| r.current.1).sum::<f64>(),
        rows.iter().map(|r| r.recommended.1).sum::<f64>(),
        saving_text(current, recommended)
    );
    if !unreplayed.is_empty() {
        html.push_str("<h2>Not replayed</h2><ul>");
        for u in unreplayed {
            let _ = write!(
                html,
                "<li><b>{}</b>: {}</li>",
                escape(&u.workload),
                escape(&u.reason)
            );
        }
        html.push_str("</ul>");
    }
    html.push_str("</body></html>\n");
    html
}

/// The fleet's replica-hours now and with the recommendations.
pub fn totals(rows: &[FleetRow]) -> (f64, f64) {
    rows.iter().fold((0.0, 0.0), |(c, r), row| {
        (c + row.current.0, r + row.recommended.0)
    })
}

/// The share saved, as `12.3% saved` (or `no saving`).
pub fn saving_text(current: f64, recommended: f64) -> String {
    match saving_percent(current, recommended) {
        s if s > 0.0 => format!("{s:.1}% saved"),
        _ => "no saving".to_owned(),
    }
}

/// The share of `current` that `recommended` saves, percent (0 when nothing is spent now).
pub fn saving_percent(current: f64, recommended: f64) -> f64 {
    if current > 0.0 {
        (current - recommended) / current * 100.0
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, saving: f64) -> FleetRow {
        FleetRow {
            workload: name.to_owned(),
            kind: "HorizontalPodAutoscaler".to_owned(),
            current: (100.0, 5.0),
            recommended: (100.0 - saving, 4.0),
            saving_percent: saving,
            prediction: (saving > 0.0, "why".to_owned()),
            page: Some(format!("w/{name}.html")),
        }
    }

    #[test]
    fn rows_are_sorted_by_saving_and_link_to_their_pages() {
        let html = render_fleet(
            &[row("a/low", 1.0), row("a/high", 20.0)],
            &[Unreplayed {
                workload: "a/mem".to_owned(),
                reason: "memory <only>".to_owned(),
            }],
            "http://prom",
        );
        let high = html.find("a/high").unwrap();
        let low = html.find("a/low").unwrap();
        assert!(high < low);
        assert!(html.contains("<a href=\"w/a/high.html\">a/high</a>"));
        assert!(html.contains("memory &lt;only&gt;"));
        assert!(html.contains("10.5% saved"), "fleet total: 21 of 200");
    }
}

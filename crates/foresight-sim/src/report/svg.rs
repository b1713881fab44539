//! A small SVG chart: a time axis, a value axis with round ticks, and the shapes the report
//! draws on them (lines, steps, shaded periods, markers with hover text). Hand-rolled rather
//! than plotters because the report needs hover titles on individual marks and shaded time
//! spans, and because a few hundred lines of plain SVG text are easy to keep deterministic.

use std::fmt::Write;

use super::time_axis::{time_ticks, TimeTick};

/// Escapes text for SVG/HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The narrowest a shaded period is drawn, pixels.
pub const MIN_PERIOD_PX: f64 = 4.0;

/// A chart under construction.
pub struct Chart {
    width: f64,
    height: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    t0: i64,
    t1: i64,
    y_max: f64,
    body: String,
    legend: Vec<(String, String, bool)>,
}

/// Round tick values from 0 to at least `max`: steps of 1, 2 or 5 × 10ⁿ, about `count` of them.
pub fn nice_ticks(max: f64, count: usize) -> Vec<f64> {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let rough = max / count.max(1) as f64;
    let magnitude = 10f64.powf(rough.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= rough)
        .unwrap_or(10.0 * magnitude);
    let mut ticks = Vec::new();
    let mut v = 0.0;
    while v < max + step * 0.999 && ticks.len() < 100 {
        ticks.push(v);
        v += step;
    }
    ticks
}

/// A tick value as text: no decimals for whole numbers, else up to two.
fn tick_label(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

impl Chart {
    /// A chart `width` × `height` pixels over `[t0, t1)` (Unix seconds) and values from 0 to
    /// at least `y_max`.
    pub fn new(width: f64, height: f64, t0: i64, t1: i64, y_max: f64) -> Chart {
        let ticks = nice_ticks(y_max, 5);
        let y_max = ticks.last().copied().unwrap_or(1.0).max(f64::MIN_POSITIVE);
        Chart {
            width,
            height,
            left: 64.0,
            right: 16.0,
            top: 28.0,
            bottom: 42.0,
            t0,
            t1: t1.max(t0 + 1),
            y_max,
            body: String::new(),
            legend: Vec::new(),
        }
    }

    /// The x pixel of a time.
    pub fn x(&self, t: i64) -> f64 {
        let plot = self.width - self.left - self.right;
        self.left + (t - self.t0) as f64 / (self.t1 - self.t0) as f64 * plot
    }

    /// The y pixel of a value (clamped to the plot).
    pub fn y(&self, v: f64) -> f64 {
        let plot = self.height - self.top - self.bottom;
        let v = if v.is_finite() {
            v.clamp(0.0, self.y_max)
        } else {
            0.0
        };
        self.top + plot - v / self.y_max * plot
    }

    fn plot_bottom(&self) -> f64 {
        self.height - self.bottom
    }

    /// Shades `[a, b)` periods across the whole plot height (or the top `band` pixels).
    pub fn periods(
        &mut self,
        periods: &[(i64, i64)],
        class: &str,
        band: Option<f64>,
        titles: Option<&[String]>,
    ) {
        let (y, h) = match band {
            Some(b) => (self.top, b),
            None => (self.top, self.plot_bottom() - self.top),
        };
        let _ = write!(self.body, r#"<g class="{class}">"#);
        for (i, &(a, b)) in periods.iter().enumerate() {
            let mut x0 = self.x(a.max(self.t0));
            let x1 = self.x(b.min(self.t1));
            // A minute in a week is a tenth of a pixel: short periods are widened, about
            // their middle, to a band that can be seen and hovered at any zoom.
            let mut w = x1 - x0;
            if w < MIN_PERIOD_PX {
                x0 -= (MIN_PERIOD_PX - w) / 2.0;
                w = MIN_PERIOD_PX;
            }
            match titles.and_then(|t| t.get(i)) {
                Some(title) => {
                    let _ = write!(
                        self.body,
                        r#"<rect x="{x0:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}"><title>{}</title></rect>"#,
                        escape(title)
                    );
                }
                None => {
                    let _ = write!(
                        self.body,
                        r#"<rect x="{x0:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}"/>"#
                    );
                }
            }
        }
        self.body.push_str("</g>");
    }

    /// A filled area under `values` (one per bucket of `bucket` seconds from `start`).
    pub fn area(&mut self, start: i64, bucket: i64, values: &[f64], class: &str) {
        if values.is_empty() {
            return;
        }
        let mut d = format!("M{:.1} {:.1}", self.x(start), self.plot_bottom());
        for (i, v) in values.iter().enumerate() {
            let t = start + i as i64 * bucket + bucket / 2;
            let _ = write!(d, "L{:.1} {:.1}", self.x(t), self.y(*v));
        }
        let end = start + values.len() as i64 * bucket;
        let _ = write!(d, "L{:.1} {:.1}Z", self.x(end), self.plot_bottom());
        let _ = write!(self.body, r#"<path class="{class}" d="{d}"/>"#);
    }

    /// A line through `values` at bucket centres; `None` values break the line.
    pub fn line(
        &mut self,
        start: i64,
        bucket: i64,
        values: &[Option<f64>],
        class: &str,
        style: &str,
    ) {
        let mut d = String::new();
        let mut pen_down = false;
        for (i, v) in values.iter().enumerate() {
            let t = start + i as i64 * bucket + bucket / 2;
            match v {
                Some(v) => {
                    let cmd = if pen_down { 'L' } else { 'M' };
                    let _ = write!(d, "{cmd}{:.1} {:.1}", self.x(t), self.y(*v));
                    pen_down = true;
                }
                None => pen_down = false,
            }
        }
        if !d.is_empty() {
            let _ = write!(
                self.body,
                r#"<path class="{class}" style="{style}" d="{d}"/>"#
            );
        }
    }

    /// A step line: each value holds across its bucket.
    pub fn steps(&mut self, start: i64, bucket: i64, values: &[f64], class: &str, style: &str) {
        let Some(first) = values.first() else { return };
        let mut d = format!("M{:.1} {:.1}", self.x(start), self.y(*first));
        let mut last_y = self.y(*first);
        for (i, v) in values.iter().enumerate().skip(1) {
            let x = self.x(start + i as i64 * bucket);
            let y = self.y(*v);
            if (y - last_y).abs() > 0.05 {
                let _ = write!(d, "H{x:.1}V{y:.1}");
                last_y = y;
            }
        }
        let end = start + values.len() as i64 * bucket;
        let _ = write!(d, "H{:.1}", self.x(end));
        let _ = write!(
            self.body,
            r#"<path class="{class}" style="{style}" d="{d}"/>"#
        );
    }

    /// Markers at `(time, value)` with hover text; `shape` is `circle` or `triangle`.
    pub fn markers(
        &mut self,
        points: &[(i64, f64, String)],
        class: &str,
        shape: &str,
        style: &str,
    ) {
        let _ = write!(self.body, r#"<g class="{class}" style="{style}">"#);
        for (t, v, title) in points {
            let (x, y) = (self.x(*t), self.y(*v));
            let title = escape(title);
            if shape == "triangle" {
                let _ = write!(
                    self.body,
                    r#"<path d="M{:.1} {:.1}l5 -9h-10z"><title>{title}</title></path>"#,
                    x,
                    y - 1.0
                );
            } else {
                let _ = write!(
                    self.body,
                    r#"<circle cx="{x:.1}" cy="{y:.1}" r="3"><title>{title}</title></circle>"#
                );
            }
        }
        self.body.push_str("</g>");
    }

    /// Adds a legend entry: a swatch in `style` (stroke or fill) and `label`.
    pub fn legend(&mut self, label: &str, style: &str, filled: bool) {
        self.legend
            .push((label.to_owned(), style.to_owned(), filled));
    }

    /// The finished SVG, with axes labelled in `tz` and the value axis titled `y_title`.
    pub fn finish(self, id: &str, title: &str, y_title: &str, tz: &jiff::tz::TimeZone) -> String {
        let mut s = String::new();
        let (w, h) = (self.width, self.height);
        let _ = write!(
            s,
            r#"<svg class="chart" id="{id}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{}">"#,
            escape(title)
        );
        let _ = write!(s, "<title>{}</title>", escape(title));
        let (left, right, bottom) = (self.left, self.width - self.right, self.plot_bottom());
        // Value grid and labels.
        s.push_str(r#"<g class="grid">"#);
        for v in nice_ticks(self.y_max, 5) {
            let y = self.y(v);
            let _ = write!(
                s,
                r#"<line x1="{left:.1}" x2="{right:.1}" y1="{y:.1}" y2="{y:.1}"/><text class="ylabel" x="{:.1}" y="{:.1}">{}</text>"#,
                left - 6.0,
                y + 4.0,
                tick_label(v)
            );
        }
        // Time grid and labels.
        for TimeTick { time, label, major } in
            time_ticks(self.t0, self.t1, tz, self.width - self.left - self.right)
        {
            let x = self.x(time);
            let class = if major { "major" } else { "minor" };
            let _ = write!(
                s,
                r#"<line class="{class}" x1="{x:.1}" x2="{x:.1}" y1="{:.1}" y2="{bottom:.1}"/>"#,
                self.top
            );
            if let Some(label) = label {
                let _ = write!(
                    s,
                    r#"<text class="xlabel {class}" x="{x:.1}" y="{:.1}">{}</text>"#,
                    bottom + 16.0,
                    escape(&label)
                );
            }
        }
        s.push_str("</g>");
        s.push_str(&self.body);
        // Axes.
        let _ = write!(
            s,
            r#"<path class="axis" d="M{left:.1} {:.1}V{bottom:.1}H{right:.1}"/>"#,
            self.top
        );
        let _ = write!(
            s,
            r#"<text class="axis-title" transform="translate(14 {:.1}) rotate(-90)">{}</text>"#,
            (self.top + bottom) / 2.0,
            escape(y_title)
        );
        let _ = write!(
            s,
            r#"<text class="axis-title x" x="{:.1}" y="{:.1}">time ({})</text>"#,
            (left + right) / 2.0,
            h - 6.0,
            escape(tz.iana_name().unwrap_or("UTC"))
        );
        // Legend, left to right above the plot.
        let mut x = left;
        s.push_str(r#"<g class="legend">"#);
        for (label, style, filled) in &self.legend {
            if *filled {
                let _ = write!(
                    s,
                    r#"<rect x="{x:.1}" y="8" width="14" height="10" style="{style}"/>"#
                );
            } else {
                let _ = write!(
                    s,
                    r#"<line x1="{x:.1}" x2="{:.1}" y1="13" y2="13" style="{style}"/>"#,
                    x + 18.0
                );
            }
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="17">{}</text>"#,
                x + 22.0,
                escape(label)
            );
            x += 30.0 + 6.5 * label.chars().count() as f64;
        }
        s.push_str("</g></svg>");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_ticks_cover_the_maximum_with_round_steps() {
        assert_eq!(nice_ticks(9.3, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(
            nice_ticks(100.0, 5),
            vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        assert_eq!(
            nice_ticks(0.0, 5),
            vec![0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]
        );
        assert_eq!(nice_ticks(f64::NAN, 5).len(), 6);
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn maps_time_and_value_into_the_plot() {
        let c = Chart::new(1000.0, 300.0, 0, 100, 10.0);
        assert_eq!(c.x(0), 64.0);
        assert_eq!(c.x(100), 1000.0 - 16.0);
        assert_eq!(c.y(0.0), 300.0 - 42.0);
        assert_eq!(c.y(10.0), 28.0);
        assert_eq!(c.y(f64::NAN), c.y(0.0));
        assert_eq!(c.y(1e9), 28.0);
    }
}

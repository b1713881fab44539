//! The simulator's report, opened in a real browser: headless Chromium loads the file and
//! dumps the DOM it built, and the charts and the score table must be there and hold data.
//!
//! Needs Chromium: `apt-get install -y chromium` on Debian (CI installs it), or point
//! `FORESIGHT_CHROMIUM` at a Chrome or Chromium binary. Without one the test fails.

mod owned_process;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The browser to use: `FORESIGHT_CHROMIUM`, else the first of the usual names on PATH.
fn chromium() -> PathBuf {
    if let Some(path) = std::env::var_os("FORESIGHT_CHROMIUM") {
        return PathBuf::from(path);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in [
            "chromium",
            "chromium-browser",
            "google-chrome",
            "google-chrome-stable",
        ] {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!(
        "Chromium is needed to check the report in a browser, and none was found on PATH: \
         install it with `apt-get install -y chromium` (Debian), or set FORESIGHT_CHROMIUM \
         to a Chrome or Chromium binary"
    );
}

/// The DOM Chromium builds from `file` (its `--dump-dom` output).
fn dump_dom(file: &Path, profile: &Path) -> String {
    let url = format!("file://{}", file.display());
    // Chromium starts helper processes of its own; the whole group ends with the test.
    let mut child = owned_process::Owned::spawn(
        Command::new(chromium())
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("--dump-dom")
            .arg(&url)
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    )
    .expect("Chromium starts");
    // Read the DOM while the browser writes it (it is larger than a pipe's buffer).
    let mut stdout = child.stdout.take().expect("Chromium's stdout");
    let reader = std::thread::spawn(move || {
        let mut dom = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut dom).map(|_| dom)
    });
    // A browser that hangs must not hang the test suite; this bounds the wait, it measures
    // nothing.
    let deadline = Instant::now() + Duration::from_secs(180);
    let status = loop {
        if let Some(status) = child.try_wait().expect("Chromium can be waited on") {
            break status;
        }
        if Instant::now() > deadline {
            child.end();
            panic!("Chromium did not finish rendering {url} within 180 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success(), "Chromium failed on {url}");
    reader
        .join()
        .expect("the reader thread")
        .expect("Chromium's DOM is text")
}

/// The markup of the element that starts at `<tag ... id="id"` up to its closing tag.
fn element<'a>(dom: &'a str, tag: &str, id: &str) -> &'a str {
    let marker = format!("id=\"{id}\"");
    let at = dom
        .find(&marker)
        .unwrap_or_else(|| panic!("no element with id {id} in the rendered report"));
    let start = dom[..at]
        .rfind(&format!("<{tag}"))
        .expect("the element's start");
    let end = dom[at..]
        .find(&format!("</{tag}>"))
        .map(|e| at + e)
        .expect("the element's end");
    &dom[start..end]
}

/// The `d` attributes of the paths with `class` inside `svg`.
fn path_data<'a>(svg: &'a str, class: &str) -> Vec<&'a str> {
    let marker = format!("<path class=\"{class}\"");
    svg.match_indices(&marker)
        .filter_map(|(i, _)| {
            let rest = &svg[i..];
            let d = rest.find(" d=\"")? + 4;
            let len = rest[d..].find('"')?;
            Some(&rest[d..d + len])
        })
        .collect()
}

/// Chromium's screenshot of `file`, `width` × `height` pixels, decoded to RGB(A) rows.
fn screenshot(file: &Path, profile: &Path, width: u32, height: u32) -> (Vec<u8>, usize) {
    let png_path = file.with_extension("png");
    let status = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--window-size={width},{height}"))
        .arg(format!("--screenshot={}", png_path.display()))
        .arg(format!("file://{}", file.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("Chromium starts");
    assert!(status.success(), "Chromium could not take a screenshot");
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&png_path).expect("the screenshot exists"),
    ));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut pixels = vec![0; reader.output_buffer_size().expect("a sized image")];
    let info = reader.next_frame(&mut pixels).expect("the PNG decodes");
    let channels = info.color_type.samples();
    pixels.truncate(info.buffer_size());
    (pixels, channels)
}

/// Pixels within a small distance of `#rrggbb`.
fn pixels_of(pixels: &[u8], channels: usize, colour: &str) -> usize {
    let hex = |i: usize| i32::from_str_radix(&colour[i..i + 2], 16).expect("a hex colour");
    let (r, g, b) = (hex(1), hex(3), hex(5));
    pixels
        .chunks(channels)
        .filter(|p| {
            let d = (i32::from(p[0]) - r).abs()
                + (i32::from(p[1]) - g).abs()
                + (i32::from(p[2]) - b).abs();
            d <= 45
        })
        .count()
}

/// The inline `style` of each path with `class` in `svg`, as (stroke, width, dash pattern).
fn line_styles(svg: &str, class: &str) -> Vec<(String, f64, String)> {
    let marker = format!("<path class=\"{class}\" style=\"");
    svg.match_indices(&marker)
        .map(|(i, m)| {
            let rest = &svg[i + m.len()..];
            let style = &rest[..rest.find('"').expect("the style ends")];
            let get = |key: &str| {
                style
                    .split(';')
                    .find_map(|kv| kv.strip_prefix(key))
                    .unwrap_or_default()
                    .to_owned()
            };
            (
                get("stroke:"),
                get("stroke-width:").parse().unwrap_or(0.0),
                get("stroke-dasharray:"),
            )
        })
        .collect()
}

/// Every policy's line in chart `id` of `report`: drawn in a style of its own, earlier lines
/// wider than later ones (so that where lines coincide the earlier show on both sides of the
/// later), and, in Chromium's rendering of the chart alone, each policy's colour is on
/// screen.
fn every_line_shows(report: &Path, dom: &str, id: &str, class: &str, policies: usize) {
    let svg = format!("{}</svg>", element(dom, "svg", id));
    let styles = line_styles(&svg, class);
    assert_eq!(styles.len(), policies, "{id}: {styles:?}");
    for pair in styles.windows(2) {
        assert!(
            pair[0].1 > pair[1].1,
            "{id}: a later line is as wide: {styles:?}"
        );
        assert_ne!(
            pair[0].2, pair[1].2,
            "{id}: two lines dashed alike: {styles:?}"
        );
    }
    let html = std::fs::read_to_string(report).expect("the report");
    let css = &html
        [html.find("<style>").expect("a style sheet")..html.find("</style>").expect("its end") + 8];
    let page = report.with_file_name(format!("{id}.html"));
    std::fs::write(
        &page,
        format!("<!DOCTYPE html><html><head>{css}</head><body style=\"margin:0;padding:0\">{svg}</body></html>"),
    )
    .expect("write the chart's page");
    let (pixels, channels) = screenshot(
        &page,
        &report.with_file_name(format!("{id}-profile")),
        1200,
        360,
    );
    for (stroke, _, _) in &styles {
        let shown = pixels_of(&pixels, channels, stroke);
        // The legend's sample of a line is about 20 × 2.5 pixels; a line across the chart is
        // hundreds more.
        eprintln!("{id}: {stroke} shows in {shown} pixels");
        assert!(
            shown > 300,
            "{id}: the {stroke} line shows in {shown} pixels only"
        );
    }
}

/// Where Chromium lays out the marks of the chart `id`: the report is copied with a script
/// that measures every circle and label with `getBBox` and writes what it finds into the page,
/// so the positions are the browser's, not the ones the report meant. Returns the number of
/// circles and one line per mark whose centre lies outside the plot (the chart's clip
/// rectangle) or label that leaves the chart.
fn marks_outside_the_plot(report: &Path, profile: &Path, id: &str) -> (usize, Vec<String>) {
    let html = std::fs::read_to_string(report).unwrap();
    let script = format!(
        r#"<script>
(() => {{
  const svg = document.getElementById("{id}");
  const clip = svg.querySelector("clipPath rect");
  const [x, y, w, h] = ["x", "y", "width", "height"].map((a) => +clip.getAttribute(a));
  const view = svg.viewBox.baseVal;
  // Where the browser put an element, in the chart's own units: its box on the page mapped
  // back through the chart's transform to the screen (so rotated titles count as drawn).
  const toChart = svg.getScreenCTM().inverse();
  const box = (el) => {{
    const r = el.getBoundingClientRect();
    const a = new DOMPoint(r.left, r.top).matrixTransform(toChart);
    const b = new DOMPoint(r.right, r.bottom).matrixTransform(toChart);
    return {{ x: a.x, y: a.y, w: b.x - a.x, h: b.y - a.y }};
  }};
  const lines = [];
  let circles = 0;
  for (const c of svg.querySelectorAll("circle")) {{
    circles += 1;
    const b = box(c);
    const cx = b.x + b.w / 2, cy = b.y + b.h / 2;
    if (cx < x - 0.5 || cx > x + w + 0.5 || cy < y - 0.5 || cy > y + h + 0.5) {{
      const title = c.querySelector("title");
      lines.push("circle at " + cx.toFixed(1) + "," + cy.toFixed(1) + " outside " + [x, y, w, h].join(",") + ": " + (title ? title.textContent : ""));
    }}
  }}
  for (const t of svg.querySelectorAll("text")) {{
    const b = box(t);
    if (b.x < -1 || b.y < -1 || b.x + b.w > view.width + 1 || b.y + b.h > view.height + 1) {{
      lines.push("text at " + [b.x, b.y, b.w, b.h].map((v) => v.toFixed(1)).join(",") + " leaves the chart: " + t.textContent);
    }}
  }}
  const pre = document.createElement("pre");
  pre.id = "geometry";
  pre.textContent = ["circles " + circles].concat(lines).join("\n");
  document.body.appendChild(pre);
}})();
</script>"#
    );
    let end = html.rfind("</body>").expect("the report has a body");
    let measured = report.with_file_name("measured.html");
    std::fs::write(
        &measured,
        format!("{}{script}{}", &html[..end], &html[end..]),
    )
    .unwrap();
    let dom = dump_dom(&measured, profile);
    let geometry = element(&dom, "pre", "geometry");
    let text = &geometry[geometry.find('>').map_or(0, |i| i + 1)..];
    let text = text.trim_end_matches("</pre>");
    let mut lines = text.lines();
    let circles = lines
        .next()
        .and_then(|l| l.strip_prefix("circles "))
        .and_then(|n| n.trim().parse().ok())
        .expect("the script ran in the browser");
    (circles, lines.map(str::to_owned).collect())
}

#[test]
fn without_arguments_it_writes_a_report_that_renders_its_charts_and_scores_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_foresight"))
        .arg("simulate")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for name in ["reactive", "predictive", "predictive+cron"] {
        assert!(stdout.contains(name), "{stdout}");
    }
    assert!(
        stdout.contains("report: foresight-report/report.html"),
        "{stdout}"
    );
    let report = dir.path().join("foresight-report/report.html");
    let html = std::fs::read_to_string(&report).unwrap();
    // Self-contained: nothing to load from elsewhere (the only URL is SVG's namespace; a
    // clip path refers to an element of the report itself, `url(#id)`).
    for reference in ["src=", "href=", "@import", "<script", "<link"] {
        assert!(
            !html.contains(reference),
            "the report references {reference}"
        );
    }
    assert!(
        html.match_indices("url(")
            .all(|(i, _)| html[i..].starts_with("url(#")),
        "the report references something outside itself with url("
    );
    let dom = dump_dom(&report, &dir.path().join("profile"));

    // The score table: one row per policy, each with its ten figures (the last its cost as a
    // multiple of the clairvoyant bound), then the bound's own row.
    let table = element(&dom, "table", "scores");
    let rows: Vec<&str> = table.split("<tr").skip(2).collect();
    assert_eq!(rows.len(), 4, "{table}");
    for (row, name) in rows.iter().zip([
        "reactive",
        "predictive",
        "predictive+cron",
        "clairvoyant bound",
    ]) {
        assert!(row.contains(name), "{row}");
        assert_eq!(row.matches("<td").count(), 10, "{row}");
    }
    assert!(rows[3].contains("1.00×"), "{}", rows[3]);

    // The comparison charts: a load area and a long line per policy.
    let capacity = element(&dom, "svg", "chart-capacity");
    let load = path_data(capacity, "load");
    assert_eq!(load.len(), 1);
    assert!(
        load[0].matches('L').count() > 1000,
        "the load area is nearly empty"
    );
    let lines = path_data(capacity, "capacity");
    assert_eq!(lines.len(), 3);
    for d in &lines {
        assert!(
            d.matches('V').count() > 100,
            "a capacity line is nearly empty: {d}"
        );
    }
    // The close-up of the worst hours: a line per policy at decision resolution.
    let close_up = element(&dom, "svg", "chart-close-up");
    assert_eq!(path_data(close_up, "capacity").len(), 3);
    assert!(
        close_up.contains("under-provisioned"),
        "the close-up shows the shortfall"
    );
    let replicas = element(&dom, "svg", "chart-replicas");
    assert_eq!(path_data(replicas, "replicas").len(), 3);
    // Each text says only what is there: no settings that are off, no hover hints for marks
    // a section does not have, units that agree with their number.
    assert!(
        !dom.contains("jitter up to 0"),
        "a zero jitter is described"
    );
    assert!(!dom.contains(" 1 cores"), "1 cores");
    let reactive = element(&dom, "section", "policy-0");
    let note = &reactive[reactive.find("<p class=\"note\">").expect("a note")..];
    let note = &note[..note.find("</p>").expect("the note ends")];
    assert!(
        !note.contains("cron") && !note.contains("forecast"),
        "the reactive policy's note mentions marks it has not: {note}"
    );
    assert!(element(&dom, "section", "policy-2").contains("a cron window"));

    // Every policy's line is drawn visibly, not covered by the last one drawn.
    every_line_shows(&report, &dom, "chart-capacity", "capacity", 3);
    every_line_shows(&report, &dom, "chart-close-up", "capacity", 3);
    every_line_shows(&report, &dom, "chart-replicas", "replicas", 3);

    // The verdict: each policy against the first, every policy against the reactive
    // frontier at equal shortfall (and drawn with the clairvoyant bound), prediction's status.
    let verdict = element(&dom, "ul", "verdict");
    assert!(verdict.contains("against reactive"), "{verdict}");
    let judged = element(&dom, "ul", "equal-shortfall");
    assert!(
        judged.contains("cheaper at equal shortfall") || judged.contains("more at equal shortfall"),
        "{judged}"
    );
    let chart = element(&dom, "svg", "chart-frontier");
    assert!(chart.contains("clairvoyant bound"), "the bound is drawn");
    for i in 0..3 {
        assert!(
            chart.contains(&format!("frontier-policy-{i}")),
            "policy {i} is drawn"
        );
    }
    assert!(element(&dom, "li", "prediction-status-1").contains("ready after"));
    // The bundled frontier runs from replays short a few minutes to ones short for days:
    // every point and label drawn lies inside the chart, and what is left out is named.
    let (circles, outside) = marks_outside_the_plot(
        &report,
        &dir.path().join("profile-geometry"),
        "chart-frontier",
    );
    assert!(
        outside.is_empty(),
        "marks outside the plot:\n{}",
        outside.join("\n")
    );
    let frontier_points = chart.matches("class=\"frontier-point\"").count();
    assert_eq!(circles, frontier_points + 3, "{chart}");
    assert!(
        frontier_points >= 5,
        "{frontier_points} reactive replays drawn: {chart}"
    );
    assert!(
        chart.contains("(log scale)"),
        "the minutes axis says it is logarithmic"
    );

    // Each policy's charts: its capacity, its replicas with one hover mark per rescale.
    for i in 0..3 {
        let chart = element(&dom, "svg", &format!("chart-policy-{i}"));
        assert_eq!(path_data(chart, "capacity").len(), 1);
        let marks = element(&dom, "svg", &format!("chart-replicas-{i}"));
        let circles = marks.matches("<circle").count();
        assert!(circles > 50, "policy {i}: {circles} rescale marks");
        assert!(
            marks.contains("<title>"),
            "rescale marks explain themselves on hover"
        );
    }

    // The predictive policies show their forecast error after each refit and the lead time
    // their proposals used; the reactive one has no prediction chart.
    assert!(!dom.contains("id=\"chart-prediction-0\""));
    for i in 1..3 {
        let prediction = element(&dom, "svg", &format!("chart-prediction-{i}"));
        assert_eq!(
            path_data(prediction, "forecast-error").len(),
            1,
            "policy {i}"
        );
    }
    assert!(
        dom.contains("plus two sync periods"),
        "the lead time is stated"
    );

    // Readable axes: day labels in the service's zone, value axis titles with units.
    // The bundled workload starts on Monday 1 January 2024, Shanghai time.
    assert!(
        capacity.contains("Mon 01 Jan") || capacity.contains("Mon 08 Jan"),
        "no day labels"
    );
    assert!(capacity.contains("load (cores)"));
    assert!(capacity.contains("time (Asia/Shanghai)"));
    assert!(replicas.contains(">replicas<"));
    assert!(capacity.contains("class=\"legend\""));
}

/// A run of months: the time axis is a weekly (or coarser) grid, not one line a day, and both
/// policies' lines show.
#[test]
fn a_long_run_has_a_readable_grid_and_every_line() {
    let dir = tempfile::tempdir().unwrap();
    let policy = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/simulate/policy.yaml"
    ))
    .unwrap();
    let reactive = &policy[..policy.find("  prediction:").unwrap()];
    std::fs::write(dir.path().join("web.yaml"), reactive).unwrap();
    std::fs::write(
        dir.path().join("web-45.yaml"),
        reactive
            .replace("averageUtilization: 60", "averageUtilization: 45")
            .replacen("  name: web\n", "  name: web-45\n", 1),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_foresight"))
        .args(["simulate", "--synthetic", "--days", "111", "--quiet"])
        .args(["--spec", "web.yaml", "--spec", "web-45.yaml"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = dir.path().join("foresight-report/report.html");
    let dom = dump_dom(&report, &dir.path().join("profile"));
    let capacity = element(&dom, "svg", "chart-capacity");
    let majors = capacity.matches("class=\"major\"").count();
    assert!(
        (4..=40).contains(&majors),
        "{majors} major grid lines and labels over 111 days"
    );
    every_line_shows(&report, &dom, "chart-capacity", "capacity", 2);
    every_line_shows(&report, &dom, "chart-replicas", "replicas", 2);
}

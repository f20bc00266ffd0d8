//! Tables, charts, PNG and the HTML page built from a realistic matrix of runs.
//! Artifacts (charts as SVG and PNG) go to target/test-artifacts/ for a person
//! to look at.

mod common;

use fileio::result::LatencyKey;
use report::charts::{latency_chart, latency_ops, throughput_chart, timeline_chart};
use report::group::Grouping;
use report::html::{render_html, ReportOptions, HTML_MARKER};
use report::png::{is_tankbench_png, svg_to_png};
use report::store::Skipped;
use report::store::{ResultStore, StoredRun};
use report::table::grouped_table;

fn stored(runs: Vec<fileio::result::RunResult>) -> (tempfile::TempDir, Vec<StoredRun>) {
    let dir = tempfile::tempdir().unwrap();
    let store = ResultStore::open(dir.path()).unwrap();
    for r in &runs {
        store.save(r).unwrap();
    }
    let listing = store.list().unwrap();
    assert!(listing.skipped.is_empty());
    (dir, listing.runs)
}

#[test]
fn grouped_table_has_one_row_per_configuration() {
    let (_d, runs) = stored(common::matrix(3));
    let g = Grouping::new(&runs);
    assert_eq!(g.columns, ["layout", "link", "slog"]);
    assert_eq!(g.groups.len(), 12);
    assert!(g.groups.iter().all(|x| x.runs.len() == 3));
    assert!(g
        .common
        .iter()
        .any(|(k, v)| k == "workload" && v.starts_with("rndrw 4K")));
    // Natural order: 1xraidz3 < 2xraidz2 < 3xraidz2, and 2x1G < 2x10G.
    assert_eq!(g.groups[0].key, ["1xraidz3", "2x1G", "10G"]);
    assert_eq!(g.groups[2].key, ["1xraidz3", "2x10G", "10G"]);

    let t = grouped_table(&g);
    let csv = t.to_csv();
    let lines: Vec<&str> = csv.trim_end().split("\r\n").collect();
    assert_eq!(lines.len(), 13, "{csv}");
    assert!(lines[0].starts_with(
        "\"layout\",\"link\",\"slog\",\"runs\",\"read MiB/s\",\"read MiB/s sd\",\"write MiB/s\","
    ));
    let md = t.to_markdown();
    assert!(md.contains("| 3xraidz2 | 2x10G | 10G | 3 |"), "{md}");
    let text = t.to_terminal();
    assert!(
        text.contains("All runs: workload=rndrw 4K, 4 threads, fsync-all"),
        "{text}"
    );

    // The figures are the means of the repeats.
    let best = &g.groups[11];
    let mean: f64 = g
        .results(best)
        .iter()
        .map(|r| r.rates.written_mib_per_s)
        .sum::<f64>()
        / 3.0;
    let cell = g
        .summary(best, |r| Some(r.rates.written_mib_per_s))
        .unwrap();
    assert!((cell.mean - mean).abs() < 1e-9);
    assert!(cell.sd > 0.0);
}

#[test]
fn charts_draw_every_configuration_and_render_to_png() {
    let (_d, runs) = stored(common::matrix(2));
    let g = Grouping::new(&runs);
    let out = common::artifacts();

    let bars = throughput_chart(&g).unwrap();
    // Two bars (read, write) per configuration.
    assert_eq!(bars.matches("<rect class=\"mark\"").count(), 24);
    for grp in &g.groups {
        assert!(bars.contains(&report::html::escape(&g.group_name(grp))));
    }
    assert_eq!(
        latency_ops(&g),
        [
            LatencyKey::Event,
            LatencyKey::Read,
            LatencyKey::Write,
            LatencyKey::Fsync
        ]
    );
    let lat = latency_chart(&g, LatencyKey::Fsync).unwrap();
    assert_eq!(lat.matches("<path class=\"mark\"").count(), 12);
    assert!(
        lat.contains(">99.9%<") && lat.contains(" ms<"),
        "nines axis and ms labels"
    );
    let tl = timeline_chart(&g).unwrap();
    // A read and a write panel, one line per configuration in each.
    assert_eq!(tl.matches("<path class=\"mark\"").count(), 24);

    for (name, svg) in [
        ("throughput", &bars),
        ("latency-fsync", &lat),
        ("timeline", &tl),
    ] {
        std::fs::write(out.join(format!("chart-{name}.svg")), svg).unwrap();
        let png = svg_to_png(svg, 1.0).unwrap();
        assert!(is_tankbench_png(&png));
        std::fs::write(out.join(format!("chart-{name}.png")), &png).unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(&png));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!(info.width, 960);
        // Something is drawn: a fair share of pixels are not white, and the
        // text is there (dark pixels from the glyphs).
        let px: Vec<&[u8]> = buf[..info.buffer_size()].chunks(4).collect();
        let inked = px
            .iter()
            .filter(|p| p[0] < 250 || p[1] < 250 || p[2] < 250)
            .count();
        let dark = px
            .iter()
            .filter(|p| p[0] < 80 && p[1] < 80 && p[2] < 80)
            .count();
        assert!(
            inked > px.len() / 50,
            "{name}: only {inked} of {} pixels drawn",
            px.len()
        );
        assert!(
            dark > 500,
            "{name}: no text drawn ({dark} dark pixels); is a font installed?"
        );
    }
}

#[test]
fn missing_data_gives_no_chart_instead_of_an_empty_one() {
    let mut r = common::run(&[], 0.0, 0.0, 1);
    r.intervals.clear();
    for l in r.latency.values_mut() {
        l.histogram.clear();
    }
    let (_d, runs) = stored(vec![r]);
    let g = Grouping::new(&runs);
    assert!(throughput_chart(&g).is_none());
    assert!(timeline_chart(&g).is_none());
    assert!(latency_ops(&g).is_empty());
    let page = render_html(&runs, &ReportOptions::default());
    assert!(page.contains("--report-interval=1"));
    assert!(page.contains("No latency chart"));
}

#[test]
fn html_page_is_self_contained_and_holds_every_run() {
    let mut runs = common::matrix(2);
    runs[0]
        .labels
        .insert("note".into(), "<script>alert(1)</script>".into());
    let (_d, runs) = stored(runs);
    let page = render_html(&runs, &ReportOptions::default());
    assert!(page.contains(HTML_MARKER));
    assert!(page.contains("Content-Security-Policy"));
    let lower = page.to_lowercase();
    for banned in [
        "<script", "src=", "href=", "url(", "@import", "<link", "https:",
    ] {
        assert!(!lower.contains(banned), "page contains {banned}");
    }
    // The only "http:" is the SVG namespace, which is a name, not a fetch.
    assert_eq!(
        lower.matches("http:").count(),
        lower
            .matches("xmlns=\"http://www.w3.org/2000/svg\"")
            .count()
    );
    for r in &runs {
        assert!(page.contains(&r.id), "run {} missing", r.id);
    }
    assert!(page.contains("reads_from_page_cache"));
    // Throughput, operations, 4 latency operations, timeline.
    assert_eq!(page.matches("<svg").count(), 1 + 1 + 4 + 1);
    std::fs::write(common::artifacts().join("report-fixtures.html"), &page).unwrap();
}

/// Occurrences of `c` in `line` that are not backslash-escaped.
fn unescaped(line: &str, c: char) -> usize {
    let mut n = 0;
    let mut backslashes = 0;
    for ch in line.chars() {
        if ch == c && backslashes % 2 == 0 {
            n += 1;
        }
        backslashes = if ch == '\\' { backslashes + 1 } else { 0 };
    }
    n
}

/// RFC 4180 records: fields unquoted, `""` as `"`; CRLF ends a record only
/// outside quotes.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let (mut records, mut record, mut field) = (Vec::new(), Vec::new(), String::new());
    let (mut quoted, mut chars) = (false, text.chars().peekable());
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\r') if chars.peek() == Some(&'\n') => {
                chars.next();
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, c) => field.push(c),
        }
    }
    records
}

/// Issue 11: every string of a result file is untrusted. Markup, Markdown,
/// formulas, terminal escapes and characters XML forbids must come out as the
/// same text in every format, never as structure. Two hostile runs that differ
/// in some labels, and a copy under a hostile file name (the run id). A third
/// file carries markup as a latency operation name and as the workload mode
/// (issue 11 found the operation name written raw into an `id` attribute):
/// those are enums, so that file is left out, and its reason, which quotes the
/// markup, is what the report shows of it.
fn hostile_runs() -> (tempfile::TempDir, Vec<StoredRun>, Vec<Skipped>) {
    let (dir, _) = stored(vec![common::hostile(1, "A"), common::hostile(2, "B")]);
    // Run ids are file names, which the sharer chose as well.
    let first = std::fs::read_dir(dir.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::copy(
        &first,
        dir.path().join("\"'><b class=\"injected\">id<!--.json"),
    )
    .unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&first).unwrap()).unwrap();
    let event = v["latency"]["event"].take();
    v["latency"][common::HOSTILE_MARKUP] = event;
    v["workload"]["mode"] = format!("rndrw{}", common::HOSTILE_MARKUP).into();
    std::fs::write(
        dir.path().join("hostile-names.json"),
        serde_json::to_vec(&v).unwrap(),
    )
    .unwrap();
    let listing = report::store::load_dir(dir.path()).unwrap();
    assert_eq!(listing.runs.len(), 3);
    assert_eq!(listing.skipped.len(), 1, "{:?}", listing.skipped);
    assert!(
        listing.skipped[0].reason.contains("<meta"),
        "the reason quotes the unknown name: {:?}",
        listing.skipped[0]
    );
    (dir, listing.runs, listing.skipped)
}

/// HTML: nothing of the markup survives as markup, and every id attribute keeps
/// to a safe character set.
#[test]
fn result_strings_stay_text_in_html() {
    let (_d, runs, skipped) = hostile_runs();
    let page = render_html(
        &runs,
        &ReportOptions {
            skipped,
            ..ReportOptions::default()
        },
    );
    std::fs::write(common::artifacts().join("report-hostile.html"), &page).unwrap();
    for raw in [
        "http-equiv=\"refresh\"",
        "<b class=\"injected\"",
        "<script",
        "<img",
        "<i>",
        "</td></tr></table><b",
    ] {
        assert!(!page.contains(raw), "page contains {raw}");
    }
    // Our only comments are the generator marks at the top of each chart.
    assert_eq!(
        page.matches("<!--").count(),
        page.matches(report::svg::SVG_MARKER).count()
    );
    assert!(!page.contains(['\u{0}', '\u{7}', '\u{b}', '\u{1b}']));
    let mut ids = 0;
    for (i, _) in page.match_indices(" id=\"") {
        let value = page[i + 5..].split('"').next().unwrap();
        assert!(
            value
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "unsafe id {value:?}"
        );
        ids += 1;
    }
    assert!(ids > 5, "{ids} ids");
    assert!(page.contains("&lt;meta http-equiv=&quot;refresh&quot;"));
}

/// SVG: the same, and each chart stays well-formed XML, which resvg (like a
/// browser opening a .svg file) needs to draw it at all.
#[test]
fn result_strings_stay_text_in_svg_charts() {
    let (_d, runs, _) = hostile_runs();
    let g = Grouping::new(&runs);
    let charts = [
        throughput_chart(&g),
        latency_chart(&g, LatencyKey::Event),
        timeline_chart(&g),
    ];
    for svg in charts.into_iter().map(|c| c.expect("a chart")) {
        assert!(!svg.contains("<b class=\"injected\"") && !svg.contains("<meta"));
        assert!(!svg.contains(['\u{0}', '\u{7}', '\u{b}', '\u{1b}']));
        svg_to_png(&svg, 1.0).expect("the chart SVG parses as XML");
    }
}

/// Markdown: each row has exactly its cell separators, on one line, and no raw
/// HTML, code span, emphasis or link.
#[test]
fn result_strings_stay_text_in_markdown() {
    let (_d, runs, _) = hostile_runs();
    let g = Grouping::new(&runs);
    let table = grouped_table(&g);
    let md = table.to_markdown();
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(rows.len(), 2 + g.groups.len(), "{md}");
    for row in &rows {
        assert_eq!(
            unescaped(row, '|'),
            table.columns.len() + 1,
            "cells broken in {row:?}"
        );
    }
    for line in md.lines().skip(1) {
        for c in ['<', '`', '[', '*', '_'] {
            assert_eq!(unescaped(line, c), 0, "unescaped {c} in {line:?}");
        }
        assert!(!line.starts_with(['#', '-']), "{line:?}");
    }
}

/// CSV: every record has the header's fields, and no field a spreadsheet would
/// read as a formula unless it is one of our numbers (OWASP, CSV injection).
#[test]
fn result_strings_are_never_formulas_in_csv() {
    let (_d, runs, _) = hostile_runs();
    let g = Grouping::new(&runs);
    let table = grouped_table(&g);
    let csv = table.to_csv();
    let records = parse_csv(&csv);
    assert_eq!(records.len(), 1 + g.groups.len(), "{csv}");
    for r in &records {
        assert_eq!(r.len(), records[0].len(), "{r:?}");
        for f in r {
            let formula = f
                .trim_start_matches([' ', '\n'])
                .starts_with(['=', '+', '-', '@', '\t', '\r']);
            assert!(!formula || f.parse::<f64>().is_ok(), "formula field {f:?}");
        }
    }
    assert!(records
        .iter()
        .flatten()
        .any(|f| f == "'=HYPERLINK(\"http://127.0.0.1:9/\",\"A\")"));
}

/// Terminal: no control character but the line breaks, so printing a shared
/// result cannot retitle the window or rewrite the screen.
#[test]
fn result_strings_cannot_drive_a_terminal() {
    let (_d, runs, _) = hostile_runs();
    let table = grouped_table(&Grouping::new(&runs));
    for text in [
        table.to_terminal(),
        report::table::runs_table(&runs).to_terminal(),
    ] {
        assert!(
            !text.contains(|c: char| c.is_control() && c != '\n'),
            "{text:?}"
        );
    }
}

#[test]
fn a_latency_column_below_one_ms_is_in_microseconds() {
    // Fast runs: every p95 under 1 ms. The column says µs and holds
    // readable figures, not 0.00307 ± 0.000000.
    let fast: Vec<_> = (0..3)
        .map(|seed| {
            let mut r = common::run(&[("layout", "nvme")], 500.0, 500.0, seed);
            for l in r.latency.values_mut() {
                for p in &mut l.percentiles {
                    p.ms = 0.00307 + 0.0001 * seed as f64;
                }
            }
            r
        })
        .collect();
    let (_d, runs) = stored(fast);
    let text = grouped_table(&Grouping::new(&runs)).to_terminal();
    let header = text.lines().next().unwrap();
    assert!(header.contains("latency p95 µs"), "{text}");
    assert!(text.contains("3.17 ± 0.10"), "{text}");
    assert!(!text.contains("0.00"), "{text}");
    // One run at 1 ms or more keeps the column in ms.
    let (_d, runs) = stored(common::matrix(1));
    let text = grouped_table(&Grouping::new(&runs)).to_terminal();
    assert!(text.lines().next().unwrap().contains(" ms"), "{text}");
}

/// A prediction is drawn as a dashed, translucent bar with its interval as
/// the whisker and in the text, under a PREDICTION banner; a measured run
/// beside it keeps a solid bar.
#[test]
fn predictions_are_marked_in_the_bar_charts() {
    use fileio::result::{FigureInterval, PredictionInterval, ResultKind};
    let mut predicted = common::run(&[("log", "ssd")], 0.0, 10.0, 1);
    predicted.kind = ResultKind::Predicted;
    predicted.rates.writes_per_s = 2591.0;
    predicted.prediction = Some(PredictionInterval {
        figures: [(
            "writes_per_s".to_string(),
            FigureInterval {
                point: 2591.0,
                low: 2357.0,
                high: 2817.0,
                parameters_low: None,
                parameters_high: None,
            },
        )]
        .into_iter()
        .collect(),
        confidence: 0.8,
        samples: 8,
        method: "latin hypercube".into(),
        sensitivity: vec![],
    });
    let mut measured = common::run(&[("log", "none")], 0.0, 1.0, 2);
    measured.rates.writes_per_s = 119.0;
    let (_d, runs) = stored(vec![predicted, measured]);
    let g = Grouping::new(&runs);
    let svg = report::charts::operations_chart(&g).unwrap();
    assert!(
        svg.contains("PREDICTION: 1 of 2 configurations are simulated, not measured"),
        "{svg}"
    );
    assert!(svg.contains("2591 (2357–2817)"), "{svg}");
    assert_eq!(svg.matches("stroke-dasharray=\"4 2\"").count(), 1, "{svg}");
    assert!(svg.contains(">\u{a0}predicted</tspan>"), "{svg}");
    let page = render_html(&runs, &ReportOptions::default());
    assert!(page.contains("PREDICTION: 1 of 2 runs on this page are simulated"));
    assert_eq!(page.matches("class=\"flag predicted\"").count(), 1);
}

/// Warnings repeated over runs are shown once: the matrix's page-cache
/// warning comes with one hint, however many runs gave it.
#[test]
fn the_page_shows_a_warning_once_with_its_runs() {
    let (_d, runs) = stored(common::matrix(3));
    let reported = runs
        .iter()
        .filter(|r| !r.result.warnings.is_empty())
        .count();
    assert!(reported > 3);
    let page = render_html(&runs, &ReportOptions::default());
    assert_eq!(
        page.matches("<code>reads_from_page_cache</code>").count(),
        1
    );
    assert_eq!(
        page.matches("Use --file-total-size larger than RAM")
            .count(),
        1
    );
    assert!(page.contains(&format!(
        "{reported} warnings from {reported} runs, 1 distinct"
    )));
}

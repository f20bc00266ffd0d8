//! Tables, charts, PNG and the HTML page built from a realistic matrix of runs.
//! Artifacts (charts as SVG and PNG) go to target/test-artifacts/ for a person
//! to look at.

mod common;

use report::charts::{latency_chart, latency_ops, throughput_chart, timeline_chart};
use report::group::Grouping;
use report::html::{render_html, ReportOptions, HTML_MARKER};
use report::png::{is_tankbench_png, svg_to_png};
use report::store::{ResultStore, StoredRun};
use report::table::grouped_table;
use std::path::PathBuf;

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

pub fn artifacts() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
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
    assert!(lines[0].starts_with("layout,link,slog,runs,read MiB/s,read MiB/s sd,write MiB/s,"));
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
    let out = artifacts();

    let bars = throughput_chart(&g).unwrap();
    // Two bars (read, write) per configuration.
    assert_eq!(bars.matches("<rect class=\"mark\"").count(), 24);
    for grp in &g.groups {
        assert!(bars.contains(&report::html::escape(&g.group_name(grp))));
    }
    assert_eq!(latency_ops(&g), ["event", "read", "write", "fsync"]);
    let lat = latency_chart(&g, "fsync").unwrap();
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
    assert_eq!(page.matches("<svg").count(), 1 + 4 + 1);
    std::fs::write(artifacts().join("report-fixtures.html"), &page).unwrap();
}

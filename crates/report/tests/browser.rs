//! End to end: build HTML reports, open them in headless Chromium over the
//! DevTools protocol, and check what a person would see: no console errors, no
//! network requests, every run in the tables, a drawing in every chart. A
//! screenshot is kept in target/test-artifacts/.
//!
//! Two reports are checked: one from fixture results built in code, and one
//! from short real workloads run by the `tankbench` binary with labels (through
//! its CLI: `fileio ... run --format=json`, then `tankbench report`). Without
//! Chromium the tests say why they skip; with TANKBENCH_REQUIRE_PEERS=1 (set by
//! scripts/test in CI, which installs it) a missing Chromium is a failure.

mod common;

use serde_json::{json, Value};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tungstenite::{Message, WebSocket};

/// One browser at a time: the machine has two cores.
static BROWSER_LOCK: Mutex<()> = Mutex::new(());

/// Chromium, or None under the one rule for peers (testkit): skipped with the
/// reason printed, or failed with TANKBENCH_REQUIRE_PEERS=1 (CI).
fn chromium_or_skip() -> Option<PathBuf> {
    testkit::require(["chromium"]).map(|[path]| path)
}

/// A headless Chromium we started, driven over one DevTools websocket in
/// "flattened" session mode (page commands carry a sessionId).
struct Browser {
    child: Child,
    ws: WebSocket<TcpStream>,
    next_id: u64,
    session: String,
    /// Events of the page session not consumed yet, in arrival order.
    events: Vec<Value>,
    _profile: tempfile::TempDir,
}

impl Browser {
    fn launch(chromium: &Path) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let child = Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--hide-scrollbars",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromium");
        // Port 0 lets Chromium pick a free port; it writes it to this file.
        let port_file = profile.path().join("DevToolsActivePort");
        let deadline = Instant::now() + Duration::from_secs(30);
        let (port, path) = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                let mut lines = text.lines();
                if let (Some(port), Some(path)) = (lines.next(), lines.next()) {
                    break (port.to_string(), path.to_string());
                }
            }
            assert!(
                Instant::now() < deadline,
                "Chromium did not open its DevTools port"
            );
            std::thread::sleep(Duration::from_millis(100));
        };
        let stream = TcpStream::connect(format!("127.0.0.1:{port}")).expect("connect DevTools");
        // The handshake waits as long as Chromium takes to answer (on a
        // loaded 2-core machine it took over the 500 ms poll below, and a
        // read timeout mid-handshake aborts it as Interrupted); the reads
        // after it poll every 500 ms.
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let (ws, _) = tungstenite::client(format!("ws://127.0.0.1:{port}{path}"), stream)
            .expect("DevTools websocket handshake");
        ws.get_ref()
            .set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        let mut b = Browser {
            child,
            ws,
            next_id: 0,
            session: String::new(),
            events: Vec::new(),
            _profile: profile,
        };
        let target = b.call_browser("Target.createTarget", json!({"url": "about:blank"}));
        let target_id = target["targetId"].as_str().unwrap().to_string();
        let attached = b.call_browser(
            "Target.attachToTarget",
            json!({"targetId": target_id, "flatten": true}),
        );
        b.session = attached["sessionId"].as_str().unwrap().to_string();
        for domain in [
            "Page.enable",
            "Runtime.enable",
            "Log.enable",
            "Network.enable",
        ] {
            b.call(domain, json!({}));
        }
        b.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": 1100, "height": 900, "deviceScaleFactor": 1, "mobile": false}),
        );
        b
    }

    fn send(&mut self, method: &str, params: Value, session: Option<String>) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = Value::String(s);
        }
        self.ws
            .send(Message::text(msg.to_string()))
            .expect("send to DevTools");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let v = self
                .read(deadline)
                .unwrap_or_else(|| panic!("no answer to {method}"));
            if v["id"] == id {
                if let Some(err) = v.get("error") {
                    panic!("{method} failed: {err}");
                }
                return v["result"].clone();
            }
            if v.get("method").is_some() {
                self.events.push(v);
            }
        }
    }

    fn call_browser(&mut self, method: &str, params: Value) -> Value {
        self.send(method, params, None)
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let s = self.session.clone();
        self.send(method, params, Some(s))
    }

    /// The next message, or None at the deadline.
    fn read(&mut self, deadline: Instant) -> Option<Value> {
        while Instant::now() < deadline {
            match self.ws.read() {
                Ok(Message::Text(t)) => return Some(serde_json::from_str(t.as_str()).unwrap()),
                Ok(_) => {}
                Err(tungstenite::Error::Io(e))
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(e) => panic!("DevTools connection: {e}"),
            }
        }
        None
    }

    /// Collect events until `method` arrives (returned) or the timeout passes.
    fn wait_for(&mut self, method: &str, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        if self.events.iter().any(|e| e["method"] == method) {
            return true;
        }
        while let Some(v) = self.read(deadline) {
            let hit = v["method"] == method;
            if v.get("method").is_some() {
                self.events.push(v);
            }
            if hit {
                return true;
            }
        }
        false
    }

    /// Keep collecting events for a while (late console messages, requests).
    fn settle(&mut self, time: Duration) {
        let deadline = Instant::now() + time;
        while let Some(v) = self.read(deadline) {
            if v.get("method").is_some() {
                self.events.push(v);
            }
        }
    }

    fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        );
        if let Some(e) = r.get("exceptionDetails") {
            panic!("page script failed: {e}");
        }
        r["result"]["value"].clone()
    }

    /// Open `file`, wait for it to load, and report what a person would notice.
    fn visit(&mut self, file: &Path) -> Visit {
        self.events.clear();
        let url = format!("file://{}", file.canonicalize().unwrap().display());
        self.call("Page.navigate", json!({"url": url}));
        assert!(
            self.wait_for("Page.loadEventFired", Duration::from_secs(30)),
            "page did not load"
        );
        self.settle(Duration::from_millis(700));
        let mut v = Visit {
            url: url.clone(),
            ..Default::default()
        };
        for e in &self.events {
            let p = &e["params"];
            match e["method"].as_str().unwrap_or("") {
                "Runtime.consoleAPICalled"
                    if matches!(p["type"].as_str(), Some("error" | "assert")) =>
                {
                    v.errors.push(format!("console.error: {}", p["args"]));
                }
                "Runtime.exceptionThrown" => v
                    .errors
                    .push(format!("exception: {}", p["exceptionDetails"])),
                "Log.entryAdded" if p["entry"]["level"] == "error" => {
                    v.errors.push(format!("log: {}", p["entry"]["text"]))
                }
                "Network.requestWillBeSent" => {
                    let req = p["request"]["url"].as_str().unwrap_or("").to_string();
                    if req != url {
                        v.requests.push(req);
                    }
                }
                _ => {}
            }
        }
        v
    }

    /// A full-page PNG.
    // scrollHeight is a page height in CSS pixels: positive and far below
    // u64::MAX.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    fn screenshot(&mut self, out: &Path) {
        let h = self
            .eval("document.documentElement.scrollHeight")
            .as_f64()
            .unwrap();
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": 1100, "height": h.ceil() as u64, "deviceScaleFactor": 1, "mobile": false}),
        );
        let shot = self.call("Page.captureScreenshot", json!({"format": "png"}));
        let bytes = data_encoding::BASE64
            .decode(shot["data"].as_str().unwrap().as_bytes())
            .unwrap();
        assert!(bytes.starts_with(b"\x89PNG"), "screenshot is not a PNG");
        std::fs::write(out, bytes).unwrap();
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": 1100, "height": 900, "deviceScaleFactor": 1, "mobile": false}),
        );
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Ask politely, then make sure: only the process we started.
        self.next_id += 1;
        let _ = self.ws.send(Message::text(
            json!({"id": self.next_id, "method": "Browser.close"}).to_string(),
        ));
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug, Default)]
struct Visit {
    url: String,
    errors: Vec<String>,
    /// Requests other than the page itself.
    requests: Vec<String>,
}

/// A script that returns, for every `svg.chart` on the page: the id of its
/// parent, its size, the marks drawn (non-empty `.mark` elements), the
/// pairs of its texts whose boxes overlap (more than half a pixel), and the
/// texts that reach outside the drawing. As a person would notice: a label
/// written over another, or cut off at the edge.
const CHART_CHECKS: &str = r#"
const chartChecks = (svg) => {
  const r = svg.getBoundingClientRect();
  const marks = [...svg.querySelectorAll('.mark')].filter(m => {
    const b = m.getBBox();
    return b.width > 0 || b.height > 0;
  }).length;
  const texts = [...svg.querySelectorAll('text')]
    .map(e => ({ s: e.textContent, b: e.getBoundingClientRect() }))
    .filter(t => t.b.width > 0 && t.s.trim() !== '');
  const e = 0.5;
  const overlaps = [];
  for (let i = 0; i < texts.length; i++) {
    for (let j = i + 1; j < texts.length; j++) {
      const a = texts[i].b, b = texts[j].b;
      if (a.left < b.right - e && b.left < a.right - e && a.top < b.bottom - e && b.top < a.bottom - e) {
        const at = (t) => `${t.s} @ ${Math.round(t.b.left)},${Math.round(t.b.top)}..${Math.round(t.b.right)},${Math.round(t.b.bottom)}`;
        overlaps.push([at(texts[i]), at(texts[j])]);
      }
    }
  }
  const outside = texts.filter(t => t.b.left < r.left - e || t.b.right > r.right + e
    || t.b.top < r.top - e || t.b.bottom > r.bottom + e).map(t => t.s);
  const id = svg.parentElement ? svg.parentElement.id : '';
  return { id, width: r.width, height: r.height, marks, overlaps, outside, texts: texts.length };
};
"#;

/// What the page shows, read from the DOM after layout.
fn inspect() -> String {
    format!(
        r#"(() => {{ {CHART_CHECKS}
  const runIds = [...document.querySelectorAll('table.runs tbody tr')].map(tr => tr.querySelector('.id').textContent);
  const heads = [...document.querySelectorAll('table.grouped thead th')].map(th => th.textContent);
  const runsCol = heads.indexOf('runs');
  const grouped = [...document.querySelectorAll('table.grouped tbody tr')];
  const groupedRuns = grouped.reduce((s, tr) => s + Number(tr.cells[runsCol].textContent), 0);
  const charts = [...document.querySelectorAll('svg.chart')].map(chartChecks);
  const warnings = document.querySelectorAll('#warnings .warning').length;
  const hints = [...document.querySelectorAll('#warnings .hint')].map(h => h.textContent);
  const banner = [...document.querySelectorAll('main > p.prediction')].map(p => p.textContent);
  const predictedFlags = document.querySelectorAll('table.runs .flag.predicted').length;
  const timelineMissing = document.querySelector('#timeline-missing');
  return {{ runIds, groupedRows: grouped.length, groupedRuns, charts, warnings, hints, banner,
    predictedFlags, timelineMissing: timelineMissing ? timelineMissing.textContent : null }};
}})()"#
    )
}

/// Every chart in `seen` draws something and writes no text over another
/// text or past its edge.
#[track_caller]
fn charts_are_readable(seen: &Value) {
    for c in seen["charts"].as_array().unwrap() {
        assert!(
            c["marks"].as_u64().unwrap() > 0,
            "chart {} draws nothing: {c}",
            c["id"]
        );
        assert!(
            c["width"].as_f64().unwrap() > 300.0 && c["height"].as_f64().unwrap() > 200.0,
            "{c}"
        );
        assert_eq!(
            c["overlaps"],
            json!([]),
            "texts over each other in {}",
            c["id"]
        );
        assert_eq!(
            c["outside"],
            json!([]),
            "texts cut off at the edge of {}",
            c["id"]
        );
    }
}

/// The distinct (code, hint) pairs of the runs' warnings: one block each
/// on the page.
fn distinct_warnings(runs: &[report::store::StoredRun]) -> usize {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for w in runs.iter().flat_map(|r| &r.result.warnings) {
        if !seen.contains(&(w.code.as_str(), w.hint.as_str())) {
            seen.push((&w.code, &w.hint));
        }
    }
    seen.len()
}

/// The checks common to both reports; `warnings` is the number of distinct
/// warnings (the page shows each once, with the runs that reported it).
fn check_page(
    b: &mut Browser,
    page: &Path,
    ids: &[String],
    configs: usize,
    warnings: usize,
    shot: &str,
) -> Value {
    let visit = b.visit(page);
    assert!(
        visit.errors.is_empty(),
        "console errors: {:#?}",
        visit.errors
    );
    assert!(
        visit.requests.is_empty(),
        "network requests: {:#?}",
        visit.requests
    );
    let seen = b.eval(&inspect());
    let shown: Vec<String> = seen["runIds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    for id in ids {
        assert!(
            shown.contains(id),
            "run {id} is not in the runs table: {shown:?}"
        );
    }
    assert_eq!(shown.len(), ids.len());
    assert_eq!(seen["groupedRows"], configs, "{seen}");
    assert_eq!(
        seen["groupedRuns"],
        ids.len(),
        "grouped table counts every run once: {seen}"
    );
    let charts = seen["charts"].as_array().unwrap();
    let chart_ids: Vec<&str> = charts.iter().filter_map(|c| c["id"].as_str()).collect();
    for id in ["chart-throughput", "chart-operations", "chart-timeline"] {
        assert!(chart_ids.contains(&id), "no {id}: {chart_ids:?}");
    }
    assert!(
        chart_ids.iter().any(|id| id.starts_with("chart-latency")),
        "{chart_ids:?}"
    );
    charts_are_readable(&seen);
    assert_eq!(seen["warnings"], warnings, "{seen}");
    // Each hint once: the warnings are folded, not repeated per run.
    let hints: Vec<&str> = seen["hints"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for (i, h) in hints.iter().enumerate() {
        assert!(!hints[i + 1..].contains(h), "hint shown twice: {h}");
    }
    let out = common::artifacts().join(shot);
    b.screenshot(&out);
    eprintln!(
        "screenshot: {}  ({} runs, {} charts, url {})",
        out.display(),
        ids.len(),
        charts.len(),
        visit.url
    );
    seen
}

#[test]
fn fixture_report_renders_in_chromium() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let _one = BROWSER_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let store = report::store::ResultStore::open(dir.path().join("results")).unwrap();
    let fixtures = common::matrix(3);
    for r in &fixtures {
        store.save(r).unwrap();
    }
    let listing = store.list().unwrap();
    let warnings = distinct_warnings(&listing.runs);
    let page = dir.path().join("report.html");
    let html = report::html::render_html(
        &listing.runs,
        &report::html::ReportOptions {
            title: "Pool layouts for the FreeNAS pair".into(),
            sources: vec!["tankbench-results".into()],
            skipped: vec![],
        },
    );
    std::fs::write(&page, html).unwrap();
    let ids: Vec<String> = listing.runs.iter().map(|r| r.id.clone()).collect();

    let mut b = Browser::launch(&chromium);
    check_page(&mut b, &page, &ids, 12, warnings, "report.png");

    // The checks must be able to fail: a page that loads something and logs an
    // error is caught. (Port 9 on loopback: nothing listens; only the attempt
    // matters.)
    let bad = dir.path().join("bad.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><html><body><img src=\"http://127.0.0.1:9/x.png\">\
         <script>console.error('boom')</script></body></html>",
    )
    .unwrap();
    let v = b.visit(&bad);
    assert!(
        v.requests
            .iter()
            .any(|r| r.starts_with("http://127.0.0.1:9/")),
        "{v:?}"
    );
    assert!(v.errors.iter().any(|e| e.contains("boom")), "{v:?}");

    // And a chart with a label written over another and one past its edge
    // is caught.
    let crowded = dir.path().join("crowded.svg");
    std::fs::write(
        &crowded,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"400\" height=\"300\">\
         <rect class=\"mark\" x=\"10\" y=\"10\" width=\"50\" height=\"20\"/>\
         <text x=\"100\" y=\"100\" font-size=\"12\">3xraidz2-8</text>\
         <text x=\"110\" y=\"104\" font-size=\"12\">2xraidz2-12</text>\
         <text x=\"380\" y=\"200\" font-size=\"12\">cut off here</text></svg>",
    )
    .unwrap();
    let seen = visit_chart(&mut b, &crowded, "crowded.png");
    let c = &seen["charts"][0];
    assert_eq!(c["overlaps"].as_array().map(Vec::len), Some(1), "{c}");
    assert_eq!(c["outside"], json!(["cut off here"]), "{c}");
}

/// Issue 11: a shared result file whose latency operation name held a meta
/// refresh redirected the report page in Chromium. With hostile strings in
/// every field the page must stay where it is, fetch nothing, gain no element,
/// and show the strings as text.
#[test]
fn hostile_result_files_neither_redirect_nor_inject_in_chromium() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let _one = BROWSER_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let store = report::store::ResultStore::open(dir.path().join("results")).unwrap();
    for (seed, variant) in [(1, "A"), (2, "B")] {
        store.save(&common::hostile(seed, variant)).unwrap();
    }
    let listing = store.list().unwrap();
    let page = dir.path().join("hostile.html");
    std::fs::write(
        &page,
        report::html::render_html(&listing.runs, &report::html::ReportOptions::default()),
    )
    .unwrap();

    let mut b = Browser::launch(&chromium);
    let visit = b.visit(&page);
    // The refresh points at 127.0.0.1:9, so following it shows up as a request.
    // (Cut: after a redirect Chromium's error page loads long data: URLs.)
    let requests: Vec<String> = visit
        .requests
        .iter()
        .map(|r| r.chars().take(100).collect())
        .collect();
    assert!(
        requests.is_empty(),
        "the page fetched or navigated: {requests:#?}"
    );
    assert!(
        visit.errors.is_empty(),
        "console errors: {:#?}",
        visit.errors
    );
    let seen = b.eval(
        r#"(() => ({
          href: location.href,
          injected: document.querySelectorAll(
            '.injected, script, img, iframe, object, embed, a, i, link, base, form').length,
          refresh: document.querySelectorAll('meta[http-equiv="refresh" i]').length,
          metas: document.querySelectorAll('meta').length,
          title: document.title,
          shown: document.body.innerText.includes('<meta http-equiv="refresh"'),
          runs: document.querySelectorAll('table.runs tbody tr').length,
          sections: [...document.querySelectorAll('main > section')].map(s => s.id),
        }))()"#,
    );
    assert_eq!(seen["href"], visit.url.as_str(), "navigated away: {seen}");
    assert_eq!(seen["injected"], 0, "injected elements: {seen}");
    assert_eq!(seen["refresh"], 0, "{seen}");
    // charset, generator, Content-Security-Policy, viewport: ours only.
    assert_eq!(seen["metas"], 4, "{seen}");
    assert_eq!(seen["title"], "tankbench report", "{seen}");
    assert_eq!(seen["shown"], true, "the markup shows as text: {seen}");
    assert_eq!(seen["runs"], 2, "{seen}");
    assert_eq!(
        seen["sections"],
        json!(["summary", "charts", "runs", "warnings"]),
        "no section swallowed by an injected comment: {seen}"
    );
    b.screenshot(&common::artifacts().join("report-hostile.png"));
}

/// The `tankbench` binary of the same build profile as this test (the test runs
/// from target/<profile>/deps/), or $TANKBENCH_BIN, if it has been built.
/// `cargo test --workspace` builds it, as the tankbench package has tests.
fn tankbench_bin() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("TANKBENCH_BIN") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    let p = exe.parent()?.parent()?.join("tankbench");
    p.exists().then_some(p)
}

fn tb(bin: &Path, dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(bin)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("run tankbench")
}

/// Two "configurations" of a real workload, two repeats each, saved by the
/// binary in `w`'s result store; the store, checked to hold the four runs.
fn save_real_runs(bin: &Path, w: &Path) -> report::store::ResultStore {
    let size = [
        "--file-total-size=8M",
        "--file-num=4",
        "--file-block-size=4K",
    ];
    let out = tb(bin, w, &[&["fileio"][..], &size, &["prepare"]].concat());
    assert!(
        out.status.success(),
        "prepare: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Two "configurations" of a real workload (fsync after every write or
    // not), two repeats each, labelled and saved by the binary itself:
    // `--save --label --repeat`, which goes through this crate's store.
    for (sync, flag) in [
        ("each-write", "--file-fsync-all=on"),
        ("periodic", "--file-fsync-all=off"),
    ] {
        let label = format!("--label=fsync={sync},disk=tmp");
        let args = [
            &["fileio"][..],
            &size,
            &[
                "--file-test-mode=rndrw",
                "--time=2",
                "--threads=2",
                "--report-interval=1",
                "--percentiles=50,95,99",
                "--progress=off",
                "--save",
                &label,
                "--repeat=2",
                flag,
                "run",
            ],
        ]
        .concat();
        let out = tb(bin, w, &args);
        assert!(
            out.status.success(),
            "run: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let store = report::store::ResultStore::open(w.join(report::store::DEFAULT_DIR)).unwrap();
    let listing = store.list().unwrap();
    assert_eq!(
        listing.runs.len(),
        4,
        "two configurations x --repeat=2 saved"
    );
    assert!(listing.skipped.is_empty(), "{:?}", listing.skipped);
    for r in &listing.runs {
        assert_eq!(r.result.labels["disk"], "tmp");
        assert!(
            !r.result.intervals.is_empty(),
            "--report-interval samples are stored"
        );
    }
    let _ = tb(bin, w, &[&["fileio"][..], &size, &["cleanup"]].concat());
    store
}

/// The CLI front end over the saved runs: results, compare, report, chart,
/// including the overwrite rule and a bad chart kind.
fn exercise_cli(bin: &Path, w: &Path) {
    // The CLI front end: results, compare, report, chart.
    let out = tb(bin, w, &["results"]);
    assert!(
        out.status.success(),
        "results: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        listed.lines().filter(|l| l.contains("fsync=")).count(),
        4,
        "{listed}"
    );

    let out = tb(
        bin,
        w,
        &[
            "compare",
            "fsync=each-write",
            "fsync=periodic",
            "--format=markdown",
        ],
    );
    assert!(
        out.status.success(),
        "compare: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cmp = String::from_utf8_lossy(&out.stdout);
    assert!(
        cmp.contains("| write MiB/s |") && cmp.contains("Welch"),
        "{cmp}"
    );

    let out = tb(
        bin,
        w,
        &[
            "report",
            "tankbench-results",
            "-o",
            "report.html",
            "--title",
            "Real runs",
        ],
    );
    assert!(
        out.status.success(),
        "report: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Running it again replaces our own report; a foreign file is left alone.
    assert!(tb(bin, w, &["report", "-o", "report.html"])
        .status
        .success());
    std::fs::write(w.join("mine.html"), "<p>mine</p>").unwrap();
    let out = tb(bin, w, &["report", "-o", "mine.html"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("refusing to overwrite"));
    assert_eq!(
        std::fs::read_to_string(w.join("mine.html")).unwrap(),
        "<p>mine</p>"
    );

    for (kind, file) in [
        ("throughput", "t.png"),
        ("operations", "o.svg"),
        ("latency", "l.svg"),
        ("timeline", "tl.svg"),
    ] {
        let out = tb(bin, w, &["chart", kind, "-o", file]);
        assert!(
            out.status.success(),
            "chart {kind}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(report::output::is_tankbench_file(&w.join(file)).unwrap());
    }
    let out = tb(bin, w, &["chart", "pie", "-o", "p.svg"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("accepted: throughput, operations, latency, timeline"),
        "{err}"
    );
}

#[test]
fn real_workloads_report_renders_in_chromium() {
    let Some(bin) = tankbench_bin() else {
        testkit::skip_or_fail(
            "the tankbench binary beside the test's target directory (build it first: cargo \
             build -p tankbench, or cargo test --workspace; or set TANKBENCH_BIN)",
        );
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let store = save_real_runs(&bin, w);
    exercise_cli(&bin, w);

    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let _one = BROWSER_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let listing = store.list().unwrap();
    let ids: Vec<String> = listing.runs.iter().map(|r| r.id.clone()).collect();
    let warnings = distinct_warnings(&listing.runs);
    let mut b = Browser::launch(&chromium);
    check_page(
        &mut b,
        &w.join("report.html"),
        &ids,
        2,
        warnings,
        "report-real.png",
    );
}

/// Open a chart file (SVG) in the browser and return what [`CHART_CHECKS`]
/// finds in it, with the text of its `.prediction` marks and the count of
/// `.point-label`s; a screenshot is kept as `shot`.
fn visit_chart(b: &mut Browser, file: &Path, shot: &str) -> Value {
    let visit = b.visit(file);
    assert!(visit.errors.is_empty(), "{:#?}", visit.errors);
    assert!(visit.requests.is_empty(), "{:#?}", visit.requests);
    let seen = b.eval(&format!(
        r#"(() => {{ {CHART_CHECKS}
          const svg = document.querySelector('svg');
          const c = chartChecks(svg);
          c.prediction = [...svg.querySelectorAll('.prediction')].map(e => e.textContent);
          c.pointLabels = svg.querySelectorAll('.point-label').length;
          c.points = svg.querySelectorAll('.point').length;
          return {{ charts: [c] }};
        }})()"#
    ));
    b.screenshot(&common::artifacts().join(shot));
    seen
}

/// What `plan_prediction_and_slog_charts_render_in_chromium` looks at,
/// made in `w` by the binary: plan.svg, matrix.svg (two predictions,
/// saved), slog.svg, two measured runs beside the predictions in the
/// default store, and mixed.html.
fn make_charts_and_a_mixed_report(bin: &Path, w: &Path) {
    let ok = |out: std::process::Output, what: &str| {
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    ok(
        tb(
            bin,
            w,
            &[
                "plan", "--disks", "24x8TB", "--log", "10GB", "--link", "2x10G", "--chart",
                "plan.svg",
            ],
        ),
        "plan --chart",
    );
    let system =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/systems/reference-nas.toml");
    ok(
        tb(
            bin,
            w,
            &[
                "simulate",
                "--system",
                system.to_str().unwrap(),
                "--log",
                "none,ssd-sata",
                "--samples",
                "2",
                "--chart",
                "matrix.svg",
                "--",
                "--file-test-mode=rndwr",
                "--file-fsync-all=on",
                "--file-block-size=4K",
                "--threads=4",
                "--time=5",
                "--save",
                "run",
            ],
        ),
        "simulate --chart",
    );
    std::fs::create_dir(w.join("slogdir")).unwrap();
    ok(
        tb(
            bin,
            w,
            &[
                "slog",
                "slogdir",
                "--count",
                "20",
                "--max-size",
                "64K",
                "--chart",
                "slog.svg",
            ],
        ),
        "slog --chart",
    );
    // Two measured runs beside the two predictions: one with interval
    // samples, one without.
    let size = [
        "--file-total-size=8M",
        "--file-num=4",
        "--file-block-size=4K",
    ];
    ok(
        tb(bin, w, &[&["fileio"][..], &size, &["prepare"]].concat()),
        "prepare",
    );
    for (interval, run) in [("--report-interval=1", "a"), ("--report-interval=0", "b")] {
        let label = format!("--label=log=local,run={run}");
        let options = [
            "--file-test-mode=rndwr",
            "--file-fsync-all=on",
            "--time=2",
            "--progress=off",
            interval,
            "--save",
            &label,
            "run",
        ];
        ok(
            tb(bin, w, &[&["fileio"][..], &size, &options].concat()),
            "fileio run --save",
        );
    }
    ok(tb(bin, w, &["report", "-o", "mixed.html"]), "report");
    let _ = tb(bin, w, &[&["fileio"][..], &size, &["cleanup"]].concat());
}

/// The charts of issue 38 as a person sees them in Chromium: `plan
/// --chart` (points labelled without overlap, marked as a prediction),
/// `simulate --chart` over a comma list (dashed bars with whiskers, the
/// PREDICTION banner), `slog --chart`, and a report page mixing those
/// predictions with measured runs: the banner, a flag per predicted run,
/// the operations chart, and the runs the timeline has no line for.
#[test]
fn plan_prediction_and_slog_charts_render_in_chromium() {
    let Some(bin) = tankbench_bin() else {
        testkit::skip_or_fail(
            "the tankbench binary beside the test's target directory (build it first: cargo \
             build -p tankbench, or cargo test --workspace; or set TANKBENCH_BIN)",
        );
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    make_charts_and_a_mixed_report(&bin, w);
    let listing = report::store::ResultStore::open(w.join(report::store::DEFAULT_DIR))
        .unwrap()
        .list()
        .unwrap();
    assert_eq!(listing.runs.len(), 4, "{:?}", listing.skipped);

    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let _one = BROWSER_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mut b = Browser::launch(&chromium);

    let plan = visit_chart(&mut b, &w.join("plan.svg"), "plan-chart.png");
    charts_are_readable(&plan);
    let c = &plan["charts"][0];
    // 24 x 8 TB: 26 layouts, each drawn with the ZIL in the pool and on
    // the log device.
    assert_eq!(c["points"], 52, "{c}");
    assert!(
        c["pointLabels"].as_u64().unwrap() >= 13,
        "most layouts named: {c}"
    );
    assert!(
        c["prediction"][0]
            .as_str()
            .unwrap()
            .starts_with("PREDICTION"),
        "{c}"
    );

    let matrix = visit_chart(&mut b, &w.join("matrix.svg"), "simulate-chart.png");
    charts_are_readable(&matrix);
    let c = &matrix["charts"][0];
    assert_eq!(
        c["prediction"],
        json!(["PREDICTION (simulated, not measured)"]),
        "{c}"
    );
    // Two cells, writes/s and fsyncs/s each (an rndwr run reads nothing).
    assert_eq!(c["marks"], 4, "{c}");

    let slog = visit_chart(&mut b, &w.join("slog.svg"), "slog-chart.png");
    charts_are_readable(&slog);
    // p50, mean and p99 lines and a bar per size (512 B to 64 KiB: 8).
    assert_eq!(slog["charts"][0]["marks"], 3 + 8, "{slog}");

    let ids: Vec<String> = listing.runs.iter().map(|r| r.id.clone()).collect();
    let seen = check_page(
        &mut b,
        &w.join("mixed.html"),
        &ids,
        4,
        distinct_warnings(&listing.runs),
        "report-mixed.png",
    );
    let banner = seen["banner"][0].as_str().unwrap_or_default();
    assert!(
        banner.starts_with("PREDICTION: 2 of 4 runs on this page are simulated"),
        "{seen}"
    );
    assert_eq!(seen["predictedFlags"], 2, "{seen}");
    // The predictions and run b have no interval samples; the note names
    // each of them, and not run a.
    let missing = seen["timelineMissing"].as_str().unwrap_or_default();
    for r in &listing.runs {
        assert_eq!(
            missing.contains(&r.id),
            r.result.intervals.is_empty(),
            "{}: {missing}",
            r.id
        );
    }
}

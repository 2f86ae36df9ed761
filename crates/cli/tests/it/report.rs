//! `noisebench report`: the demo snapshot's report holds the snapshot's own numbers, is written
//! beside the version folder (which stays as published), and renders in a real browser
//! (Debian's `chromium`, headless) with every section, no image or resource from elsewhere and
//! no console message.
//!
//! How the browser is watched: chromium runs twice, once with `--dump-dom` (the DOM after load)
//! and once with `--screenshot`, both with `--enable-logging=stderr --log-level=0 --v=1`. At that
//! level chromium logs every console message as `INFO:CONSOLE` (its level is not in the line,
//! but the page has no script, so any console message is a failure), every file it opens as
//! `FileURLLoader::Start: <url>` and every network request as `NotifyBeforeURLRequest: <url>`.
//! The test requires no console line, the report as the only file, and no network request but
//! chromium's own startup calls to Google's account and search services (no flag turns them
//! off; `--host-resolver-rules` makes every host name unresolvable, so neither they nor anything
//! else leave the machine). Each run gets its own `--user-data-dir`, so parallel runs share no
//! profile lock. When no `chromium`/`chromium-browser` is on PATH the browser test prints
//! SKIPPED and passes, unless `NOISEBENCH_REQUIRE_READERS` is set (CI sets it): then it fails.
//! `NOISEBENCH_KEEP_REPORT_PNG=<file>` keeps the screenshot (how `docs/report.png` was made).
//!
//! The sampled items and the figures' layout are checked on a copy of the page with a test
//! script appended (the page itself has none): it counts the items of every stratum, opens the
//! first of each and measures that its body appears, measures every text box of every figure
//! (`getBoundingClientRect`) for overlaps, and writes what it found as JSON into the DOM that
//! `--dump-dom` prints. A second copy shows only the claim and question item sections, the first
//! item of each open, for the screenshot `NOISEBENCH_KEEP_ITEMS_PNG=<file>` keeps
//! (`docs/report-items.png`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use std::collections::BTreeMap;

use noisebench_cli::{
    EvalRequest, LlmOverrides, METRICS_FILE, report_data, run_eval, write_report,
};
use noisebench_core::{
    Claim, ClaimDocumentLabel, DEFAULT_PER_STRATUM, Metric, Pattern, Question, QuestionJudgement,
    QuestionSplit, TableRow,
};
use noisebench_pipeline::table_io;
use noisebench_report::SECTION_IDS;
use noisebench_snapshot::Manifest;

/// The demo snapshot (a version folder) in a kept copy of the binary's shared demo checkout
/// (`crate::shared::demo_copy`), evaluated (offline) into `<checkout>/evals/`.
fn demo() -> &'static Path {
    static DEMO: OnceLock<PathBuf> = OnceLock::new();
    DEMO.get_or_init(|| {
        // A copy of the binary's shared demo build: the evaluation below writes into it.
        let (dir, snapshot) = crate::shared::demo_copy();
        // A real evaluation run (offline backend), as `noisebench eval` writes it.
        let request = EvalRequest {
            inputs: vec![snapshot.clone()],
            out: dir.join("evals"),
            ..Default::default()
        };
        let run = run_eval(&dir, &request, &LlmOverrides::default()).unwrap();
        assert_eq!(
            run.dir.parent().unwrap().parent().unwrap(),
            dir.join("evals")
        );
        snapshot
    })
}

fn evals_dir() -> PathBuf {
    demo().join("../../../evals")
}

fn rows<T: TableRow>(name: &str) -> Vec<T> {
    table_io::read_rows(&demo().join("data").join(format!("{name}.parquet"))).unwrap()
}

/// The report, written once per test binary to its default place.
fn report() -> &'static Path {
    static REPORT: OnceLock<PathBuf> = OnceLock::new();
    REPORT.get_or_init(|| write_report(demo(), Some(&evals_dir()), None).unwrap())
}

#[test]
fn the_report_goes_beside_the_version_and_leaves_it_as_published() {
    let path = report();
    let manifest = Manifest::read(demo()).unwrap();
    assert_eq!(
        path,
        demo()
            .parent()
            .unwrap()
            .join(format!("{}.report.html", manifest.version))
    );
    let verified = noisebench_snapshot::verify(demo());
    assert!(verified.ok(), "{:?}", verified.problems);
    // Still a dataset folder with exactly one version: the report is no version.
    assert_eq!(
        noisebench_snapshot::list_versions(demo().parent().unwrap()).len(),
        1
    );
    // `--out` writes elsewhere.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sub/r.html");
    assert_eq!(write_report(demo(), None, Some(&out)).unwrap(), out);
    let page = std::fs::read_to_string(&out).unwrap();
    assert!(page.contains("no evaluation results for this version"));
}

#[test]
fn the_report_holds_the_snapshots_numbers() {
    let data = report_data(demo(), Some(&evals_dir())).unwrap();
    let manifest = Manifest::read(demo()).unwrap();
    assert_eq!(data.overview.version, manifest.version);
    assert_eq!(data.overview.parent, None);
    assert_eq!(data.overview.tables.len(), manifest.tables.len());
    for (name, entry) in &manifest.tables {
        assert_eq!(data.overview.tables[name], entry.rows, "{name}");
    }

    // The funnel comes from the card; every stage of the demo pipeline is there.
    let stages = data
        .stages
        .as_ref()
        .expect("the card records the run summary");
    let by_id = |id: &str| stages.iter().find(|s| s.id == id).unwrap();
    assert!(stages.len() >= 20, "{}", stages.len());
    assert_eq!(
        by_id("labels").items_out,
        manifest.tables["labels"].rows as i64
    );
    for s in stages {
        assert_eq!(s.drop_reasons.values().sum::<i64>(), s.dropped, "{}", s.id);
    }

    // Table 3a: every label row counted once, under its claim's verdict.
    let labels: Vec<ClaimDocumentLabel> = rows("labels");
    let counted: u64 = data.labels.values().flat_map(|m| m.values()).sum();
    assert_eq!(counted, labels.len() as u64);
    assert!(data.labels.keys().all(|v| v == "true" || v == "false"));
    let supporting = labels
        .iter()
        .filter(|l| l.label.as_deref() == Some("supporting"))
        .count() as u64;
    let supporting_counted: u64 = data
        .labels
        .values()
        .filter_map(|m| m.get("supporting"))
        .sum();
    assert_eq!(supporting_counted, supporting);

    assert_eq!(
        data.documents_per_claim.len() as u64,
        manifest.tables["claims"].rows
    );
    assert_eq!(
        data.document_words.len() as u64,
        manifest.tables["documents"].rows
    );
    assert_eq!(
        data.credibility.values().sum::<u64>(),
        manifest.tables["document_credibility"].rows
    );
    assert_eq!(
        data.chunk_tokens.len() as u64,
        manifest.tables["chunks"].rows
    );
    assert_eq!(
        data.graph.triplets_per_report.values().sum::<u64>(),
        manifest.tables["triplets"].rows
    );
    assert!(data.graph.grounding_rate.is_some());
    assert_eq!(data.graph.entities, manifest.tables["entities"].rows);

    // Table 7: every pattern under its kind.
    let patterns: Vec<Pattern> = rows("patterns");
    for kind in [
        "single_hop",
        "chained_multi_hop",
        "star_shaped",
        "inverted_star_shaped",
    ] {
        let expected = patterns.iter().filter(|p| p.pattern == kind).count() as u64;
        let counted: u64 = data
            .patterns
            .get(kind)
            .map(|m| m.values().sum())
            .unwrap_or(0);
        assert_eq!(counted, expected, "{kind}");
    }
    let questions: Vec<Question> = rows("questions");
    let counted: u64 = data.questions.values().flat_map(|m| m.values()).sum();
    assert_eq!(counted, questions.len() as u64);
    assert!(!data.questions.values().any(|m| m.contains_key("unsplit")));
    let judgements: Vec<QuestionJudgement> = rows("question_judgements");
    assert_eq!(
        data.judge_scores["clarity"].values().sum::<u64>(),
        judgements.len() as u64
    );
    assert_eq!(
        data.query_similarity.len() as u64,
        manifest.tables["query_perturbations"].rows
    );
    assert_eq!(
        data.retrieval.len() as u64,
        manifest.tables["retrieval_metrics"].rows
    );

    // Evaluation: the run's accuracy and robustness rows of group `all`, and nothing else.
    let manifest_id = format!("{}@{}", manifest.dataset, manifest.version);
    let metrics: Vec<Metric> = table_io::read_rows(
        &evals_dir()
            .join(&manifest_id)
            .join("offline")
            .join(METRICS_FILE),
    )
    .unwrap();
    let mut expected: Vec<(String, String, f64)> = metrics
        .iter()
        .filter(|m| m.group == "all" && (m.metric == "accuracy" || m.metric == "robustness"))
        .map(|m| (m.task.clone(), m.metric.clone(), m.value))
        .collect();
    let mut shown: Vec<(String, String, f64)> = data
        .evals
        .iter()
        .map(|e| (e.task.clone(), e.metric.clone(), e.value))
        .collect();
    expected.sort_by(|a, b| a.partial_cmp(b).unwrap());
    shown.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(shown, expected);
    assert!(shown.iter().any(|e| e.1 == "accuracy") && shown.iter().any(|e| e.1 == "robustness"));
    assert!(data.evals.iter().all(|e| e.run == "offline"));

    // First version: every table added.
    let changes = data.changes.as_ref().unwrap();
    assert_eq!(changes.from, None);
    assert_eq!(changes.tables.len(), manifest.tables.len());
    assert!(
        changes
            .tables
            .iter()
            .all(|t| t.table_status.as_deref() == Some("added") && t.added == t.rows_after)
    );
}

#[test]
fn the_page_is_self_contained() {
    let page = std::fs::read_to_string(report()).unwrap();
    for id in SECTION_IDS {
        assert!(page.contains(&format!("<section id=\"{id}\">")), "{id}");
    }
    let lower = page.to_lowercase();
    assert!(!lower.contains("<script"));
    // Addresses appear as escaped text (a document's address), never in markup.
    assert!(!lower.contains(" src=") && !lower.contains("<link") && !lower.contains("url("));
    for tag in page.split('<').skip(1) {
        let tag = tag.split('>').next().unwrap();
        assert!(!tag.contains("://"), "an address in markup: <{tag}>");
    }
    assert_eq!(
        page.matches("<figure>").count(),
        page.matches("<figcaption>").count()
    );
    assert!(page.matches("<figure>").count() >= 12);
    // The demo has every track, so no section is empty.
    assert!(!page.contains("no data: no "), "a section says no data");
}

/// The chromium binary on PATH, if any.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .find(|p| p.is_file())
}

/// Run headless chromium on `url` with `extra` arguments; its stdout and stderr. Killed after
/// two minutes (a hung browser fails the test rather than the CI run).
fn run_chromium(bin: &Path, profile: &Path, url: &str, extra: &[&str]) -> (String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let (out_path, err_path) = (tmp.path().join("out"), tmp.path().join("err"));
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--no-first-run",
            // No request leaves the machine: every host name fails to resolve, and no proxy
            // from the environment resolves it instead.
            "--no-proxy-server",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--disable-features=NetworkTimeServiceQuerying",
            "--enable-logging=stderr",
            "--log-level=0",
            "--v=1",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chromium did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let out = std::fs::read_to_string(&out_path).unwrap();
    let err = String::from_utf8_lossy(&std::fs::read(&err_path).unwrap()).into_owned();
    assert!(status.success(), "chromium failed ({status}):\n{err}");
    (out, err)
}

/// What chromium's log says the page did wrong: console messages, files other than the page,
/// network requests.
fn log_problems(log: &str, page_url: &str) -> Vec<String> {
    log.lines()
        .filter(|l| {
            l.contains(":CONSOLE")
                || l.contains("Uncaught")
                || l.split("FileURLLoader::Start: ")
                    .nth(1)
                    .is_some_and(|u| u.trim() != page_url)
                || l.split("NotifyBeforeURLRequest: ")
                    .nth(1)
                    .is_some_and(|u| !chromiums_own(u))
        })
        .map(str::to_string)
        .collect()
}

/// Whether `url` is one of the requests chromium makes on its own at startup whatever the page
/// (Google account and search services, and from chromium 156 its component updater at
/// `update.googleapis.com`; neither `--disable-background-networking` nor
/// `--disable-component-update` stops them). `--host-resolver-rules` keeps them from leaving the
/// machine.
fn chromiums_own(url: &str) -> bool {
    let host = url
        .split("://")
        .nth(1)
        .and_then(|rest| rest.split(['/', ':', '?']).next())
        .unwrap_or_default();
    // Only the updater's host of googleapis.com: a page's own request there (fonts, scripts)
    // is still a problem.
    host == "google.com" || host.ends_with(".google.com") || host == "update.googleapis.com"
}

#[test]
fn the_report_renders_in_a_browser() {
    let Some(bin) = chromium() else {
        assert!(
            std::env::var_os("NOISEBENCH_REQUIRE_READERS").is_none(),
            "no chromium on PATH; `apt-get install -y chromium`"
        );
        eprintln!("SKIPPED: no chromium or chromium-browser on PATH");
        return;
    };
    let path = report().canonicalize().unwrap();
    let url = format!("file://{}", path.display());
    let tmp = tempfile::tempdir().unwrap();

    let (dom, log) = run_chromium(&bin, &tmp.path().join("profile-dom"), &url, &["--dump-dom"]);
    for id in SECTION_IDS {
        assert!(
            dom.contains(&format!("<section id=\"{id}\">")),
            "{id} not in the DOM"
        );
    }
    // Any image must be inline (a data: URL), so none can be broken.
    for img in dom.split("<img").skip(1) {
        let tag = img.split('>').next().unwrap_or_default();
        assert!(
            tag.contains("src=\"data:"),
            "an image not inline: <img{tag}>"
        );
    }
    assert!(!dom.contains("<script"));
    assert!(dom.matches("<svg").count() >= 12, "figures in the DOM");
    let problems = log_problems(&log, &url);
    assert!(problems.is_empty(), "{problems:#?}");
    // The log is verbose enough to show the page's own load; without that line the checks above
    // would pass vacuously.
    assert!(
        log.contains(&format!("FileURLLoader::Start: {url}")),
        "{log}"
    );

    let png = tmp.path().join("report.png");
    let (_, log) = run_chromium(
        &bin,
        &tmp.path().join("profile-png"),
        &url,
        &[
            &format!("--screenshot={}", png.display()),
            "--window-size=1280,4000",
            "--hide-scrollbars",
        ],
    );
    let problems = log_problems(&log, &url);
    assert!(problems.is_empty(), "{problems:#?}");
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert!(bytes.len() > 10_000, "screenshot of {} bytes", bytes.len());
    if let Some(keep) = std::env::var_os("NOISEBENCH_KEEP_REPORT_PNG") {
        std::fs::copy(&png, keep).unwrap();
    }
}

/// Items the page shows per stratum, by kind (`claim`, `question`, `drop`) and stratum name, as
/// the demo's tables say they should be: min(per stratum, rows of the stratum).
fn expected_items(data: &noisebench_report::ReportData) -> BTreeMap<(String, String), usize> {
    let mut total: BTreeMap<(String, String), usize> = BTreeMap::new();
    let claims: Vec<Claim> = rows("claims");
    let verdict: BTreeMap<&str, &str> = claims
        .iter()
        .map(|c| (c.id.as_str(), c.verdict.as_str()))
        .collect();
    for l in rows::<ClaimDocumentLabel>("labels") {
        let stratum = format!(
            "{} / {}",
            verdict[l.claim_id.as_str()],
            l.label.as_deref().unwrap()
        );
        *total.entry(("claim".into(), stratum)).or_default() += 1;
    }
    let splits: Vec<QuestionSplit> = rows("question_splits");
    let split: BTreeMap<&str, &str> = splits
        .iter()
        .map(|s| (s.question_id.as_str(), s.split.as_str()))
        .collect();
    for q in rows::<Question>("questions") {
        let stratum = format!("{} / {}", q.kind, split[q.id.as_str()]);
        *total.entry(("question".into(), stratum)).or_default() += 1;
    }
    // Drops are not published: the funnel (from the manifest) names every stage and reason that
    // dropped an item, and the report's drop strata hold at least those.
    let sampled: BTreeMap<String, u64> = data
        .samples
        .drops
        .iter()
        .map(|s| (s.name(), s.total))
        .collect();
    for stage in data.stages.as_ref().unwrap() {
        for (reason, n) in &stage.drop_reasons {
            let name = format!("{} / {reason}", stage.id);
            assert!(
                sampled.get(&name).is_some_and(|t| *t >= *n as u64),
                "drop stratum {name} ({n} dropped) not sampled: {sampled:?}"
            );
        }
    }
    for (name, n) in sampled {
        total.insert(("drop".into(), name), n as usize);
    }
    total
        .into_iter()
        .map(|(k, n)| (k, n.min(DEFAULT_PER_STRATUM)))
        .collect()
}

/// The test script appended to a copy of the page: counts items per stratum, checks that a
/// closed item's body has no box and an opened one has, measures the figures' text boxes for
/// overlaps, and writes what it found as JSON into `<pre id="nb-test">`. With `shot`, it then
/// leaves only the item sections on the page, the first item of their first stratum open.
fn test_script(shot: bool) -> String {
    format!(
        r#"<script>
(function () {{
  const out = {{ strata: {{}}, opened: 0, closedShown: 0, openedHidden: 0,
                 texts: 0, overlaps: [] }};
  const seen = new Set();
  document.querySelectorAll('details.item').forEach(function (d) {{
    const key = d.dataset.kind + '|' + d.dataset.stratum;
    out.strata[key] = (out.strata[key] || 0) + 1;
    const body = d.querySelector('.body');
    // A closed <details> keeps its content unrendered (content-visibility: hidden).
    if (body.checkVisibility()) out.closedShown += 1;
    if (!seen.has(key)) {{
      seen.add(key);
      d.open = true;
      out.opened += 1;
      if (!(body.checkVisibility() && body.getBoundingClientRect().height > 0)) {{
        out.openedHidden += 1;
      }}
    }}
  }});
  document.querySelectorAll('figure svg').forEach(function (svg, f) {{
    const texts = Array.from(svg.querySelectorAll('text'))
      .map(function (t) {{ return {{ text: t.textContent.trim(), r: t.getBoundingClientRect() }}; }})
      .filter(function (t) {{ return t.text.length > 0 && t.r.width > 0 && t.r.height > 0; }});
    out.texts += texts.length;
    for (let i = 0; i < texts.length; i++) {{
      for (let j = i + 1; j < texts.length; j++) {{
        const a = texts[i].r, b = texts[j].r;
        const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (w > 0.5 && h > 0.5) out.overlaps.push([f, texts[i].text, texts[j].text]);
      }}
    }}
  }});
  const pre = document.createElement('pre');
  pre.id = 'nb-test';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
  if ({shot}) {{
    // The item sections alone, the first stratum of each with its first item open.
    pre.style.display = 'none';
    document.querySelectorAll('section, nav').forEach(function (s) {{
      if (s.id !== 'claim-items' && s.id !== 'question-items') s.style.display = 'none';
    }});
    document.querySelectorAll('details.item').forEach(function (d) {{ d.open = false; }});
    document.querySelectorAll('section').forEach(function (s) {{
      s.querySelectorAll('.stratum').forEach(function (st, i) {{
        if (i > 0) st.style.display = 'none';
      }});
      const first = s.querySelector('.stratum details.item');
      if (first) first.open = true;
    }});
  }}
}})();
</script>
"#
    )
}

/// A copy of the report beside it with the test script appended; its file URL.
fn instrumented(report: &Path, shot: bool) -> String {
    let page = std::fs::read_to_string(report).unwrap();
    let name = if shot {
        "items-shot.html"
    } else {
        "items-check.html"
    };
    let path = report.with_file_name(format!(
        "{}.{name}",
        report.file_name().unwrap().to_string_lossy()
    ));
    let page = page.replace("</body>", &format!("{}</body>", test_script(shot)));
    std::fs::write(&path, page).unwrap();
    format!("file://{}", path.canonicalize().unwrap().display())
}

#[test]
fn sampled_items_fold_and_figures_do_not_overlap_in_a_browser() {
    let Some(bin) = chromium() else {
        assert!(
            std::env::var_os("NOISEBENCH_REQUIRE_READERS").is_none(),
            "no chromium on PATH; `apt-get install -y chromium`"
        );
        eprintln!("SKIPPED: no chromium or chromium-browser on PATH");
        return;
    };
    let data = report_data(demo(), Some(&evals_dir())).unwrap();
    let expected = expected_items(&data);
    let kinds: std::collections::BTreeSet<&str> =
        expected.keys().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        ["claim", "drop", "question"],
        "the demo has items of every kind"
    );
    let path = report().canonicalize().unwrap();
    let url = instrumented(&path, false);
    let tmp = tempfile::tempdir().unwrap();
    let (dom, log) = run_chromium(&bin, &tmp.path().join("profile"), &url, &["--dump-dom"]);
    let problems = log_problems(&log, &url);
    assert!(problems.is_empty(), "{problems:#?}");
    let json = dom
        .split("<pre id=\"nb-test\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or_else(|| panic!("the test script wrote nothing:\n{log}"));
    let json = json
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let found: serde_json::Value = serde_json::from_str(&json).unwrap();

    // Counts per stratum: what the tables say, each stratum present.
    let shown: BTreeMap<(String, String), usize> = found["strata"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, n)| {
            let (kind, stratum) = k.split_once('|').unwrap();
            (
                (kind.to_string(), stratum.to_string()),
                n.as_u64().unwrap() as usize,
            )
        })
        .collect();
    assert_eq!(shown, expected);
    // Folding: every item starts closed (its body not rendered); each opened one shows its body.
    assert_eq!(found["closedShown"], 0, "{found}");
    assert_eq!(found["opened"].as_u64().unwrap() as usize, expected.len());
    assert_eq!(found["openedHidden"], 0, "{found}");
    // Figures: many text boxes measured, none overlapping another of its figure.
    assert!(found["texts"].as_u64().unwrap() > 100, "{found}");
    assert_eq!(found["overlaps"], serde_json::json!([]), "{found}");

    // The screenshot of the item sections.
    let shot_url = instrumented(&path, true);
    let png = tmp.path().join("items.png");
    let (_, log) = run_chromium(
        &bin,
        &tmp.path().join("profile-png"),
        &shot_url,
        &[
            &format!("--screenshot={}", png.display()),
            "--window-size=1280,3600",
            "--hide-scrollbars",
        ],
    );
    let problems = log_problems(&log, &shot_url);
    assert!(problems.is_empty(), "{problems:#?}");
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert!(bytes.len() > 10_000, "screenshot of {} bytes", bytes.len());
    if let Some(keep) = std::env::var_os("NOISEBENCH_KEEP_ITEMS_PNG") {
        std::fs::copy(&png, keep).unwrap();
    }
}

#[test]
fn log_problems_catch_what_they_are_for() {
    let url = "file:///r/1.0.0.report.html";
    let log = "[1:1:x:INFO:CONSOLE:1] \"boom\", source: file:///r/1.0.0.report.html (1)\n\
        [1:2:x:VERBOSE1:content/browser/loader/file_url_loader_factory.cc:474] FileURLLoader::Start: file:///r/1.0.0.report.html\n\
        [1:2:x:VERBOSE1:content/browser/loader/file_url_loader_factory.cc:474] FileURLLoader::Start: file:///r/style.css\n\
        [1:3:x:VERBOSE1:net/base/network_delegate.cc:38] NetworkDelegate::NotifyBeforeURLRequest: http://127.0.0.1:9/x.png\n\
        [1:3:x:VERBOSE1:net/base/network_delegate.cc:38] NetworkDelegate::NotifyBeforeURLRequest: https://accounts.google.com/ListAccounts?gpsia=1\n\
        [1:3:x:VERBOSE1:net/base/network_delegate.cc:38] NetworkDelegate::NotifyBeforeURLRequest: https://evil.google.com.example.org/x\n\
        [1:3:x:VERBOSE1:net/base/network_delegate.cc:38] NetworkDelegate::NotifyBeforeURLRequest: https://update.googleapis.com/service/update2/json?cup2key=1\n\
        [1:3:x:VERBOSE1:net/base/network_delegate.cc:38] NetworkDelegate::NotifyBeforeURLRequest: https://fonts.googleapis.com/css?family=Inter\n";
    let found = log_problems(log, url);
    assert_eq!(found.len(), 5, "{found:#?}");
    assert!(found[3].ends_with("example.org/x"));
    assert!(
        found[4].ends_with("family=Inter"),
        "a page's own font request"
    );
    assert!(found[1].ends_with("style.css"));
}

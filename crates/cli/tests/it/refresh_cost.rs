//! What a refresh costs: the demo pipeline, both tracks, against a fake OpenAI-compatible
//! endpoint that counts requests, with a generated report of 120 chunks added to the report
//! track. A full build pays R requests; a refresh with no source change pays none and publishes
//! nothing; a refresh after editing 5% of the documents (every replayed web page and five posts
//! of the Reddit dump) and 5% of all report chunks pays at most 6% of R and publishes exactly
//! the rows that follow from the edit (facts keep their ids when their sentence is unchanged, so
//! their patterns keep their questions, which are not asked again); deleting a chunk's text
//! retires its questions.
//!
//! The endpoint answers each task with its offline rule over the structured input the request
//! carries (`send_task`: queries, triplets, questions, rewrites, back-translations, and any task
//! added later; so the recorded search answers match and the graph is as rich as the offline
//! demo's), or with fixed valid answers that differ when the input holds the edit's mark (exam
//! and stance votes, judge scores).

use crate::reliability_common;

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use noisebench_cli::{Workspace, build_snapshot};
use noisebench_core::{
    Chunk, ClaimDocument, ClaimDocumentLabel, Document, DocumentPerturbation, NoProgress, Pattern,
    QueryPerturbation, Question, QuestionSplit, SearchHit, Triplet,
};
use noisebench_llm::TaskInfo;
use noisebench_pipeline::table_io;
use noisebench_search::RedditPost;
use noisebench_search::backends::reddit_dump::read_posts;
use noisebench_snapshot::{Changes, PublishOptions, PublishOutcome};
use noisebench_testkit::{FakeServer, Reply};
use serde_json::{Value, json};

/// What the edits put in a page or a chunk; answers to prompts holding it differ.
const MARK: &str = "REVISED";

fn hash_of(v: &impl Hash) -> u64 {
    let mut h = DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

fn between<'a>(text: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let from = text.find(start)? + start.len();
    let len = text[from..].find(end)?;
    Some(&text[from..from + len])
}

/// Every task the pipeline's stages declare, by name (filled once the workspace has loaded it).
type Declared = Arc<OnceLock<BTreeMap<&'static str, TaskInfo>>>;

/// A valid answer to any task the demo asks, from the request's task and structured input
/// (`send_task`), never from the prompt's wording: the task's offline rule over the input (so
/// the queries match the recorded search answers and the graph is as rich as the offline
/// demo's), except the labels' and the judge's, fixed and different when the input holds
/// [`MARK`] so an edited document's labels change, and the triplets' gleaning pass, which finds
/// nothing more.
fn answer(declared: &Declared, body: &Value) -> Value {
    let task = body["noisebench_task"]["name"].as_str().unwrap_or("");
    let input = &body["noisebench_task"]["input"];
    let text = input.to_string();
    let h = hash_of(&text);
    let marked = text.contains(MARK);
    match task {
        "exam_verdict" => {
            json!({"verdict": if marked { "undecided" } else { ["true", "false"][(h % 2) as usize] }})
        }
        "stance_url" | "stance_text" => {
            json!({"stance": if marked { "not enough evidence" } else { ["support", "reject"][(h % 2) as usize] }})
        }
        "stance_reasoned" => json!({"reasoning": "The page says so.",
            "stance": if marked { "not enough evidence" } else { ["support", "reject"][(h % 2) as usize] }}),
        "credibility" => json!({"credibility": "medium", "source_type": "other"}),
        "triplets" if input["found"].as_array().is_some_and(|f| !f.is_empty()) => {
            json!({"triplets": []})
        }
        "qa_judge" => {
            let multi = input["multi_hop"].as_bool().unwrap_or(false);
            json!({"clarity": 5, "correctness": 5, "reasonableness": if multi { Some(5) } else { None }})
        }
        _ => {
            let tasks = declared
                .get()
                .expect("the pipeline is loaded before it asks");
            let info = tasks
                .get(task)
                .unwrap_or_else(|| panic!("task `{task}`: no stage of the demo declares it"));
            info.offline(input)
                .unwrap_or_else(|e| panic!("task `{task}`: {e}"))
        }
    }
}

/// The endpoint and the requests it received per task since the last `take`.
struct Endpoint {
    server: FakeServer,
    tasks: Arc<Mutex<BTreeMap<String, usize>>>,
    declared: Declared,
}

impl Endpoint {
    fn start() -> Self {
        let tasks = Arc::new(Mutex::new(BTreeMap::<String, usize>::new()));
        let declared = Declared::default();
        let (t, d) = (tasks.clone(), declared.clone());
        let server = FakeServer::answering(move |body| {
            let task = body["noisebench_task"]["name"]
                .as_str()
                .unwrap_or("")
                .to_string();
            *t.lock().unwrap().entry(task).or_default() += 1;
            Reply::Content(answer(&d, body).to_string())
        });
        Endpoint {
            server,
            tasks,
            declared,
        }
    }

    /// What the endpoint answers from: the tasks the workspace's pipeline declares.
    fn learn_tasks(&self, ws: &Workspace) {
        let loaded = ws.load("demo").unwrap();
        let tasks = loaded.layers.llm.declared_tasks();
        let _ = self
            .declared
            .set(tasks.into_iter().map(|t| (t.name, t)).collect());
    }

    fn take(&self) -> (usize, BTreeMap<String, usize>) {
        let tasks = std::mem::take(&mut *self.tasks.lock().unwrap());
        (tasks.values().sum(), tasks)
    }
}

/// Sections of the generated report. Each is one paragraph of about 500 tokens, so two never
/// share a 600-token chunk and each section is one chunk.
const SECTIONS: usize = 120;
const FIRST: &[&str] = &[
    "Alder",
    "Birchwood",
    "Cedarline",
    "Dunmore",
    "Elmstead",
    "Fernhill",
    "Glenrock",
    "Hawthorn",
    "Ivybridge",
    "Juniper",
    "Kestwick",
    "Larchmont",
];
const SECOND: &[&str] = &[
    "Foundry",
    "Orchards",
    "Textiles",
    "Robotics",
    "Dairy",
    "Shipyards",
    "Bakeries",
    "Quarries",
    "Ceramics",
    "Forestry",
    "Tanneries",
];

fn entity(i: usize) -> String {
    format!(
        "{} {}",
        FIRST[i % FIRST.len()],
        SECOND[(i / FIRST.len()) % SECOND.len()]
    )
}

/// Section `i`: a fact linking it to the next section's entity (so chains cross chunks), a
/// head count, and plain text that states no fact.
fn section(i: usize) -> String {
    let filler = [
        "Crews worked through the season on the northern yards and kept every schedule on track.",
        "Weather along the coast stayed mild for most of the quarter, which helped the outdoor teams.",
        "Local suppliers delivered on time, and the warehouses stayed tidy and well organised.",
        "Training sessions ran every month so that new staff could learn the safety rules quickly.",
        "Visitors from nearby towns toured the sites and asked about apprenticeships and open days.",
        "Energy use per unit of output went down slightly after older lighting was replaced.",
        "Managers met with neighbours twice to talk about traffic, noise and the opening hours.",
        "Most of the equipment is now less than ten years old, and repairs are planned ahead.",
        "Volunteers planted trees along the access road and cleaned the riverbank in the spring.",
        "The canteen switched to local produce, and staff surveys show that most people like it.",
        "Insurance claims were rare this year, and none of them concerned serious injuries.",
        "Night shifts were shortened in the winter to reduce fatigue among the loading crews.",
        "Documents for the audit were prepared early, and the auditors asked for few changes.",
        "Plans for the coming year focus on steady growth, careful spending and staff wellbeing.",
    ];
    let mut text = format!(
        "## Unit {i}\n\n{} acquired {}. {} employs {} people. Unit {i} notes follow.",
        entity(i),
        entity(i + 1),
        entity(i),
        100 + 7 * i,
    );
    for k in 0..2 * filler.len() {
        text.push(' ');
        text.push_str(filler[(i + k) % filler.len()]);
    }
    text.push_str(&format!(" This closes the notes of unit {i}.\n\n"));
    text
}

fn report(sections: &[usize], edited: &BTreeSet<usize>) -> String {
    let mut out = String::from(
        "# Meridian Trade Survey 2024\n\nThis survey is fictional, generated by noisebench's refresh cost test.\n\n",
    );
    for &i in sections {
        let s = section(i);
        out.push_str(&if edited.contains(&i) {
            s.replacen("Crews worked", &format!("{MARK} crews worked"), 1)
                .replacen("Weather along", &format!("{MARK} weather along"), 1)
        } else {
            s
        });
    }
    out
}

/// A checkout of the demo with the generated report, `[llm]` pointed at `url`.
fn checkout(url: &str) -> tempfile::TempDir {
    let dir = noisebench_testkit::checkout();
    let cache = format!(
        "cache = {{ dir = \"{}\" }}",
        dir.path().join("work/cache").display()
    );
    let pointed = reliability_common::demo_at_endpoint(
        dir.path(),
        url,
        &cache,
        "max_concurrency = 8\nmax_retries = 0",
    )
    .replace("fixtures/reddit/posts.ndjson.zst", DUMP);
    // The generated report's sections are alike by design, so its questions are near-twins of
    // each other across splits; this test measures what a refresh costs, not the leakage gate.
    let pointed = format!("{pointed}\n[quality.gates]\nmax_cross_split_duplicate_share = 1.0\n");
    std::fs::write(dir.path().join("pipelines/demo.toml"), pointed).unwrap();
    dir
}

fn write_report(root: &Path, sections: &[usize], edited: &BTreeSet<usize>) {
    std::fs::write(
        root.join("fixtures/reports/kg/meridian_survey_2024.md"),
        report(sections, edited),
    )
    .unwrap();
}

/// The pages the edit changes (every web page the documents stage reads: the rest of the
/// documents are posts of the Reddit dump) and the host each is served from. The WHO page and
/// its mirror are edited alike, so they stay one document.
const PAGES: &[(&str, &str)] = &[
    ("fixtures/web/who/5g-myth.html", "www.who.int"),
    ("fixtures/web/mirror/who-5g-myth.html", "mirror.example.net"),
    ("fixtures/web/reuters/lemon.html", "www.reuters.com"),
    ("fixtures/web/cdc/myths.html", "www.cdc.gov"),
    (
        "fixtures/web/health-forum/lemon-water.html",
        "health-forum.example.org",
    ),
];

fn edit_pages(root: &Path) {
    for (page, _) in PAGES {
        let path = root.join(page);
        let html = std::fs::read(&path).unwrap();
        // The forum page is windows-1252: edit bytes, inserting ASCII only.
        let at = html
            .windows(3)
            .position(|w| w == b"<p>")
            .expect("a paragraph to edit")
            + 3;
        let mut edited = html[..at].to_vec();
        edited.extend_from_slice(format!("{MARK}: this page was updated. ").as_bytes());
        edited.extend_from_slice(&html[at..]);
        std::fs::write(&path, edited).unwrap();
    }
}

/// The Reddit dump as plain NDJSON (the dump reader takes either), so the test can edit posts
/// without a zstd encoder; both stages that read it are pointed at this copy.
const DUMP: &str = "fixtures/reddit/posts.ndjson";

fn read_dump(root: &Path) -> Vec<RedditPost> {
    let mut posts = Vec::new();
    read_posts(&root.join("fixtures/reddit/posts.ndjson.zst"), |p| {
        posts.push(p)
    })
    .unwrap();
    posts
}

/// Writes the posts as NDJSON, `edit`ed ones with [`MARK`] in their body.
fn write_dump(root: &Path, posts: &[RedditPost], edit: &BTreeSet<String>) {
    let mut out = String::new();
    for p in posts {
        let selftext = if edit.contains(&p.id) {
            format!("{MARK}: edited by its author. {}", p.selftext)
        } else {
            p.selftext.clone()
        };
        let line = json!({
            "id": p.id, "title": p.title, "selftext": selftext, "subreddit": p.subreddit,
            "author": p.author, "created_utc": p.created_utc, "score": p.score,
            "permalink": p.permalink, "url": p.url, "is_self": p.is_self,
            "removed_by_category": p.removed_by_category,
        });
        out.push_str(&line.to_string());
        out.push('\n');
    }
    std::fs::write(root.join(DUMP), out).unwrap();
}

fn rows<T: noisebench_core::TableRow>(snapshot: &Path, table: &str) -> Vec<T> {
    table_io::read_rows(&snapshot.join(format!("data/{table}.parquet"))).unwrap()
}

fn published(outcome: Option<PublishOutcome>) -> (std::path::PathBuf, Changes) {
    match outcome {
        Some(PublishOutcome::Published { dir, changes, .. }) => (dir, changes),
        other => panic!("expected a new version, got {other:?}"),
    }
}

type Ids = BTreeSet<String>;

/// (added, removed, changed) of a table.
fn diff(changes: &Changes, table: &str) -> (Ids, Ids, Ids) {
    changes
        .tables
        .get(table)
        .map_or_else(Default::default, |t| {
            (
                t.added.iter().cloned().collect(),
                t.removed.iter().cloned().collect(),
                t.changed.iter().cloned().collect(),
            )
        })
}

fn ids_where<T>(rows: &[T], id: impl Fn(&T) -> &str, keep: impl Fn(&T) -> bool) -> Ids {
    rows.iter()
        .filter(|r| keep(r))
        .map(|r| id(r).to_string())
        .collect()
}

fn print_changes(label: &str, changes: &Changes) {
    println!(
        "{label}: {} -> {}",
        changes.from.as_deref().unwrap_or("-"),
        changes.to
    );
    for (table, t) in &changes.tables {
        if !(t.added.is_empty() && t.removed.is_empty() && t.changed.is_empty()) {
            println!(
                "  {table:<24} rows {:>5} -> {:>5}: +{} -{} ~{}",
                t.rows_before,
                t.rows_after,
                t.added.len(),
                t.removed.len(),
                t.changed.len()
            );
        }
    }
}

#[test]
fn a_refresh_costs_what_changed() {
    let endpoint = Endpoint::start();
    let dir = checkout(&endpoint.server.url());
    let root = dir.path();
    let all: Vec<usize> = (0..SECTIONS).collect();
    write_report(root, &all, &BTreeSet::new());
    let posts = read_dump(root);
    write_dump(root, &posts, &BTreeSet::new());
    let mut ws = Workspace::at(root, Arc::new(NoProgress));
    endpoint.learn_tasks(&ws);

    // 1. The full build.
    let full = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
    let (r_full, per_task) = endpoint.take();
    println!("R_full = {r_full} requests: {per_task:?}");
    let (v1, _) = published(full.outcome);
    let chunks_v1: Vec<Chunk> = rows(&v1, "chunks");
    let generated: Vec<&Chunk> = chunks_v1
        .iter()
        .filter(|c| c.text.contains("This closes the notes of unit"))
        .collect();
    assert_eq!(generated.len(), SECTIONS, "one chunk per section");
    let questions_v1: Vec<Question> = rows(&v1, "questions");
    assert!(
        questions_v1.len() >= 100,
        "the report track matters: {} questions",
        questions_v1.len()
    );

    // 2. A refresh with nothing changed: no request, nothing published.
    ws.refresh = true;
    let quiet = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
    let (r_quiet, per_task) = endpoint.take();
    println!("refresh, nothing changed: {r_quiet} requests {per_task:?}");
    assert_eq!(r_quiet, 0, "{per_task:?}");
    assert!(
        matches!(quiet.outcome, Some(PublishOutcome::Unchanged { .. })),
        "{:?}",
        quiet.outcome
    );

    // 3. 5% of all report chunks (10 of the 187: the demo's and the generated report's) and 5%
    // of the documents edited.
    let edited: BTreeSet<usize> = (0..SECTIONS).filter(|i| i % 12 == 7).collect();
    assert!(
        edited.len() * 100 >= 5 * chunks_v1.len() && (edited.len() - 1) * 100 < 5 * chunks_v1.len(),
        "{} of {} chunks",
        edited.len(),
        chunks_v1.len()
    );
    println!(
        "chunks edited: {} of {} ({:.1}%)",
        edited.len(),
        chunks_v1.len(),
        100.0 * edited.len() as f64 / chunks_v1.len() as f64
    );
    write_report(root, &all, &edited);
    edit_pages(root);
    // And five posts of the dump that are documents, to reach 5% of the documents.
    let docs_v1: Vec<Document> = rows(&v1, "documents");
    let edited_posts: BTreeSet<String> = posts
        .iter()
        .filter(|p| !p.selftext.is_empty() && !p.body_removed())
        .filter(|p| docs_v1.iter().any(|d| d.url == p.post_url()))
        .map(|p| p.id.clone())
        .take(5)
        .collect();
    assert_eq!(edited_posts.len(), 5);
    write_dump(root, &posts, &edited_posts);
    let refreshed = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
    let (r_edit, per_task) = endpoint.take();
    println!(
        "refresh after the edit: {r_edit} requests ({:.1}% of R_full) {per_task:?}",
        100.0 * r_edit as f64 / r_full as f64
    );
    let (v2, changes) = published(refreshed.outcome);
    print_changes("edit", &changes);

    // Documents: the edited pages' rows changed, and every label of theirs.
    let docs_v2: Vec<Document> = rows(&v2, "documents");
    let edited_urls: BTreeSet<String> = posts
        .iter()
        .filter(|p| edited_posts.contains(&p.id))
        .map(RedditPost::post_url)
        .collect();
    let edited_docs = ids_where(
        &docs_v2,
        |d| &d.id,
        |d| edited_urls.contains(&d.url) || PAGES.iter().any(|(_, host)| d.url.contains(host)),
    );
    assert_eq!(edited_docs.len(), PAGES.len() - 1 + 5, "{edited_docs:?}");
    println!(
        "documents edited: {} of {} ({:.1}%)",
        edited_docs.len(),
        docs_v2.len(),
        100.0 * edited_docs.len() as f64 / docs_v2.len() as f64
    );
    // The edited posts' new text moves BM25 scores over the dump: a few hits enter or leave a
    // query's top 10 (`search_hits`), so a document may be added and a claim-document pair may
    // come or go. Every added document is reached by an added hit.
    let hits_v2: Vec<SearchHit> = rows(&v2, "search_hits");
    let (hits_added, _, _) = diff(&changes, "search_hits");
    let new_urls: BTreeSet<&str> = hits_v2
        .iter()
        .filter(|h| hits_added.contains(&h.id))
        .map(|h| h.url.as_str())
        .collect();
    let docs_added = ids_where(
        &docs_v2,
        |d| &d.id,
        |d| new_urls.contains(d.url.as_str()) && !docs_v1.iter().any(|o| o.id == d.id),
    );
    assert_eq!(
        diff(&changes, "documents"),
        (docs_added, Ids::new(), edited_docs.clone())
    );
    // Labels: those of the edited documents changed, those of pairs that came or went added or
    // removed, no other.
    let labels_v1: Vec<ClaimDocumentLabel> = rows(&v1, "labels");
    let labels_v2: Vec<ClaimDocumentLabel> = rows(&v2, "labels");
    let pairs = |snapshot: &Path, ids: &Ids| -> BTreeSet<(String, String)> {
        rows::<ClaimDocument>(snapshot, "claim_documents")
            .into_iter()
            .filter(|l| ids.contains(&l.id))
            .map(|l| (l.claim_id, l.document_id))
            .collect()
    };
    let (links_added, links_removed, _) = diff(&changes, "claim_documents");
    let (pairs_added, pairs_removed) = (pairs(&v2, &links_added), pairs(&v1, &links_removed));
    let pair = |l: &ClaimDocumentLabel| (l.claim_id.clone(), l.document_id.clone());
    let labels_added = ids_where(&labels_v2, |l| &l.id, |l| pairs_added.contains(&pair(l)));
    let labels_removed = ids_where(&labels_v1, |l| &l.id, |l| pairs_removed.contains(&pair(l)));
    let edited_labels = ids_where(
        &labels_v2,
        |l| &l.id,
        |l| edited_docs.contains(&l.document_id) && !labels_added.contains(&l.id),
    );
    assert!(!edited_labels.is_empty());
    assert_eq!(
        diff(&changes, "labels"),
        (labels_added, labels_removed, edited_labels)
    );

    // Chunks: the edited sections' chunks are new ids; nothing else moved.
    let chunks_v2: Vec<Chunk> = rows(&v2, "chunks");
    let is_edited = |c: &Chunk| c.text.contains(MARK);
    let new_chunks = ids_where(&chunks_v2, |c| &c.id, is_edited);

    assert_eq!(new_chunks.len(), edited.len());
    let unit_of = |c: &Chunk| -> Option<usize> {
        between(&c.text, "This closes the notes of unit ", ".").and_then(|n| n.parse().ok())
    };
    let old_chunks = ids_where(
        &chunks_v1,
        |c| &c.id,
        |c| unit_of(c).is_some_and(|u| edited.contains(&u)),
    );
    assert_eq!(
        diff(&changes, "chunks"),
        (new_chunks.clone(), old_chunks.clone(), Ids::new())
    );
    let in_edited = |ids: &[String]| {
        ids.iter()
            .any(|c| old_chunks.contains(c) || new_chunks.contains(c))
    };

    // Triplets: a triplet's id is its report, fact and sentence, so the facts of an edited chunk
    // keep their ids and only their `chunk_id` changed; a fact of an edited sentence is new, the
    // old one retired. The other chunks of the edited windows were asked again and gave the same
    // rows; no triplet outside the edited chunks moved.
    let triplets_v1: Vec<Triplet> = rows(&v1, "triplets");
    let triplets_v2: Vec<Triplet> = rows(&v2, "triplets");
    let ids_v1 = ids_where(&triplets_v1, |t| &t.id, |_| true);
    let ids_v2 = ids_where(&triplets_v2, |t| &t.id, |_| true);
    let t_removed = ids_where(
        &triplets_v1,
        |t| &t.id,
        |t| old_chunks.contains(&t.chunk_id) && !ids_v2.contains(&t.id),
    );
    let t_added = ids_where(
        &triplets_v2,
        |t| &t.id,
        |t| new_chunks.contains(&t.chunk_id) && !ids_v1.contains(&t.id),
    );
    let t_moved = ids_where(
        &triplets_v2,
        |t| &t.id,
        |t| new_chunks.contains(&t.chunk_id) && ids_v1.contains(&t.id),
    );
    assert!(
        !t_moved.is_empty(),
        "the edited chunks' facts keep their ids"
    );
    assert_eq!(
        diff(&changes, "triplets"),
        (t_added.clone(), t_removed.clone(), t_moved.clone())
    );

    // Patterns and questions: a pattern over a new or retired triplet is new or retired; one
    // over a moved triplet keeps its id and question (its `chunk_ids` / `answer_chunk_ids`
    // changed); no other.
    let patterns_v1: Vec<Pattern> = rows(&v1, "patterns");
    let patterns_v2: Vec<Pattern> = rows(&v2, "patterns");
    let pids_v1 = ids_where(&patterns_v1, |p| &p.id, |_| true);
    let pids_v2 = ids_where(&patterns_v2, |p| &p.id, |_| true);
    let p_removed = ids_where(&patterns_v1, |p| &p.id, |p| !pids_v2.contains(&p.id));
    let p_added = ids_where(&patterns_v2, |p| &p.id, |p| !pids_v1.contains(&p.id));
    for p in patterns_v1.iter().filter(|p| p_removed.contains(&p.id)) {
        assert!(p.triplet_ids.iter().any(|t| t_removed.contains(t)), "{p:?}");
    }
    for p in patterns_v2.iter().filter(|p| p_added.contains(&p.id)) {
        assert!(p.triplet_ids.iter().any(|t| t_added.contains(t)), "{p:?}");
    }
    let p_moved = ids_where(
        &patterns_v2,
        |p| &p.id,
        |p| pids_v1.contains(&p.id) && in_edited(&p.chunk_ids),
    );
    assert_eq!(
        diff(&changes, "patterns"),
        (p_added.clone(), p_removed.clone(), p_moved.clone())
    );
    let questions_v2: Vec<Question> = rows(&v2, "questions");
    let q_removed = ids_where(
        &questions_v1,
        |q| &q.id,
        |q| p_removed.contains(&q.pattern_id),
    );
    let q_added = ids_where(
        &questions_v2,
        |q| &q.id,
        |q| p_added.contains(&q.pattern_id),
    );
    let q_moved = ids_where(
        &questions_v2,
        |q| &q.id,
        |q| !p_added.contains(&q.pattern_id) && in_edited(&q.answer_chunk_ids),
    );
    assert!(!q_moved.is_empty(), "questions over the edited chunks kept");
    for q in questions_v2.iter().filter(|q| q_moved.contains(&q.id)) {
        let before = questions_v1.iter().find(|o| o.id == q.id).unwrap();
        assert_eq!(
            (&before.question, &before.answer),
            (&q.question, &q.answer),
            "a kept question keeps its text and answer"
        );
    }
    let splits = |snapshot: &Path| -> BTreeMap<String, String> {
        rows::<QuestionSplit>(snapshot, "question_splits")
            .into_iter()
            .map(|s| (s.question_id, s.split))
            .collect()
    };
    let (splits_v1, splits_v2) = (splits(&v1), splits(&v2));
    for q in &q_moved {
        assert_eq!(
            splits_v1.get(q),
            splits_v2.get(q),
            "a kept question keeps its split"
        );
    }
    assert_eq!(
        diff(&changes, "questions"),
        (q_added.clone(), q_removed.clone(), q_moved.clone())
    );

    // Perturbations: those of the new and retired questions; a kept question's query
    // perturbations are unchanged, its document perturbations of an edited chunk are new.
    let qp_v1: Vec<QueryPerturbation> = rows(&v1, "query_perturbations");
    let qp_v2: Vec<QueryPerturbation> = rows(&v2, "query_perturbations");
    assert_eq!(
        diff(&changes, "query_perturbations"),
        (
            ids_where(&qp_v2, |p| &p.id, |p| q_added.contains(&p.question_id)),
            ids_where(&qp_v1, |p| &p.id, |p| q_removed.contains(&p.question_id)),
            Ids::new()
        )
    );
    let dp_v1: Vec<DocumentPerturbation> = rows(&v1, "document_perturbations");
    let dp_v2: Vec<DocumentPerturbation> = rows(&v2, "document_perturbations");
    assert_eq!(
        diff(&changes, "document_perturbations"),
        (
            ids_where(
                &dp_v2,
                |p| &p.id,
                |p| q_added.contains(&p.question_id) || new_chunks.contains(&p.chunk_id)
            ),
            ids_where(
                &dp_v1,
                |p| &p.id,
                |p| q_removed.contains(&p.question_id) || old_chunks.contains(&p.chunk_id)
            ),
            Ids::new()
        )
    );
    // What was asked again, task by task: each edited chunk's window and at most the next one,
    // one question per new pattern (a kept pattern's question is reused: its facts and their
    // sentences are unchanged), a judgement per new question, a back-translation per new
    // chunk, the edited documents' labels (the stance-from-URL vote sees no page text, so only
    // new pairs ask it) and the new pairs' labels.
    let asked = |task: &str| per_task.get(task).copied().unwrap_or(0);
    assert!(asked("triplets") <= 2 * edited.len(), "{per_task:?}");
    assert_eq!(asked("qa_single") + asked("qa_multi"), p_added.len());
    assert_eq!(asked("qa_judge"), q_added.len());
    assert!(asked("back_translate") <= new_chunks.len(), "{per_task:?}");
    let (labels_added, _, labels_changed) = diff(&changes, "labels");
    for task in ["exam_verdict", "stance_text", "stance_reasoned"] {
        assert_eq!(
            asked(task),
            labels_added.len() + labels_changed.len(),
            "{task}"
        );
    }
    assert_eq!(asked("stance_url"), labels_added.len());
    assert!(
        r_edit * 100 <= r_full * 6,
        "the refresh paid {r_edit} requests, over 6% of the full build's {r_full}: {per_task:?}"
    );

    // 4. A section deleted: its chunk vanishes and its questions are retired.
    let gone = 60;
    let kept: Vec<usize> = all.iter().copied().filter(|&i| i != gone).collect();
    write_report(root, &kept, &edited);
    let gone_chunk = chunks_v2
        .iter()
        .find(|c| unit_of(c) == Some(gone))
        .unwrap()
        .id
        .clone();
    let retired = ids_where(
        &questions_v2,
        |q| &q.id,
        |q| q.answer_chunk_ids.contains(&gone_chunk),
    );
    assert!(!retired.is_empty(), "the deleted chunk answers questions");
    let deleted = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
    let (r_delete, per_task) = endpoint.take();
    println!("refresh after deleting one chunk: {r_delete} requests {per_task:?}");
    let (_, changes) = published(deleted.outcome);
    print_changes("delete", &changes);
    // The chunk is gone; the report's later chunks moved up one place (their `index`), nothing
    // else of theirs changed.
    let gone_at = chunks_v2.iter().find(|c| c.id == gone_chunk).unwrap();
    let moved = ids_where(
        &chunks_v2,
        |c| &c.id,
        |c| c.report_id == gone_at.report_id && c.index > gone_at.index,
    );
    assert_eq!(
        diff(&changes, "chunks"),
        (Ids::new(), Ids::from([gone_chunk.clone()]), moved)
    );
    // Its questions are retired, and no other question is touched.
    assert_eq!(
        diff(&changes, "questions"),
        (Ids::new(), retired, Ids::new())
    );
    assert_eq!(
        r_delete, 1,
        "only the deleted chunk's window is asked again"
    );
}

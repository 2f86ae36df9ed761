//! The sampled items' sections: per stratum a heading with its count, then each item folded in
//! a `<details class="item">` whose summary says what it is and whose body holds everything
//! about it, long texts folded again. Every item names the `noisebench inspect` command that
//! shows it whole; every text is escaped.

use std::fmt::Write;
use std::ops::Range;

use noisebench_core::DropRecord;

use crate::escape::escape;
use crate::items::{
    ClaimItem, DiffPiece, DocumentItem, Evidence, MarkedChunk, QuestionItem, SampleStratum, Samples,
};

/// A text longer than this many characters is cut (the inspect command shows it whole).
pub(crate) const MAX_TEXT_CHARS: usize = 4_000;
/// Characters of a text in an item's one-line summary.
const SUMMARY_CHARS: usize = 140;

pub(crate) const CSS: &str = "details.item{border:1px solid #ddd;border-radius:4px;margin:.4em 0;\
padding:.3em .7em;background:#fcfcfc}details.item[open]{background:#fff}\
details>summary{cursor:pointer}details.item>summary{font-size:.95em}\
details.text,details.doc{margin:.4em 0 .4em 1em}\
.passage{white-space:pre-wrap;font-size:.85em;background:#f6f6f6;padding:.5em;\
border-left:3px solid #ccc;overflow-wrap:anywhere}\
mark{background:#ffe066}del{background:#fdd;text-decoration:line-through}\
ins{background:#cfc;text-decoration:none}\
code.cmd{display:block;font-size:.85em;background:#f0f0f0;padding:.2em .4em;user-select:all;\
overflow-wrap:anywhere}.hit{color:#176b2c;font-weight:bold}.miss{color:#a11}\
.badge{display:inline-block;font-size:.8em;padding:0 .4em;border-radius:3px;background:#e8eef8;\
margin-right:.3em}.stratum h3 .count{font-weight:normal;color:#666;font-size:.85em}\
table.kv th{width:11em;vertical-align:top}.note{color:#666;font-size:.85em}";

/// `text` cut to `max` characters, and whether it was cut.
fn cut(text: &str, max: usize) -> (&str, bool) {
    match text.char_indices().nth(max) {
        Some((i, _)) => (&text[..i], true),
        None => (text, false),
    }
}

/// A one-line summary of `text`: whitespace runs as one space, cut with an ellipsis.
fn short(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let (head, was_cut) = cut(&line, SUMMARY_CHARS);
    if was_cut {
        format!("{}\u{2026}", escape(head))
    } else {
        escape(head)
    }
}

/// A long text in a folded block: its summary says what it is and how long.
fn folded(what: &str, text: &str, open: bool) -> String {
    let n = text.chars().count();
    let (head, was_cut) = cut(text, MAX_TEXT_CHARS);
    let note = if was_cut {
        format!(
            "<p class=\"note\">Cut at {MAX_TEXT_CHARS} of {n} characters; the inspect command \
             above shows it whole.</p>"
        )
    } else {
        String::new()
    };
    format!(
        "<details class=\"text\"{}><summary>{} ({n} characters)</summary>\
         <div class=\"passage\">{}</div>{note}</details>\n",
        if open { " open" } else { "" },
        escape(what),
        escape(head)
    )
}

/// `text` with `marks` (byte ranges) wrapped in `<mark>`, escaped, cut at [`MAX_TEXT_CHARS`].
pub(crate) fn marked(text: &str, marks: &[Range<usize>]) -> String {
    let (head, _) = cut(text, MAX_TEXT_CHARS);
    let mut out = String::new();
    let mut at = 0;
    for r in marks {
        let (start, end) = (r.start.min(head.len()), r.end.min(head.len()));
        if start < at
            || start >= end
            || !head.is_char_boundary(start)
            || !head.is_char_boundary(end)
        {
            continue;
        }
        out.push_str(&escape(&head[at..start]));
        let _ = write!(out, "<mark>{}</mark>", escape(&head[start..end]));
        at = end;
    }
    out.push_str(&escape(&head[at..]));
    out
}

/// The command that shows an item whole.
fn command(what: &str, id: &str, pipeline_file: &str) -> String {
    format!(
        "<code class=\"cmd\">noisebench inspect {what} {} --pipeline {}</code>\n",
        escape(id),
        escape(pipeline_file)
    )
}

/// Rows of a two-column table; values are HTML already (escape before).
fn kv(rows: &[(&str, String)]) -> String {
    let mut out = String::from("<table class=\"kv\">\n");
    for (k, v) in rows {
        if v.is_empty() {
            continue;
        }
        let _ = writeln!(out, "<tr><th>{}</th><td>{v}</td></tr>", escape(k));
    }
    out.push_str("</table>\n");
    out
}

fn opt(v: &Option<String>) -> String {
    v.as_deref().map(escape).unwrap_or_default()
}

/// An anchor-safe id for a stratum.
fn anchor(kind: &str, index: usize) -> String {
    format!("{kind}-stratum-{index}")
}

/// The strata of a section: a table of counts linking to each, then each stratum's items.
fn strata<T>(
    kind: &str,
    unit: &str,
    strata: &[SampleStratum<T>],
    item: impl Fn(&T) -> (String, String),
) -> String {
    let mut out = String::from(
        "<table>\n<tr><th>stratum</th><th class=\"n\">items</th><th class=\"n\">shown</th></tr>\n",
    );
    for (i, s) in strata.iter().enumerate() {
        let _ = writeln!(
            out,
            "<tr><td><a href=\"#{}\">{}</a></td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            anchor(kind, i),
            escape(&s.name()),
            s.total,
            s.items.len()
        );
    }
    out.push_str("</table>\n");
    for (i, s) in strata.iter().enumerate() {
        let name = escape(&s.name());
        let _ = writeln!(
            out,
            "<div class=\"stratum\" id=\"{}\" data-kind=\"{kind}\" data-stratum=\"{name}\">\n\
             <h3>{name} <span class=\"count\">{} of {} {unit} shown</span></h3>",
            anchor(kind, i),
            s.items.len(),
            s.total,
        );
        for it in &s.items {
            let (summary, body) = item(it);
            let _ = writeln!(
                out,
                "<details class=\"item\" data-kind=\"{kind}\" data-stratum=\"{name}\">\
                 <summary>{summary}</summary>\n<div class=\"body\">\n{body}</div></details>"
            );
        }
        out.push_str("</div>\n");
    }
    out
}

fn sample_note(samples: &Samples, what: &str) -> String {
    let per = if samples.per_stratum == 0 {
        "every item".to_string()
    } else {
        format!("at most {}", samples.per_stratum)
    };
    format!(
        "<p>A deterministic sample: {per} {what} per stratum, those whose ids hash lowest \
         (<code>noisebench_core::sample_key</code>), the same every run. Click an item to \
         unfold it.</p>\n"
    )
}

/// The sampled claims section's body.
pub(crate) fn claim_items(samples: &Samples) -> Option<String> {
    if samples.claims.is_empty() {
        return None;
    }
    let mut out = sample_note(samples, "claim-document pairs");
    out.push_str(
        "<p>Strata: the claim's verdict and the pair's label. The labels stage's review sheet \
         lists the same pairs. Each shows its claim, the claim's queries and its documents \
         (the sampled pair's first) with their labels, exam answers and stance votes.</p>\n",
    );
    out.push_str(&strata("claim", "pairs", &samples.claims, |c| {
        claim_item(c, &samples.pipeline_file)
    }));
    Some(out)
}

fn claim_item(item: &ClaimItem, pipeline: &str) -> (String, String) {
    let c = &item.claim;
    let label = item
        .documents
        .first()
        .and_then(|d| d.label.as_ref())
        .and_then(|l| l.label.clone())
        .unwrap_or_else(|| "unlabelled".into());
    let summary = format!(
        "<span class=\"badge\">{}</span><span class=\"badge\">{}</span>{}",
        escape(&c.verdict),
        escape(&label),
        short(&c.text)
    );
    let mut body = command("claim", &c.id, pipeline);
    body.push_str(&kv(&[
        ("claim", escape(&c.text)),
        (
            "verdict",
            format!(
                "{} (rated {})",
                escape(&c.verdict),
                escape(&c.original_rating)
            ),
        ),
        ("speaker", opt(&c.speaker)),
        ("claim date", opt(&c.claim_date)),
        ("fact-checker", opt(&c.fact_checker)),
        ("fact-check", opt(&c.url)),
        ("source", escape(&c.source)),
        ("sampled pair", escape(&item.pair_id)),
    ]));
    if item.queries.is_empty() {
        body.push_str("<p class=\"note\">No queries published for this claim.</p>\n");
    } else {
        body.push_str("<h4>Queries</h4>\n<ul>\n");
        for q in &item.queries {
            let _ = writeln!(
                body,
                "<li><span class=\"badge\">{}</span>{}</li>",
                escape(&q.kind),
                escape(&q.text)
            );
        }
        body.push_str("</ul>\n");
    }
    let _ = writeln!(
        body,
        "<h4>Documents ({} shown{})</h4>",
        item.documents.len(),
        if item.more_documents > 0 {
            format!(", {} more: see the inspect command", item.more_documents)
        } else {
            String::new()
        }
    );
    for d in &item.documents {
        body.push_str(&document_item(d, pipeline));
    }
    (summary, body)
}

fn document_item(d: &DocumentItem, pipeline: &str) -> String {
    let doc = &d.document;
    let label = d.label.as_ref();
    let credibility = d
        .credibility
        .as_ref()
        .and_then(|c| c.credibility.clone())
        .unwrap_or_else(|| "not rated".into());
    let site = if doc.domain.is_empty() {
        "unknown site".to_string()
    } else {
        doc.domain.clone()
    };
    let mut out = format!(
        "<details class=\"doc\"{}><summary>{}<span class=\"badge\">{}</span>{} \
         <span class=\"note\">{} · credibility {}</span></summary>\n",
        if d.sampled { " open" } else { "" },
        if d.sampled {
            "<span class=\"badge\">sampled pair</span>"
        } else {
            ""
        },
        escape(
            label
                .and_then(|l| l.label.as_deref())
                .unwrap_or("unlabelled")
        ),
        escape(doc.title.as_deref().unwrap_or("(no title)")),
        escape(&site),
        escape(&credibility),
    );
    out.push_str(&command("document", &doc.id, pipeline));
    let votes = |v: &[String]| escape(&v.join(", "));
    let mut rows: Vec<(&str, String)> = vec![
        ("title", opt(&doc.title)),
        ("site", escape(&site)),
        ("address", escape(&doc.url)),
        (
            "source type",
            escape(
                d.credibility
                    .as_ref()
                    .map(|c| c.source_type.as_str())
                    .unwrap_or(doc.source_type.as_str()),
            ),
        ),
        ("credibility", escape(&credibility)),
    ];
    if let Some(link) = &d.link {
        rows.push((
            "found by",
            format!(
                "{} (best rank {})",
                votes(&link.query_kinds),
                link.best_rank
            ),
        ));
    }
    if let Some(l) = label {
        rows.extend([
            ("label", opt(&l.label)),
            (
                "model label",
                if l.model_label != l.label {
                    opt(&l.model_label)
                } else {
                    String::new()
                },
            ),
            ("label source", escape(&l.label_source)),
            ("exam answer", opt(&l.exam_verdict)),
            ("exam votes", votes(&l.exam_votes)),
            ("without the document", opt(&l.zero_context_verdict)),
            (
                "stance votes",
                format!(
                    "by address: {}; by text: {}; reasoned: {}",
                    opt(&l.stance_url),
                    opt(&l.stance_text),
                    opt(&l.stance_reasoned)
                ),
            ),
            ("stance (majority)", opt(&l.stance_majority)),
            ("stance", opt(&l.stance)),
        ]);
    } else {
        rows.push(("label", "no label row for this pair".into()));
    }
    out.push_str(&kv(&rows));
    let passage = if doc.text.trim().is_empty() {
        doc.title.clone().unwrap_or_default()
    } else {
        doc.text.clone()
    };
    out.push_str(&folded("The text the labels read", &passage, false));
    out.push_str("</details>\n");
    out
}

/// The sampled questions section's body.
pub(crate) fn question_items(samples: &Samples) -> Option<String> {
    if samples.questions.is_empty() {
        return None;
    }
    let mut out = sample_note(samples, "questions");
    out.push_str(
        "<p>Strata: the question's kind and split. Each shows its answer, its answer chunks \
         with the source sentences <mark>highlighted</mark>, the pattern it was made from, the \
         judge's scores, its perturbed queries and evidence (<del>deleted</del>, \
         <ins>inserted</ins>), and each retriever's ranks of its answer chunks.</p>\n",
    );
    out.push_str(&strata("question", "questions", &samples.questions, |q| {
        question_item(q, &samples.pipeline_file)
    }));
    Some(out)
}

fn question_item(item: &QuestionItem, pipeline: &str) -> (String, String) {
    let q = &item.question;
    let summary = format!(
        "<span class=\"badge\">{}</span><span class=\"badge\">{}</span>{}",
        escape(&q.kind),
        escape(item.split.as_deref().unwrap_or("unsplit")),
        short(&q.question)
    );
    let mut body = command("question", &q.id, pipeline);
    let judge = item
        .judgement
        .as_ref()
        .map(|j| {
            format!(
                "clarity {}, correctness {}{}{}",
                j.clarity,
                j.correctness,
                j.reasonableness
                    .map(|r| format!(", reasonableness {r}"))
                    .unwrap_or_default(),
                if j.kept { " (kept)" } else { " (not kept)" }
            )
        })
        .unwrap_or_default();
    body.push_str(&kv(&[
        ("question", escape(&q.question)),
        ("answer", escape(&q.answer)),
        ("kind", escape(&q.kind)),
        ("split", opt(&item.split)),
        ("judge", judge),
        ("reports", escape(&q.report_ids.join(", "))),
    ]));

    body.push_str("<h4>Answer chunks</h4>\n");
    if item.chunks.is_empty() {
        body.push_str("<p class=\"note\">The question names no answer chunk.</p>\n");
    }
    for c in &item.chunks {
        body.push_str(&chunk_block(c, pipeline));
    }

    body.push_str("<h4>Pattern</h4>\n");
    if let Some(p) = &item.pattern {
        let _ = writeln!(
            body,
            "<p><span class=\"badge\">{}</span>{}{}</p>",
            escape(&p.pattern),
            escape(&p.id),
            if p.pivot_entities.is_empty() {
                String::new()
            } else {
                format!(", pivot {}", escape(&p.pivot_entities.join(", ")))
            }
        );
    } else {
        let _ = writeln!(
            body,
            "<p class=\"note\">Pattern {} is not published.</p>",
            escape(&q.pattern_id)
        );
    }
    if !item.triplets.is_empty() {
        body.push_str(
            "<table>\n<tr><th>entity</th><th>relation</th><th>entity</th><th>chunk</th></tr>\n",
        );
        for t in &item.triplets {
            let _ = writeln!(
                body,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&t.entity_1),
                escape(&t.relation),
                escape(&t.entity_2),
                escape(&t.chunk_id)
            );
        }
        body.push_str("</table>\n");
    }

    body.push_str("<h4>Perturbed queries</h4>\n");
    if item.query_perturbations.is_empty() {
        body.push_str("<p class=\"note\">None published.</p>\n");
    } else {
        body.push_str(
            "<table>\n<tr><th>kind</th><th>query</th><th class=\"n\">similarity</th></tr>\n",
        );
        for p in &item.query_perturbations {
            let _ = writeln!(
                body,
                "<tr><td>{}</td><td>{}</td><td class=\"n\">{:.3}</td></tr>",
                escape(&p.kind),
                escape(&p.perturbed_query),
                p.similarity
            );
        }
        body.push_str("</table>\n");
    }

    body.push_str("<h4>Perturbed evidence</h4>\n");
    if item.evidence.is_empty() {
        body.push_str("<p class=\"note\">None published.</p>\n");
    }
    for e in &item.evidence {
        body.push_str(&evidence_block(e));
    }

    body.push_str("<h4>Retrieval</h4>\n");
    if item.retrieval.is_empty() {
        body.push_str("<p class=\"note\">No retrieval results published.</p>\n");
    } else {
        body.push_str(
            "<table>\n<tr><th>query</th><th>retriever</th><th>answer chunks at rank</th>\
             <th class=\"n\">results</th><th>hit or miss</th></tr>\n",
        );
        for r in &item.retrieval {
            let ranks: Vec<String> = r.hit_ranks.iter().map(|k| k.to_string()).collect();
            let _ = writeln!(
                body,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"{}\">{}</td></tr>",
                escape(&r.query),
                escape(&r.retriever),
                if ranks.is_empty() {
                    "-".to_string()
                } else {
                    ranks.join(", ")
                },
                r.results,
                if r.hit() { "hit" } else { "miss" },
                if r.hit() { "hit" } else { "miss" },
            );
        }
        body.push_str("</table>\n");
    }
    (summary, body)
}

fn chunk_block(c: &MarkedChunk, pipeline: &str) -> String {
    let chunk = &c.chunk;
    let n = chunk.text.chars().count();
    let mut out = format!(
        "<details class=\"text\" open><summary>chunk {} <span class=\"note\">report {}{}, \
         {} tokens, {} sentence(s) highlighted</span></summary>\n",
        escape(&chunk.id),
        escape(&chunk.report_id),
        chunk
            .section
            .as_deref()
            .map(|s| format!(", section {}", escape(s)))
            .unwrap_or_default(),
        chunk.token_count,
        c.marks.len(),
    );
    out.push_str(&command("chunk", &chunk.id, pipeline));
    if chunk.text.is_empty() {
        out.push_str("<p class=\"note\">The chunk is not published.</p>\n");
    } else {
        let _ = writeln!(
            out,
            "<div class=\"passage\">{}</div>",
            marked(&chunk.text, &c.marks)
        );
        if n > MAX_TEXT_CHARS {
            let _ = writeln!(
                out,
                "<p class=\"note\">Cut at {MAX_TEXT_CHARS} of {n} characters.</p>"
            );
        }
    }
    if !c.unfound.is_empty() {
        out.push_str("<p class=\"note\">Source sentences not found in the chunks shown:</p><ul>\n");
        for s in &c.unfound {
            let _ = writeln!(out, "<li>{}</li>", escape(s));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</details>\n");
    out
}

fn evidence_block(e: &Evidence) -> String {
    let p = &e.perturbation;
    let (deleted, inserted) = e.diff.as_ref().map_or((0, 0), |d| {
        d.iter().fold((0, 0), |(del, ins), piece| match piece {
            DiffPiece::Deleted(w) => (del + w.split(' ').count(), ins),
            DiffPiece::Inserted(w) => (del, ins + w.split(' ').count()),
            DiffPiece::Same(_) => (del, ins),
        })
    });
    let unchanged = e
        .diff
        .as_ref()
        .is_some_and(|d| d.iter().all(|p| matches!(p, DiffPiece::Same(_))));
    let what = match &e.diff {
        Some(_) if unchanged => "unchanged: the same words as the original".to_string(),
        Some(_) => format!("{deleted} word(s) deleted, {inserted} inserted"),
        None if e.original_shown => "rewritten (the original is its answer chunk above)".into(),
        None if e.original.is_some() => "rewritten (the two texts below)".to_string(),
        None => "the original chunk is not published".to_string(),
    };
    let mut out = format!(
        "<details class=\"text\"><summary><span class=\"badge\">{}</span>chunk {}: {}{}</summary>\n",
        escape(&p.kind),
        escape(&p.chunk_id),
        what,
        p.similarity
            .map(|s| format!(", similarity {s:.3}"))
            .unwrap_or_default()
    );
    match (&e.diff, &e.original) {
        (Some(_), _) if unchanged => {}
        (Some(diff), _) => {
            out.push_str("<div class=\"passage\">");
            let mut left = MAX_TEXT_CHARS;
            for piece in diff {
                let (tag, words) = match piece {
                    DiffPiece::Same(w) => ("", w),
                    DiffPiece::Deleted(w) => ("del", w),
                    DiffPiece::Inserted(w) => ("ins", w),
                };
                let (words, was_cut) = cut(words, left);
                left = left.saturating_sub(words.chars().count() + 1);
                if was_cut || left == 0 {
                    if tag.is_empty() {
                        let _ = write!(out, "{}", escape(words));
                    } else {
                        let _ = write!(out, "<{tag}>{}</{tag}>", escape(words));
                    }
                    out.push_str("\u{2026} (cut; the inspect command shows it whole)");
                    break;
                }
                if tag.is_empty() {
                    let _ = write!(out, "{} ", escape(words));
                } else {
                    let _ = write!(out, "<{tag}>{}</{tag}> ", escape(words));
                }
            }
            out.push_str("</div>\n");
        }
        (None, Some(original)) => {
            out.push_str(&folded("Original chunk", original, true));
            out.push_str(&folded("Perturbed chunk", &p.text, true));
        }
        (None, None) => out.push_str(&folded("Perturbed chunk", &p.text, true)),
    }
    out.push_str("</details>\n");
    out
}

/// The sampled drops section's body; `Err` with the sentence saying why there is none.
pub(crate) fn drop_items(samples: &Samples) -> Result<String, String> {
    if let Some(why) = &samples.drops_missing {
        return Err(why.clone());
    }
    if samples.drops.is_empty() {
        return Err("no stage dropped an item".into());
    }
    let mut out = sample_note(samples, "drops");
    out.push_str(
        "<p>Strata: the stage and the reason. A failure that did not cost its item is marked \
         so. The inspect command lists every drop of the stage.</p>\n",
    );
    // `inspect stage` lists a stage's first 20 drops, or `--rows` of them.
    let mut per_stage: std::collections::BTreeMap<&str, u64> = Default::default();
    for s in &samples.drops {
        if let Some(stage) = s.key.first() {
            *per_stage.entry(stage.as_str()).or_default() += s.total;
        }
    }
    out.push_str(&strata("drop", "records", &samples.drops, |d| {
        let rows = per_stage.get(d.stage.as_str()).copied().unwrap_or(0);
        drop_item(d, &samples.pipeline_file, rows)
    }));
    Ok(out)
}

/// A drop; `stage_drops` is how many drop records its stage has.
fn drop_item(d: &DropRecord, pipeline: &str, stage_drops: u64) -> (String, String) {
    let summary = format!(
        "<span class=\"badge\">{}</span>{} <span class=\"note\">{}</span>",
        escape(&d.reason),
        short(&d.item),
        short(&d.detail)
    );
    let rows = if stage_drops > 20 {
        format!(" --rows {stage_drops}")
    } else {
        String::new()
    };
    let mut body = format!(
        "<code class=\"cmd\">noisebench inspect stage {} --pipeline {}{rows}</code>\n",
        escape(&d.stage),
        escape(pipeline)
    );
    body.push_str(&kv(&[
        ("stage", escape(&d.stage)),
        ("reason", escape(&d.reason)),
        ("item", escape(&d.item)),
        (
            "outcome",
            if d.dropped {
                "dropped".into()
            } else {
                "a failure; the item was kept".into()
            },
        ),
        ("retried next run", if d.retry { "yes" } else { "" }.into()),
    ]));
    if d.detail.chars().count() > SUMMARY_CHARS {
        body.push_str(&folded("Detail", &d.detail, true));
    } else {
        let _ = writeln!(body, "<p>{}</p>", escape(&d.detail));
    }
    (summary, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::single_range_in_vec_init)]
    fn marks_wrap_their_ranges_and_everything_is_escaped() {
        let text = "a <b> & the sentence here. rest";
        let start = text.find("the").unwrap();
        let end = text.find(" rest").unwrap();
        let html = marked(text, &[start..end]);
        assert_eq!(
            html,
            "a &lt;b&gt; &amp; <mark>the sentence here.</mark> rest"
        );
        // Ranges past a cut text or off char boundaries are left out, not a panic.
        assert_eq!(marked("é", &[0..1]), "é");
        let long = "x".repeat(MAX_TEXT_CHARS + 10);
        assert_eq!(
            marked(&long, &[0..MAX_TEXT_CHARS + 5]).len(),
            MAX_TEXT_CHARS + 13
        );
    }

    #[test]
    fn a_drop_names_the_command_that_lists_every_drop_of_its_stage() {
        let drop = |reason: &str| DropRecord {
            id: format!("d_{reason}"),
            stage: "search".into(),
            reason: reason.into(),
            ..Default::default()
        };
        let stratum = |reason: &str, total| SampleStratum {
            key: vec!["search".into(), reason.into()],
            total,
            items: vec![drop(reason)],
        };
        let mut samples = Samples {
            pipeline_file: "pipelines/demo.toml".into(),
            drops: vec![stratum("no_results", 16), stratum("not_recorded", 207)],
            ..Default::default()
        };
        let html = drop_items(&samples).unwrap();
        assert_eq!(
            html.matches(
                "noisebench inspect stage search --pipeline pipelines/demo.toml --rows 223<"
            )
            .count(),
            2
        );
        samples.drops = vec![stratum("no_results", 16)];
        assert!(
            drop_items(&samples)
                .unwrap()
                .contains("pipelines/demo.toml</code>")
        );
        samples.drops_missing = Some("gone".into());
        assert_eq!(drop_items(&samples), Err("gone".into()));
    }

    #[test]
    fn long_texts_fold_and_are_cut() {
        let long = "word ".repeat(2_000);
        let html = folded("Doc", &long, false);
        assert!(html.starts_with("<details class=\"text\"><summary>Doc (10000 characters)"));
        assert!(html.contains("Cut at 4000 of 10000 characters"));
        assert!(html.len() < MAX_TEXT_CHARS + 500);
    }
}

//! The `offline` backend: deterministic rules for every task, no network, no randomness.
//!
//! Same input, same bytes. Rows made by these rules carry `offline` in their provenance. The
//! rules are versioned by [`RULES_VERSION`] (part of the cache key and the call log's
//! `prompt_version`), so changing a rule changes every affected key.
//!
//! | task | rule |
//! |---|---|
//! | `keywords` | RAKE: candidate phrases are runs of words between stopwords and punctuation; a word scores degree/frequency; a phrase scores the sum of its words; the top `max_keywords` phrases by score (ties: earlier first), deduplicated case-insensitively. |
//! | `claim_to_question` | Strip a leading "Says"/"<speaker> says (that)". If an auxiliary verb (is, was, has, can, will...) follows a subject of 1-8 words, move it to the front ("X is Y" -> "Is X Y?"); else "Is it true that <claim>?". |
//! | `exam_verdict` | No document: `undecided`. Relevance = share of the claim's content words found in the document; below 0.5: `undecided`. Else count refuting cues (false, hoax, debunked, no evidence, misleading...) against supporting cues (true, confirmed, accurate, verified...): more refuting: `false`, else `true`. |
//! | `stance_text` | The same cues and relevance: below 0.5: not enough evidence; more refuting cues: reject; else support. |
//! | `stance_reasoned` | `stance_text`'s decision, with a reasoning that lists the relevance and the cues found. |
//! | `stance_url` | The URL's host and path split into words; a refuting cue word with relevance >= 0.3: reject; relevance >= 0.5: support; else not enough evidence. |
//! | `credibility` | By domain: `.gov`/`.mil`/`gov.xx` high government; `.edu`/`ac.xx` high academic; known social sites low social media; known news outlets high mainstream news; `.org` medium non-profit; anything else low other (no information). |
//! | `triplets` | Markdown table rows: (first cell, column header, cell) with the row line as source sentence. Sentences: subject (1-10 words) + a relation verb from a fixed list (+ a preposition) + object (up to the first comma or clause word, at most 12 words). At most `target` per window, in text order. |
//! | `qa_single` | "<entity_1> <relation> what, according to <company/country>'s report?" answered by entity_2; declined (empty) when the answer appears in the question. |
//! | `qa_multi` | Chain: "<A> <r1> something that <r2> what?"; star: "The entity that <r1> <A> also <r2> what?"; inverted star: "What <r2> the same thing that <A> <r1>?". Declined when the pivot has fewer than 2 words, all triplets share a chunk, or the answer appears in the question. |
//! | `qa_judge` | Clarity: 5 minus 1 for each of: no final "?", fewer than 4 or more than 40 words, a doubled word or template brackets. Correctness: 5 if the answer is in a source sentence or chunk, else by the share of its words found there (4 >= 0.75, 3 >= 0.5, 2 > 0, 1); 1 if the answer is in the question. Reasonableness (multi-hop): 5 with >= 2 distinct source sentences, else 2. |
//! | `query_grammar` | Candidates in order: a fronted trailing phrase ("In 2022, what ...?"), an indirect question ("Could you tell me ...?"), a statement ("I would like to know ..."); those equal to the query are skipped. |
//! | `query_irrelevant` | A fixed list of on-topic but answer-irrelevant lead-ins, picked from a hash of the query, prepended to the query. |
//! | `back_translate` | A rule paraphrase instead of a translation: contractions expanded and words swapped from a fixed synonym table, case kept, numbers untouched; `pivot` is empty. |
//! | `answer_judge` | Normalise (case, punctuation, articles, digit grouping). Correct when the gold answer's words appear in order in the prediction, or every number of the gold answer (with million/billion/%) appears in the prediction; a refusal without the gold answer is incorrect. |

use std::collections::{BTreeMap, BTreeSet};

use sha2::{Digest, Sha256};

use crate::task::*;

/// Version of these rules; bump when any rule's output changes.
pub const RULES_VERSION: &str = "offline-1";

const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "according",
    "after",
    "again",
    "against",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "claim",
    "claimed",
    "claims",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "s",
    "said",
    "same",
    "say",
    "says",
    "she",
    "should",
    "so",
    "some",
    "such",
    "t",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

fn is_stopword(w: &str) -> bool {
    STOPWORDS.binary_search(&w).is_ok()
}

/// Lowercase alphanumeric words (apostrophes and inner `.`/`,` of numbers kept out).
fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn content_words(s: &str) -> BTreeSet<String> {
    words(s)
        .into_iter()
        .filter(|w| w.len() >= 3 && !is_stopword(w))
        .collect()
}

fn hash64(s: &str) -> u64 {
    let d = Sha256::digest(s.as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    u64::from_le_bytes(b)
}

fn lower_first(s: &str) -> String {
    let first = s.split_whitespace().next().unwrap_or("");
    // Keep proper nouns and acronyms; lowercase common sentence openers.
    const OPENERS: &[&str] = &[
        "The", "A", "An", "This", "That", "These", "Those", "What", "Which", "Who", "How", "When",
        "Where", "Why", "Is", "Are", "Was", "Were", "Did", "Does", "Do", "In", "For", "Our", "Its",
        "Their", "There",
    ];
    if OPENERS.contains(&first) {
        let mut c = s.chars();
        match c.next() {
            Some(f) => f.to_lowercase().collect::<String>() + c.as_str(),
            None => String::new(),
        }
    } else {
        s.to_string()
    }
}

fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

fn strip_end_punct(s: &str) -> &str {
    s.trim()
        .trim_end_matches(['.', '?', '!', ';', ':', ',', '"', '\''])
        .trim()
}

// ---------------------------------------------------------------------------------------------

pub(crate) fn keywords(input: &KeywordsInput) -> KeywordsOutput {
    // Candidate phrases: runs of non-stopwords, broken at punctuation.
    let mut phrases: Vec<Vec<(String, String)>> = Vec::new(); // (lower, original)
    let mut current: Vec<(String, String)> = Vec::new();
    for raw in input.claim.split_whitespace() {
        let trimmed =
            raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '$' && c != '%' && c != '\'');
        let trimmed = trimmed.trim_matches('\'');
        let breaks_after = raw
            .chars()
            .last()
            .is_some_and(|c| matches!(c, ',' | '.' | ';' | ':' | '!' | '?' | '"' | ')' | '”'));
        let breaks_before = raw
            .chars()
            .next()
            .is_some_and(|c| matches!(c, '"' | '(' | '“'));
        if breaks_before && !current.is_empty() {
            phrases.push(std::mem::take(&mut current));
        }
        let lower = trimmed.to_lowercase();
        let lower_core = lower.trim_end_matches("'s").trim_end_matches("’s");
        if trimmed.is_empty() || is_stopword(lower_core) {
            if !current.is_empty() {
                phrases.push(std::mem::take(&mut current));
            }
        } else {
            current.push((lower_core.to_string(), trimmed.to_string()));
        }
        if breaks_after && !current.is_empty() {
            phrases.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        phrases.push(current);
    }
    // Overlong runs are split into pieces of at most 4 words.
    let phrases: Vec<Vec<(String, String)>> = phrases
        .into_iter()
        .flat_map(|p| p.chunks(4).map(<[_]>::to_vec).collect::<Vec<_>>())
        .collect();
    let mut freq: BTreeMap<&str, f64> = BTreeMap::new();
    let mut degree: BTreeMap<&str, f64> = BTreeMap::new();
    for p in &phrases {
        for (w, _) in p {
            *freq.entry(w).or_default() += 1.0;
            *degree.entry(w).or_default() += p.len() as f64;
        }
    }
    let mut scored: Vec<(f64, usize, String, String)> = Vec::new();
    let mut seen = BTreeSet::new();
    for (pos, p) in phrases.iter().enumerate() {
        let key = p
            .iter()
            .map(|(w, _)| w.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        if !seen.insert(key.clone()) {
            continue;
        }
        let score: f64 = p
            .iter()
            .map(|(w, _)| degree[w.as_str()] / freq[w.as_str()])
            .sum();
        let text = p
            .iter()
            .map(|(_, o)| o.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        scored.push((score, pos, key, text));
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    KeywordsOutput {
        keywords: scored
            .into_iter()
            .take(input.max_keywords.max(1))
            .map(|s| s.3)
            .collect(),
    }
}

const AUXILIARIES: &[&str] = &[
    "is", "are", "was", "were", "has", "have", "had", "can", "could", "will", "would", "should",
    "does", "do", "did", "may", "might", "must",
];

pub(crate) fn claim_to_question(input: &ClaimToQuestionInput) -> ClaimToQuestionOutput {
    let mut claim = strip_end_punct(input.claim.trim().trim_matches(['"', '“', '”'])).to_string();
    for prefix in ["Says that ", "Says "] {
        if let Some(rest) = claim.strip_prefix(prefix) {
            claim = rest.to_string();
            break;
        }
    }
    if let Some(speaker) = &input.speaker {
        for verb in [" says that ", " said that ", " says ", " said "] {
            let p = format!("{speaker}{verb}");
            if let Some(rest) = claim.strip_prefix(&p) {
                claim = rest.to_string();
                break;
            }
        }
    }
    let claim = strip_end_punct(claim.trim_matches(['"', '“', '”'])).to_string();
    let tokens: Vec<&str> = claim.split_whitespace().collect();
    let aux_at = tokens
        .iter()
        .enumerate()
        .take(9)
        .skip(1)
        .find(|(_, t)| AUXILIARIES.contains(&t.to_lowercase().as_str()))
        .map(|(i, _)| i);
    let question = match aux_at {
        Some(i) => {
            let subject = lower_first(&tokens[..i].join(" "));
            let rest = tokens[i + 1..].join(" ");
            let lower = tokens[i].to_lowercase();
            let next = tokens
                .get(i + 1)
                .map(|t| t.to_lowercase())
                .unwrap_or_default();
            let perfect = next == "been" || next.ends_with("ed") || next.ends_with("en");
            // "X had Y" asks "Did X have Y?"; "X has been" keeps the auxiliary.
            let (aux, rest) = match (lower.as_str(), perfect) {
                ("has", false) => ("Does".to_string(), format!("have {rest}")),
                ("have", false) => ("Do".to_string(), format!("have {rest}")),
                ("had", false) => ("Did".to_string(), format!("have {rest}")),
                _ => (upper_first(&lower), rest),
            };
            let rest = rest.trim().to_string();
            if rest.is_empty() {
                format!("{aux} {subject}?")
            } else {
                format!("{aux} {subject} {rest}?")
            }
        }
        None => format!("Is it true that {}?", lower_first(&claim)),
    };
    ClaimToQuestionOutput { question }
}

const REFUTE_CUES: &[&str] = &[
    "false",
    "not true",
    "untrue",
    "debunked",
    "debunk",
    "hoax",
    "fake",
    "misleading",
    "no evidence",
    "myth",
    "incorrect",
    "wrong",
    "fabricated",
    "baseless",
    "pants on fire",
    "not accurate",
    "inaccurate",
    "never happened",
    "disproven",
    "refuted",
];
const SUPPORT_CUES: &[&str] = &[
    "true",
    "confirmed",
    "confirms",
    "correct",
    "accurate",
    "indeed",
    "verified",
    "evidence shows",
    "data show",
    "data shows",
    "records show",
    "official figures",
];

/// Count whole-word (or whole-phrase) occurrences of each cue in `text`.
fn cues(text_words: &[String], cues: &[&str]) -> BTreeMap<String, usize> {
    let mut found = BTreeMap::new();
    for cue in cues {
        let cw: Vec<&str> = cue.split(' ').collect();
        let n = text_words
            .windows(cw.len())
            .filter(|w| w.iter().zip(&cw).all(|(a, b)| a == b))
            .count();
        if n > 0 {
            found.insert((*cue).to_string(), n);
        }
    }
    found
}

fn relevance(claim: &str, text_words: &[String]) -> f64 {
    let cw = content_words(claim);
    if cw.is_empty() {
        return 0.0;
    }
    let tw: BTreeSet<&str> = text_words.iter().map(String::as_str).collect();
    cw.iter().filter(|w| tw.contains(w.as_str())).count() as f64 / cw.len() as f64
}

struct Signals {
    relevance: f64,
    refute: BTreeMap<String, usize>,
    support: BTreeMap<String, usize>,
}

impl Signals {
    fn of(claim: &str, text: &str) -> Signals {
        let tw = words(text);
        // A cue that also appears in the claim says nothing about the document's stance.
        let claim_words = words(claim);
        let strip = |mut m: BTreeMap<String, usize>| {
            m.retain(|cue, _| !cues(&claim_words, &[cue.as_str()]).contains_key(cue));
            m
        };
        Signals {
            relevance: relevance(claim, &tw),
            refute: strip(cues(&tw, REFUTE_CUES)),
            support: strip(cues(&tw, SUPPORT_CUES)),
        }
    }
    fn refute_count(&self) -> usize {
        self.refute.values().sum()
    }
    fn support_count(&self) -> usize {
        self.support.values().sum()
    }
}

fn cue_list(m: &BTreeMap<String, usize>) -> String {
    if m.is_empty() {
        "none".into()
    } else {
        m.iter()
            .map(|(c, n)| format!("{c} ({n})"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

pub(crate) fn exam_verdict(input: &ExamVerdictInput) -> ExamVerdictOutput {
    let text = match (&input.document_title, &input.document) {
        (_, None) => String::new(),
        (Some(t), Some(d)) => format!("{t}\n{d}"),
        (None, Some(d)) => d.clone(),
    };
    if text.trim().is_empty() {
        return ExamVerdictOutput {
            verdict: Verdict::Undecided,
        };
    }
    let s = Signals::of(&input.claim, &text);
    let verdict = if s.relevance < 0.5 {
        Verdict::Undecided
    } else if s.refute_count() > s.support_count() {
        Verdict::False
    } else {
        Verdict::True
    };
    ExamVerdictOutput { verdict }
}

pub(crate) fn stance_text(input: &StanceTextInput) -> (Stance, String) {
    if input.text.trim().is_empty() {
        return (
            Stance::NotEnoughEvidence,
            "The text is empty. Final answer: Not enough evidence.".into(),
        );
    }
    let s = Signals::of(&input.claim, &input.text);
    let stance = if s.relevance < 0.5 {
        Stance::NotEnoughEvidence
    } else if s.refute_count() > s.support_count() {
        Stance::Reject
    } else {
        Stance::Support
    };
    let label = match stance {
        Stance::Support => "Support",
        Stance::Reject => "Reject",
        Stance::NotEnoughEvidence => "Not enough evidence",
    };
    let reasoning = format!(
        "Share of the claim's content words found in the text: {:.2}. Refuting cues: {}. \
         Supporting cues: {}. Final answer: {label}.",
        s.relevance,
        cue_list(&s.refute),
        cue_list(&s.support)
    );
    (stance, reasoning)
}

pub(crate) fn stance_url(input: &StanceUrlInput) -> StanceOutput {
    let s = Signals::of(&input.claim, &input.url);
    let stance = if s.refute_count() > 0 && s.relevance >= 0.3 {
        Stance::Reject
    } else if s.relevance >= 0.5 {
        Stance::Support
    } else {
        Stance::NotEnoughEvidence
    };
    StanceOutput { stance }
}

const SOCIAL: &[&str] = &[
    "facebook.com",
    "instagram.com",
    "reddit.com",
    "tiktok.com",
    "twitter.com",
    "x.com",
    "youtube.com",
    "threads.net",
    "truthsocial.com",
    "t.me",
    "telegram.org",
    "medium.com",
    "substack.com",
];
const NEWS: &[&str] = &[
    "apnews.com",
    "bbc.co.uk",
    "bbc.com",
    "bloomberg.com",
    "cbsnews.com",
    "cnn.com",
    "economist.com",
    "ft.com",
    "nbcnews.com",
    "npr.org",
    "nytimes.com",
    "reuters.com",
    "theguardian.com",
    "usatoday.com",
    "washingtonpost.com",
    "wsj.com",
    "abcnews.go.com",
    "aljazeera.com",
    "lemonde.fr",
    "spiegel.de",
];

fn domain_is(domain: &str, site: &str) -> bool {
    domain == site || domain.ends_with(&format!(".{site}"))
}

pub(crate) fn credibility(input: &CredibilityInput) -> CredibilityOutput {
    let d = input.domain.trim().to_lowercase();
    let d = d.trim_start_matches("www.").trim_end_matches('.');
    let labels: Vec<&str> = d.split('.').collect();
    let tld = labels.last().copied().unwrap_or("");
    let second = if labels.len() >= 2 {
        labels[labels.len() - 2]
    } else {
        ""
    };
    let (credibility, source_type) = if tld == "gov" || tld == "mil" || second == "gov" {
        (CredibilityLevel::High, SourceType::Government)
    } else if tld == "edu" || second == "ac" || second == "edu" {
        (CredibilityLevel::High, SourceType::Academic)
    } else if SOCIAL.iter().any(|s| domain_is(d, s)) {
        (CredibilityLevel::Low, SourceType::SocialMedia)
    } else if NEWS.iter().any(|s| domain_is(d, s)) {
        (CredibilityLevel::High, SourceType::MainstreamNews)
    } else if tld == "org" {
        (CredibilityLevel::Medium, SourceType::NonProfit)
    } else {
        (CredibilityLevel::Low, SourceType::Other)
    };
    CredibilityOutput {
        credibility,
        source_type,
    }
}

const RELATION_VERBS: &[&str] = &[
    "acquired",
    "amounted",
    "announced",
    "are",
    "completed",
    "declined",
    "decreased",
    "employs",
    "expects",
    "fell",
    "generated",
    "grew",
    "had",
    "has",
    "have",
    "implemented",
    "includes",
    "increased",
    "introduced",
    "invested",
    "invests",
    "is",
    "launched",
    "manufactures",
    "operates",
    "owns",
    "paid",
    "plans",
    "produces",
    "provides",
    "reached",
    "received",
    "recorded",
    "reported",
    "rose",
    "sells",
    "totaled",
    "totalled",
    "was",
    "were",
];
const PREPOSITIONS: &[&str] = &[
    "to", "by", "in", "of", "from", "for", "with", "on", "at", "into",
];
const CLAUSE_WORDS: &[&str] = &["which", "that", "while", "because", "although", "whereas"];
const DETERMINERS: &[&str] = &["the", "a", "an", "our", "its", "their", "this", "these"];

fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('|') || line.starts_with('#') {
            continue;
        }
        let chars: Vec<char> = line.chars().collect();
        let mut start = 0;
        for i in 0..chars.len() {
            let end_mark = matches!(chars[i], '.' | '!' | '?');
            let next_space = chars.get(i + 1).is_some_and(|c| c.is_whitespace());
            let next_upper = chars.get(i + 2).is_some_and(|c| c.is_uppercase());
            // Not after a single capital ("U.S.") nor a digit ("3.5" has no space anyway).
            let abbrev =
                i >= 1 && chars[i - 1].is_uppercase() && (i < 2 || !chars[i - 2].is_alphanumeric());
            if end_mark && next_space && next_upper && !abbrev {
                out.push(
                    chars[start..=i]
                        .iter()
                        .collect::<String>()
                        .trim()
                        .to_string(),
                );
                start = i + 1;
            }
        }
        let rest: String = chars[start..].iter().collect();
        if !rest.trim().is_empty() {
            out.push(rest.trim().to_string());
        }
    }
    out
}

fn sentence_triplet(sentence: &str) -> Option<(String, String, String)> {
    let tokens: Vec<&str> = sentence.split_whitespace().collect();
    let verb_at = tokens
        .iter()
        .enumerate()
        .take(11)
        .skip(1)
        .find(|(_, t)| {
            RELATION_VERBS
                .binary_search(&strip_end_punct(t).to_lowercase().as_str())
                .is_ok()
        })
        .map(|(i, _)| i)?;
    let mut subject: Vec<&str> = tokens[..verb_at].to_vec();
    if subject.iter().any(|t| t.ends_with(',')) {
        return None; // an introductory clause, not a subject
    }
    while subject
        .first()
        .is_some_and(|t| DETERMINERS.contains(&t.to_lowercase().as_str()))
    {
        subject.remove(0);
    }
    let first = subject.first()?;
    if !first
        .chars()
        .next()
        .is_some_and(|c| c.is_uppercase() || c.is_ascii_digit() || c.is_lowercase())
    {
        return None;
    }
    let mut rel = vec![strip_end_punct(tokens[verb_at]).to_string()];
    let mut obj_start = verb_at + 1;
    if let Some(next) = tokens.get(obj_start)
        && PREPOSITIONS.contains(&next.to_lowercase().as_str())
    {
        rel.push(next.to_lowercase());
        obj_start += 1;
    }
    let mut object = Vec::new();
    for t in tokens.iter().skip(obj_start) {
        if CLAUSE_WORDS.contains(&t.to_lowercase().as_str()) || object.len() >= 12 {
            break;
        }
        let ends = t.ends_with(',') || t.ends_with(';');
        object.push(*t);
        if ends {
            break;
        }
    }
    while object
        .first()
        .is_some_and(|t| DETERMINERS.contains(&t.to_lowercase().as_str()))
    {
        object.remove(0);
    }
    let object = strip_end_punct(&object.join(" ")).to_string();
    let subject = strip_end_punct(&subject.join(" ")).to_string();
    if object.is_empty() || subject.is_empty() {
        return None;
    }
    Some((upper_first(&subject), rel.join(" ").to_lowercase(), object))
}

fn table_cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    inner.split('|').map(|c| c.trim().to_string()).collect()
}

fn is_separator_row(cells: &[String]) -> bool {
    !cells.is_empty()
        && cells
            .iter()
            .all(|c| !c.is_empty() && c.chars().all(|ch| matches!(ch, '-' | ':' | ' ')))
}

pub(crate) fn triplets(input: &TripletsInput) -> TripletsOutput {
    let mut out = Vec::new();
    for chunk in &input.chunks {
        // Tables: each data row gives (row label, column header, cell).
        let mut header: Option<Vec<String>> = None;
        for line in chunk.text.lines() {
            let l = line.trim();
            if !l.starts_with('|') {
                header = None;
                continue;
            }
            let cells = table_cells(l);
            if is_separator_row(&cells) {
                continue;
            }
            match &header {
                None => header = Some(cells),
                Some(h) => {
                    let label = cells.first().cloned().unwrap_or_default();
                    if label.is_empty() {
                        continue;
                    }
                    for (j, cell) in cells.iter().enumerate().skip(1) {
                        if cell.is_empty() || cell == "-" {
                            continue;
                        }
                        let col = h.get(j).filter(|c| !c.is_empty());
                        let relation = match col {
                            Some(c) => format!("has {c} of"),
                            None => "has value".to_string(),
                        };
                        out.push(ExtractedTriplet {
                            entity_1: label.clone(),
                            relation: relation.to_lowercase(),
                            entity_2: cell.clone(),
                            answer_chunk_id: chunk.chunk_id.clone(),
                            source_sentence: l.to_string(),
                        });
                    }
                }
            }
        }
        for sentence in sentences(&chunk.text) {
            if let Some((e1, rel, e2)) = sentence_triplet(&sentence) {
                out.push(ExtractedTriplet {
                    entity_1: e1,
                    relation: rel,
                    entity_2: e2,
                    answer_chunk_id: chunk.chunk_id.clone(),
                    source_sentence: sentence,
                });
            }
        }
    }
    if input.target > 0 {
        out.truncate(input.target);
    }
    TripletsOutput { triplets: out }
}

/// Lowercase words joined by single spaces, for containment checks.
fn norm(s: &str) -> String {
    words(s).join(" ")
}

fn contains_phrase(haystack: &str, needle: &str) -> bool {
    let (h, n) = (norm(haystack), norm(needle));
    !n.is_empty() && format!(" {h} ").contains(&format!(" {n} "))
}

fn declined() -> QaOutput {
    QaOutput {
        question: String::new(),
        answer: String::new(),
    }
}

pub(crate) fn qa_single(input: &QaSingleInput) -> QaOutput {
    let t = &input.triplet;
    let context = ["company", "country", "grantee"]
        .iter()
        .find_map(|k| input.metadata.get(*k).filter(|v| !v.trim().is_empty()));
    let question = match context {
        Some(c) => format!(
            "{} {} what, according to {c}'s report?",
            t.entity_1.trim(),
            t.relation.trim()
        ),
        None => format!(
            "{} {} what, according to the report?",
            t.entity_1.trim(),
            t.relation.trim()
        ),
    };
    let answer = t.entity_2.trim().to_string();
    if answer.is_empty() || contains_phrase(&question, &answer) {
        return declined();
    }
    QaOutput {
        question: upper_first(&question),
        answer,
    }
}

pub(crate) fn qa_multi(input: &QaMultiInput) -> QaOutput {
    let ts = &input.triplets;
    if ts.len() < 2 {
        return declined();
    }
    let chunks: BTreeSet<&str> = ts.iter().map(|t| t.chunk_id.as_str()).collect();
    if chunks.len() < 2 {
        return declined(); // answerable from one chunk
    }
    let r = |i: usize| ts[i].relation.trim();
    let last = ts.len() - 1;
    let (question, answer, pivot) = match input.pattern {
        Pattern::Chain => {
            let mut q = format!("{} {}", ts[0].entity_1.trim(), r(0));
            for i in 1..ts.len() {
                q.push_str(&format!(" something that {}", r(i)));
            }
            q.push_str(" what?");
            (q, ts[last].entity_2.trim(), ts[0].entity_2.trim())
        }
        Pattern::Star => {
            let known: Vec<String> = (0..last)
                .map(|i| format!("{} {}", r(i), ts[i].entity_2.trim()))
                .collect();
            let q = format!(
                "The entity that {} also {} what?",
                known.join(" and "),
                r(last)
            );
            (q, ts[last].entity_2.trim(), ts[0].entity_1.trim())
        }
        Pattern::InvertedStar => {
            let known: Vec<String> = (0..last)
                .map(|i| format!("{} {}", ts[i].entity_1.trim(), r(i)))
                .collect();
            let q = format!(
                "What {} the same thing that {}?",
                r(last),
                known.join(" and ")
            );
            (q, ts[last].entity_1.trim(), ts[0].entity_2.trim())
        }
    };
    let pivot_words = content_words(pivot)
        .len()
        .max(words(pivot).iter().filter(|w| !is_stopword(w)).count());
    if pivot_words < 2
        || answer.is_empty()
        || contains_phrase(&question, answer)
        || contains_phrase(&question, pivot)
    {
        return declined();
    }
    QaOutput {
        question: upper_first(&question),
        answer: answer.to_string(),
    }
}

pub(crate) fn qa_judge(input: &QaJudgeInput) -> QaJudgeOutput {
    let q = input.question.trim();
    let qw: Vec<&str> = q.split_whitespace().collect();
    let mut clarity: i32 = 5;
    if !q.ends_with('?') {
        clarity -= 1;
    }
    if qw.len() < 4 || qw.len() > 40 {
        clarity -= 1;
    }
    if qw
        .windows(2)
        .any(|w| w[0].eq_ignore_ascii_case(w[1]) && w[0].chars().all(char::is_alphabetic))
    {
        clarity -= 1;
    }
    if q.contains("{{") || q.contains('[') || q.contains('<') {
        clarity -= 1;
    }
    let sources: Vec<&str> = input
        .source_sentences
        .iter()
        .chain(input.chunks.iter())
        .map(String::as_str)
        .collect();
    let correctness = if input.answer.trim().is_empty() || contains_phrase(q, &input.answer) {
        1
    } else if sources.iter().any(|s| contains_phrase(s, &input.answer)) {
        5
    } else {
        let aw = words(&input.answer);
        let sw: BTreeSet<String> = sources.iter().flat_map(|s| words(s)).collect();
        let share = if aw.is_empty() {
            0.0
        } else {
            aw.iter().filter(|w| sw.contains(*w)).count() as f64 / aw.len() as f64
        };
        if share >= 0.75 {
            4
        } else if share >= 0.5 {
            3
        } else if share > 0.0 {
            2
        } else {
            1
        }
    };
    let reasonableness = input.multi_hop.then(|| {
        let distinct: BTreeSet<String> = input.source_sentences.iter().map(|s| norm(s)).collect();
        if distinct.len() >= 2 { 5 } else { 2 }
    });
    QaJudgeOutput {
        clarity: clarity.clamp(1, 5) as u8,
        correctness,
        reasonableness,
    }
}

pub(crate) fn query_grammar(input: &RewriteInput) -> RewriteOutput {
    let q = input.query.trim();
    let body = strip_end_punct(q);
    let mut out: Vec<String> = Vec::new();
    // 1. Front a trailing phrase introduced by a preposition or "according to".
    let tokens: Vec<&str> = body.split_whitespace().collect();
    let split = body
        .rfind(", according to ")
        .map(|i| (body[..i].to_string(), body[i + 2..].to_string()))
        .or_else(|| {
            tokens
                .iter()
                .enumerate()
                .skip(3)
                .rev()
                .find(|(_, t)| {
                    ["in", "during", "for", "since"].contains(&t.to_lowercase().as_str())
                })
                .map(|(i, _)| (tokens[..i].join(" "), tokens[i..].join(" ")))
        });
    if let Some((head, tail)) = split
        && !head.is_empty()
        && tail.split_whitespace().count() <= 6
    {
        out.push(format!("{}, {}?", upper_first(&tail), lower_first(&head)));
    }
    // 2. Indirect question; 3. statement.
    out.push(format!("Could you tell me {}?", lower_first(body)));
    out.push(format!("I would like to know {}.", lower_first(body)));
    let mut seen = BTreeSet::new();
    out.retain(|c| c != q && seen.insert(c.clone()));
    out.truncate(input.candidates.max(1));
    RewriteOutput { rewrites: out }
}

const LEAD_INS: &[&str] = &[
    "While comparing several annual reports this week,",
    "For a briefing I am preparing for my team,",
    "After reading a news article on a related topic,",
    "As part of a class project on public policy,",
    "Before a meeting with our financial advisor tomorrow,",
    "While reviewing last year's budget documents,",
];

pub(crate) fn query_irrelevant(input: &RewriteInput) -> RewriteOutput {
    let q = input.query.trim();
    let start = (hash64(q) % LEAD_INS.len() as u64) as usize;
    let n = input.candidates.clamp(1, LEAD_INS.len());
    let rewrites = (0..n)
        .map(|i| {
            format!(
                "{} {}",
                LEAD_INS[(start + i) % LEAD_INS.len()],
                lower_first(q)
            )
        })
        .collect();
    RewriteOutput { rewrites }
}

const CONTRACTIONS: &[(&str, &str)] = &[
    ("can't", "cannot"),
    ("didn't", "did not"),
    ("doesn't", "does not"),
    ("don't", "do not"),
    ("isn't", "is not"),
    ("it's", "it is"),
    ("won't", "will not"),
    ("wasn't", "was not"),
    ("aren't", "are not"),
];
const SYNONYMS: &[(&str, &str)] = &[
    ("additionally", "moreover"),
    ("approximately", "about"),
    ("assist", "help"),
    ("begin", "start"),
    ("buy", "purchase"),
    ("company", "firm"),
    ("companies", "firms"),
    ("customers", "clients"),
    ("decrease", "decline"),
    ("decreased", "declined"),
    ("however", "nevertheless"),
    ("important", "significant"),
    ("increase", "rise"),
    ("increased", "rose"),
    ("large", "big"),
    ("mainly", "primarily"),
    ("obtain", "get"),
    ("primarily", "mainly"),
    ("purchase", "buy"),
    ("result", "outcome"),
    ("results", "outcomes"),
    ("significant", "notable"),
    ("therefore", "consequently"),
    ("use", "employ"),
    ("used", "employed"),
];

fn match_case(original: &str, replacement: &str) -> String {
    if original.chars().next().is_some_and(char::is_uppercase) {
        upper_first(replacement)
    } else {
        replacement.to_string()
    }
}

pub(crate) fn back_translate(input: &BackTranslateInput) -> BackTranslateOutput {
    let mut out = String::with_capacity(input.text.len() + 16);
    // Walk words, keeping every separator byte as is so numbers and layout survive.
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word.is_empty() {
            return;
        }
        let lower = word.to_lowercase();
        let lookup = |w: &str| {
            CONTRACTIONS
                .iter()
                .chain(SYNONYMS.iter())
                .find(|(from, _)| *from == w)
                .map(|(_, to)| *to)
        };
        let rep = match lookup(&lower) {
            Some(to) => Some(match_case(word, to)),
            None => lower
                .strip_suffix("'s")
                .and_then(lookup)
                .map(|to| format!("{}'s", match_case(word, to))),
        };
        out.push_str(rep.as_deref().unwrap_or(word));
        word.clear();
    };
    for c in input.text.chars() {
        if c.is_alphabetic() || c == '\'' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    BackTranslateOutput {
        pivot: String::new(),
        text: out,
    }
}

/// Numbers in a text with their scale words applied (`$50 million` -> 5e7, `12%` -> 12).
fn numbers(s: &str) -> Vec<f64> {
    let lower = s.to_lowercase();
    let toks: Vec<&str> = lower.split_whitespace().collect();
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        let digits: String = t
            .trim_matches(|c: char| !c.is_ascii_digit())
            .chars()
            .filter(|c| *c != ',')
            .collect();
        if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit() || c == '.') {
            continue;
        }
        let Ok(mut v) = digits.parse::<f64>() else {
            continue;
        };
        let scale = |w: &str| match w.trim_matches(|c: char| !c.is_alphabetic()) {
            "thousand" => 1e3,
            "million" | "m" | "mn" => 1e6,
            "billion" | "bn" | "b" => 1e9,
            "trillion" => 1e12,
            _ => 1.0,
        };
        let suffix: String = t
            .trim_end_matches(|c: char| !c.is_alphanumeric())
            .chars()
            .rev()
            .take_while(|c| c.is_alphabetic())
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let mut k = scale(&suffix);
        if k == 1.0
            && let Some(next) = toks.get(i + 1)
        {
            k = scale(next);
        }
        v *= k;
        out.push(v);
    }
    out
}

pub(crate) fn answer_judge(input: &AnswerJudgeInput) -> AnswerJudgeOutput {
    const ARTICLES: &[&str] = &["a", "an", "the"];
    let clean = |s: &str| -> Vec<String> {
        let joined: String = s.replace(',', "");
        words(&joined)
            .into_iter()
            .filter(|w| !ARTICLES.contains(&w.as_str()))
            .collect()
    };
    let gold = clean(&input.gold_answer);
    let pred = clean(&input.prediction);
    if gold.is_empty() || pred.is_empty() {
        return AnswerJudgeOutput { correct: false };
    }
    let in_order = {
        let g = gold.join(" ");
        format!(" {} ", pred.join(" ")).contains(&format!(" {g} "))
    };
    let gold_nums = numbers(&input.gold_answer);
    let pred_nums = numbers(&input.prediction);
    let nums_match = !gold_nums.is_empty()
        && gold_nums.iter().all(|g| {
            pred_nums
                .iter()
                .any(|p| (p - g).abs() <= 1e-9 * g.abs().max(1.0))
        });
    AnswerJudgeOutput {
        correct: in_order || nums_match,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopwords_are_sorted_for_binary_search() {
        let mut s = STOPWORDS.to_vec();
        s.sort_unstable();
        assert_eq!(s, STOPWORDS);
        let mut v = RELATION_VERBS.to_vec();
        v.sort_unstable();
        assert_eq!(v, RELATION_VERBS);
    }

    #[test]
    fn rake_keywords() {
        let out = keywords(&KeywordsInput {
            claim: "Says Joe Biden raised taxes on middle-class families by 20 percent in 2021."
                .into(),
            max_keywords: 3,
        });
        assert_eq!(
            out.keywords,
            vec![
                "Joe Biden raised taxes",
                "middle-class families",
                "20 percent"
            ]
        );
    }

    #[test]
    fn yes_no_questions() {
        let q = |c: &str| {
            claim_to_question(&ClaimToQuestionInput {
                claim: c.into(),
                claim_date: None,
                speaker: Some("Jane Doe".into()),
            })
            .question
        };
        assert_eq!(
            q("Nigeria had a population of 45 million at the time of independence."),
            "Did Nigeria have a population of 45 million at the time of independence?"
        );
        assert_eq!(
            q("Jane Doe says the unemployment rate is at a record low."),
            "Is the unemployment rate at a record low?"
        );
        assert_eq!(
            q("Says vaccines cause autism."),
            "Is it true that vaccines cause autism?"
        );
    }

    #[test]
    fn exam_and_stance_cues() {
        let claim = "The city banned plastic bags in 2019.";
        let v = |d: Option<&str>| {
            exam_verdict(&ExamVerdictInput {
                claim: claim.into(),
                claim_date: None,
                document_title: None,
                document: d.map(String::from),
            })
            .verdict
        };
        assert_eq!(v(None), Verdict::Undecided);
        assert_eq!(
            v(Some("The city banned plastic bags in 2019, records show.")),
            Verdict::True
        );
        assert_eq!(
            v(Some(
                "Posts saying the city banned plastic bags are a hoax; it is false."
            )),
            Verdict::False
        );
        assert_eq!(v(Some("A recipe for apple pie.")), Verdict::Undecided);
        let (s, why) = stance_text(&StanceTextInput {
            claim: claim.into(),
            claim_date: None,
            text: "Fact check: false. The city never banned plastic bags in 2019.".into(),
        });
        assert_eq!(s, Stance::Reject);
        assert!(why.ends_with("Final answer: Reject."), "{why}");
        let u = stance_url(&StanceUrlInput {
            claim: claim.into(),
            claim_date: None,
            url: "https://example.com/fact-check/city-plastic-bags-ban-hoax".into(),
        });
        assert_eq!(u.stance, Stance::Reject);
    }

    #[test]
    fn credibility_by_domain() {
        let c = |d: &str| {
            let o = credibility(&CredibilityInput {
                domain: d.into(),
                description: None,
            });
            (o.credibility, o.source_type)
        };
        assert_eq!(
            c("www.cdc.gov"),
            (CredibilityLevel::High, SourceType::Government)
        );
        assert_eq!(
            c("old.reddit.com"),
            (CredibilityLevel::Low, SourceType::SocialMedia)
        );
        assert_eq!(
            c("www.reuters.com"),
            (CredibilityLevel::High, SourceType::MainstreamNews)
        );
        assert_eq!(
            c("ox.ac.uk"),
            (CredibilityLevel::High, SourceType::Academic)
        );
        assert_eq!(
            c("example.org"),
            (CredibilityLevel::Medium, SourceType::NonProfit)
        );
        assert_eq!(
            c("blog.example"),
            (CredibilityLevel::Low, SourceType::Other)
        );
    }

    #[test]
    fn triplets_from_sentences_and_tables() {
        let out = triplets(&TripletsInput {
            domain: "finance".into(),
            chunks: vec![ChunkText {
                chunk_id: "c1".into(),
                text: "Net sales increased by 8% to $394 billion in 2022. We think so.\n\n\
                       | Segment | 2022 | 2021 |\n|---|---|---|\n| Americas | $169,658 | $153,306 |\n"
                    .into(),
            }],
            target: 0,
        });
        let t: Vec<(&str, &str, &str)> = out
            .triplets
            .iter()
            .map(|t| {
                (
                    t.entity_1.as_str(),
                    t.relation.as_str(),
                    t.entity_2.as_str(),
                )
            })
            .collect();
        assert_eq!(
            t,
            vec![
                ("Americas", "has 2022 of", "$169,658"),
                ("Americas", "has 2021 of", "$153,306"),
                ("Net sales", "increased by", "8% to $394 billion in 2022"),
            ]
        );
        assert_eq!(
            out.triplets[0].source_sentence,
            "| Americas | $169,658 | $153,306 |"
        );
        assert_eq!(
            out.triplets[2].source_sentence,
            "Net sales increased by 8% to $394 billion in 2022."
        );
    }

    fn tt(e1: &str, r: &str, e2: &str, chunk: &str) -> TripletText {
        TripletText {
            entity_1: e1.into(),
            relation: r.into(),
            entity_2: e2.into(),
            chunk_id: chunk.into(),
            source_sentence: format!("{e1} {r} {e2}."),
        }
    }

    #[test]
    fn multi_hop_templates_hide_the_pivot() {
        let chain = qa_multi(&QaMultiInput {
            pattern: Pattern::Chain,
            triplets: vec![
                tt("Luxembourg", "implemented", "free public transport", "c1"),
                tt(
                    "free public transport",
                    "aims to reduce",
                    "carbon emissions",
                    "c2",
                ),
            ],
            chunks: vec![],
        });
        assert_eq!(
            chain.question,
            "Luxembourg implemented something that aims to reduce what?"
        );
        assert_eq!(chain.answer, "carbon emissions");
        let inv = qa_multi(&QaMultiInput {
            pattern: Pattern::InvertedStar,
            triplets: vec![
                tt(
                    "Luxembourg",
                    "faces challenges in",
                    "housing affordability",
                    "c1",
                ),
                tt(
                    "OECD recommendations",
                    "address",
                    "housing affordability",
                    "c2",
                ),
            ],
            chunks: vec![],
        });
        assert_eq!(
            inv.question,
            "What address the same thing that Luxembourg faces challenges in?"
        );
        assert_eq!(inv.answer, "OECD recommendations");
        let same_chunk = qa_multi(&QaMultiInput {
            pattern: Pattern::Chain,
            triplets: vec![
                tt("Luxembourg", "implemented", "free public transport", "c1"),
                tt(
                    "free public transport",
                    "aims to reduce",
                    "carbon emissions",
                    "c1",
                ),
            ],
            chunks: vec![],
        });
        assert_eq!(same_chunk, declined());
    }

    #[test]
    fn judges() {
        let j = qa_judge(&QaJudgeInput {
            question: "Luxembourg implemented something that aims to reduce what?".into(),
            answer: "carbon emissions".into(),
            chunks: vec![],
            source_sentences: vec![
                "Luxembourg implemented free public transport.".into(),
                "Free public transport aims to reduce carbon emissions.".into(),
            ],
            multi_hop: true,
        });
        assert_eq!(
            (j.clarity, j.correctness, j.reasonableness),
            (5, 5, Some(5))
        );
        let a = |g: &str, p: &str| {
            answer_judge(&AnswerJudgeInput {
                question: String::new(),
                gold_answer: g.into(),
                prediction: p.into(),
            })
            .correct
        };
        assert!(a(
            "$50 million",
            "The company's revenue was $50 million in 2023"
        ));
        assert!(a("Apple", "Apple Inc."));
        assert!(a("1,000,000", "The population is around 1 million"));
        assert!(!a("25%", "I cannot find that information"));
        assert!(!a("General Motors", "Tesla"));
    }

    #[test]
    fn rewrites() {
        let g = query_grammar(&RewriteInput {
            query: "What was the revenue of Apple in 2022?".into(),
            candidates: 3,
        });
        assert_eq!(
            g.rewrites,
            vec![
                "In 2022, what was the revenue of Apple?",
                "Could you tell me what was the revenue of Apple in 2022?",
                "I would like to know what was the revenue of Apple in 2022."
            ]
        );
        let i = query_irrelevant(&RewriteInput {
            query: "What was the revenue of Apple in 2022?".into(),
            candidates: 3,
        });
        assert_eq!(i.rewrites.len(), 3);
        assert!(
            i.rewrites
                .iter()
                .all(|r| r.ends_with("what was the revenue of Apple in 2022?"))
        );
        let b = back_translate(&BackTranslateInput {
            text: "However, the company's sales increased 5.2% to $10,400 million.".into(),
            pivot_language: "French".into(),
        });
        assert_eq!(
            b.text,
            "Nevertheless, the firm's sales rose 5.2% to $10,400 million."
        );
    }
}

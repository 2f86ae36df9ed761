//! BM25 over a collection with tantivy: a [`Spec`] names the collection's fields (an `id`, text
//! fields searched with BM25, fields only stored, an optional timestamp for range filters), a
//! [`Bm25Builder`] adds [`Doc`]s and commits, and [`Bm25::search`] ranks them for a [`Query`].
//!
//! Text is analysed the same way at indexing and query time: words split at non-alphanumerics,
//! longer than 40 bytes dropped, lowercased, ASCII-folded, English stopwords removed, stemmed
//! (Snowball). A query is the set of its analysed terms, each a `should` clause on every text
//! field with that field's boost, so a document matching more terms, rarer terms, or terms in a
//! boosted field ranks higher. One indexing thread keeps document order, and so every tie, the
//! same on every run; ties in score are broken by id.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::path::{Path, PathBuf};

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, RangeQuery, TermQuery};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing,
    TextOptions, Value,
};
use tantivy::tokenizer::{
    AsciiFoldingFilter, Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer,
    StopWordFilter, TextAnalyzer,
};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

const TOKENIZER: &str = "noisebench_en";
/// The indexing arena of the one writer thread (tantivy flushes a segment when it fills).
const WRITER_BYTES: usize = 200_000_000;
/// Candidates fetched beyond `top_k`, so documents tied with the last kept one are all seen
/// before ties are broken by id.
const TIE_MARGIN: usize = 16;

/// Why an index could not be built, opened or searched.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("index {location}: {message}")]
    Tantivy { location: String, message: String },
    #[error("document `{id}`: {message}")]
    Doc { id: String, message: String },
}

/// A text field searched with BM25.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextField {
    pub name: &'static str,
    /// Whether hits return the field's text.
    pub stored: bool,
}

/// The fields of a collection. Every document also has an `id` (stored, exact).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// Fields searched, in the order of [`Doc::text`] and [`Query::boosts`].
    pub text: Vec<TextField>,
    /// Fields only stored and returned with hits, in the order of [`Doc::stored`].
    pub stored: Vec<&'static str>,
    /// A timestamp field (seconds) that queries can filter on, if any.
    pub time: Option<&'static str>,
}

impl Spec {
    /// One text field searched and not stored, nothing else: a plain passage collection.
    pub fn one_text(name: &'static str) -> Self {
        Spec {
            text: vec![TextField {
                name,
                stored: false,
            }],
            stored: Vec::new(),
            time: None,
        }
    }
}

/// One document of a collection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Doc {
    pub id: String,
    /// One text per [`Spec::text`] field.
    pub text: Vec<String>,
    /// One value per [`Spec::stored`] field.
    pub stored: Vec<String>,
    pub time: Option<i64>,
}

/// What to look for.
#[derive(Debug, Clone, PartialEq)]
pub struct Query<'a> {
    pub text: &'a str,
    pub top_k: usize,
    /// Weight of a match in each text field, in [`Spec::text`] order; missing ones are 1.
    pub boosts: &'a [f32],
    /// Inclusive bounds on the time field.
    pub from: Option<i64>,
    pub to: Option<i64>,
}

impl<'a> Query<'a> {
    /// The `top_k` best matches of `text`, every field weighted alike, no time bounds.
    pub fn new(text: &'a str, top_k: usize) -> Self {
        Self {
            text,
            top_k,
            boosts: &[],
            from: None,
            to: None,
        }
    }
}

/// One ranked document.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub id: String,
    pub score: f32,
    /// The stored text fields and stored-only fields, by name.
    pub fields: BTreeMap<String, String>,
    pub time: Option<i64>,
}

impl Hit {
    /// A stored field's value, empty when absent.
    pub fn field(&self, name: &str) -> &str {
        self.fields.get(name).map_or("", String::as_str)
    }
}

/// Where an index lives.
#[derive(Debug, Clone, Copy)]
pub enum Location<'a> {
    /// In memory, gone with the handle.
    Ram,
    /// In a directory (created if missing; must not already hold an index).
    Dir(&'a Path),
}

pub(crate) struct Fields {
    pub(crate) id: Field,
    pub(crate) text: Vec<Field>,
    stored: Vec<Field>,
    time: Option<Field>,
}

fn schema(spec: &Spec) -> (Schema, Fields) {
    let mut b = Schema::builder();
    let indexing = TextFieldIndexing::default()
        .set_tokenizer(TOKENIZER)
        .set_index_option(IndexRecordOption::WithFreqs);
    let text = TextOptions::default().set_indexing_options(indexing);
    let fields = Fields {
        id: b.add_text_field("id", STRING | STORED),
        text: spec
            .text
            .iter()
            .map(|f| {
                let options = if f.stored {
                    text.clone().set_stored()
                } else {
                    text.clone()
                };
                b.add_text_field(f.name, options)
            })
            .collect(),
        stored: spec
            .stored
            .iter()
            .map(|name| b.add_text_field(name, STORED))
            .collect(),
        time: spec
            .time
            .map(|name| b.add_i64_field(name, INDEXED | STORED | FAST)),
    };
    (b.build(), fields)
}

/// The analyser of indexed and query text (see the module doc).
fn analyzer() -> TextAnalyzer {
    unstemmed().filter(Stemmer::new(Language::English)).build()
}

/// [`analyzer`] up to its last filter, the stemmer.
fn unstemmed() -> tantivy::tokenizer::TextAnalyzerBuilder<impl tantivy::tokenizer::Tokenizer> {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .filter(
            StopWordFilter::new(Language::English)
                .unwrap_or_else(|| StopWordFilter::remove(Vec::<String>::new())),
        )
}

/// [`analyzer`] split at its last filter, the stemmer, which works on each token alone: the
/// analyser without it, and the stemmer over a whole text as one token. A thread keeps both and
/// each word's stem, so a word is stemmed once per thread however often it occurs (stemming is
/// most of the analyser's time).
struct Analysers {
    unstemmed: TextAnalyzer,
    stemmer: TextAnalyzer,
    stems: foldhash::HashMap<String, String>,
}

/// Words whose stems a thread keeps, at most (then it starts again).
const STEMS_KEPT: usize = 1 << 18;

thread_local! {
    static ANALYSERS: std::cell::RefCell<Analysers> = std::cell::RefCell::new(Analysers {
        unstemmed: unstemmed().build(),
        stemmer: TextAnalyzer::builder(tantivy::tokenizer::RawTokenizer::default())
            .filter(Stemmer::new(Language::English))
            .build(),
        stems: foldhash::HashMap::default(),
    });
}

/// Each term of `text` as [`analyzer`] gives it, in order (repeats included).
fn each_term(text: &str, mut f: impl FnMut(&str)) {
    ANALYSERS.with_borrow_mut(|a| {
        let Analysers {
            unstemmed,
            stemmer,
            stems,
        } = a;
        let mut stream = unstemmed.token_stream(text);
        while stream.advance() {
            let word = &stream.token().text;
            if let Some(stem) = stems.get(word.as_str()) {
                f(stem);
                continue;
            }
            let mut one = stemmer.token_stream(word);
            let stem = if one.advance() {
                one.token().text.clone()
            } else {
                word.clone()
            };
            f(&stem);
            if stems.len() >= STEMS_KEPT {
                stems.clear();
            }
            stems.insert(word.clone(), stem);
        }
    })
}

/// A text as the index's analyser sees it: each distinct term with its frequency (sorted by
/// term), and the number of tokens (the document length BM25 normalises by).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysed {
    pub terms: Vec<(String, u32)>,
    pub tokens: u32,
}

/// Analyse `text` as the index does for a text field ([`crate::Impacts::from_analysed`]).
pub fn analyse(text: &str) -> Analysed {
    analyse_kept(text, |_| true)
}

/// [`analyse`], keeping only the terms in `keep`, every token still counted in `tokens`: all
/// [`crate::Impacts::from_analysed`] needs to score queries whose terms are all in `keep`, with
/// the same scores as from the whole analysis (a term's weight depends only on its own
/// postings, the number of documents and their lengths), at a fraction of the memory and time
/// when the queries use few of the texts' terms.
pub fn analyse_only(text: &str, keep: &std::collections::HashSet<String>) -> Analysed {
    analyse_kept(text, |t| keep.contains(t))
}

/// Each term of `text` that `kept` keeps, with its frequency; every token counted.
fn analyse_kept(text: &str, kept: impl Fn(&str) -> bool) -> Analysed {
    // A hash map (a text has hundreds of distinct terms, each looked up per token), sorted once.
    let mut counts: foldhash::HashMap<String, u32> = foldhash::HashMap::default();
    let mut tokens = 0u32;
    each_term(text, |t| {
        tokens += 1;
        if !kept(t) {
            return;
        }
        match counts.get_mut(t) {
            Some(n) => *n += 1,
            None => {
                counts.insert(t.to_string(), 1);
            }
        }
    });
    let mut terms: Vec<(String, u32)> = counts.into_iter().collect();
    terms.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Analysed { terms, tokens }
}

/// The distinct terms of `text` as the index sees them, sorted.
pub fn terms(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    each_term(text, |t| {
        if !out.contains(t) {
            out.insert(t.to_string());
        }
    });
    out
}

fn describe(location: &Option<PathBuf>) -> String {
    match location {
        Some(dir) => dir.display().to_string(),
        None => "(in memory)".into(),
    }
}

fn tantivy_err(location: &Option<PathBuf>) -> impl Fn(tantivy::TantivyError) -> IndexError + '_ {
    move |e| IndexError::Tantivy {
        location: describe(location),
        message: e.to_string(),
    }
}

/// Adds documents to a new index; [`Bm25Builder::finish`] commits and opens it for search.
pub struct Bm25Builder {
    index: Index,
    writer: IndexWriter<TantivyDocument>,
    fields: Fields,
    spec: Spec,
    dir: Option<PathBuf>,
}

impl Bm25Builder {
    /// Add one document. Its texts and stored values must match the spec's fields in number.
    pub fn add(&mut self, doc: Doc) -> Result<(), IndexError> {
        if doc.text.len() != self.fields.text.len() || doc.stored.len() != self.fields.stored.len()
        {
            return Err(IndexError::Doc {
                id: doc.id,
                message: format!(
                    "{} texts and {} stored values for {} text and {} stored fields",
                    doc.text.len(),
                    doc.stored.len(),
                    self.fields.text.len(),
                    self.fields.stored.len()
                ),
            });
        }
        let mut d = TantivyDocument::default();
        d.add_text(self.fields.id, &doc.id);
        for (f, t) in self.fields.text.iter().zip(&doc.text) {
            d.add_text(*f, t);
        }
        for (f, v) in self.fields.stored.iter().zip(&doc.stored) {
            d.add_text(*f, v);
        }
        if let (Some(f), Some(t)) = (self.fields.time, doc.time) {
            d.add_i64(f, t);
        }
        self.writer
            .add_document(d)
            .map(|_| ())
            .map_err(tantivy_err(&self.dir))
    }

    /// Commit every added document and open the index for search.
    pub fn finish(mut self) -> Result<Bm25, IndexError> {
        self.writer.commit().map_err(tantivy_err(&self.dir))?;
        self.writer
            .wait_merging_threads()
            .map_err(tantivy_err(&self.dir))?;
        Bm25::from_index(self.index, self.fields, self.spec, self.dir)
    }
}

/// A searchable BM25 index over one collection.
pub struct Bm25 {
    index: Index,
    reader: IndexReader,
    fields: Fields,
    spec: Spec,
    dir: Option<PathBuf>,
}

impl Bm25 {
    /// Start a new index for `spec` at `location`.
    pub fn create(spec: &Spec, location: Location<'_>) -> Result<Bm25Builder, IndexError> {
        let (schema, fields) = schema(spec);
        let dir = match location {
            Location::Ram => None,
            Location::Dir(d) => Some(d.to_path_buf()),
        };
        let index = match &dir {
            None => Index::create_in_ram(schema),
            Some(d) => {
                std::fs::create_dir_all(d).map_err(|e| IndexError::Tantivy {
                    location: d.display().to_string(),
                    message: e.to_string(),
                })?;
                Index::create_in_dir(d, schema).map_err(tantivy_err(&dir))?
            }
        };
        index.tokenizers().register(TOKENIZER, analyzer());
        let writer = index
            .writer_with_num_threads::<TantivyDocument>(1, WRITER_BYTES)
            .map_err(tantivy_err(&dir))?;
        Ok(Bm25Builder {
            index,
            writer,
            fields,
            spec: spec.clone(),
            dir,
        })
    }

    /// An index of `docs` in memory.
    pub fn in_ram(spec: &Spec, docs: impl IntoIterator<Item = Doc>) -> Result<Bm25, IndexError> {
        let mut b = Bm25::create(spec, Location::Ram)?;
        for d in docs {
            b.add(d)?;
        }
        b.finish()
    }

    /// Open an index built in `dir` for the same `spec`.
    pub fn open(dir: &Path, spec: &Spec) -> Result<Bm25, IndexError> {
        let location = Some(dir.to_path_buf());
        let index = Index::open_in_dir(dir).map_err(tantivy_err(&location))?;
        index.tokenizers().register(TOKENIZER, analyzer());
        let (_, fields) = schema(spec);
        Bm25::from_index(index, fields, spec.clone(), location)
    }

    fn from_index(
        index: Index,
        fields: Fields,
        spec: Spec,
        dir: Option<PathBuf>,
    ) -> Result<Bm25, IndexError> {
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(tantivy_err(&dir))?;
        Ok(Bm25 {
            index,
            reader,
            fields,
            spec,
            dir,
        })
    }

    /// A searcher and the fields (for [`crate::impact`]).
    pub(crate) fn parts(&self) -> (tantivy::Searcher, &Fields) {
        (self.reader.searcher(), &self.fields)
    }

    /// Documents in the index.
    pub fn len(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `top_k` documents for `query`, by score, ties by id. A query with no term left after
    /// analysis (only stopwords, say) matches nothing.
    pub fn search(&self, query: &Query<'_>) -> Result<Vec<Hit>, IndexError> {
        let terms = terms(query.text);
        if terms.is_empty() || query.top_k == 0 {
            return Ok(Vec::new());
        }
        let mut clauses: Vec<(Occur, Box<dyn tantivy::query::Query>)> = Vec::new();
        for t in &terms {
            for (i, field) in self.fields.text.iter().enumerate() {
                let term: Box<dyn tantivy::query::Query> = Box::new(TermQuery::new(
                    Term::from_field_text(*field, t),
                    IndexRecordOption::WithFreqs,
                ));
                let clause = match query.boosts.get(i) {
                    Some(b) if *b != 1.0 => Box::new(BoostQuery::new(term, *b)),
                    _ => term,
                };
                clauses.push((Occur::Should, clause));
            }
        }
        let terms: Box<dyn tantivy::query::Query> = Box::new(BooleanQuery::new(clauses));
        let bounded = query.from.is_some() || query.to.is_some();
        let q: Box<dyn tantivy::query::Query> = match (self.fields.time, bounded) {
            (Some(time), true) => {
                let bound = |v: Option<i64>| match v {
                    Some(v) => Bound::Included(Term::from_field_i64(time, v)),
                    None => Bound::Unbounded,
                };
                Box::new(BooleanQuery::new(vec![
                    (Occur::Must, terms),
                    (
                        Occur::Must,
                        Box::new(RangeQuery::new(bound(query.from), bound(query.to))),
                    ),
                ]))
            }
            _ => terms,
        };
        let searcher = self.reader.searcher();
        let top = searcher
            .search(
                &q,
                &TopDocs::with_limit(query.top_k + TIE_MARGIN).order_by_score(),
            )
            .map_err(tantivy_err(&self.dir))?;
        let mut hits = Vec::with_capacity(top.len());
        for (score, addr) in top {
            let d: TantivyDocument = searcher.doc(addr).map_err(tantivy_err(&self.dir))?;
            let s = |f: Field| {
                d.get_first(f)
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            };
            let mut fields = BTreeMap::new();
            for (spec, f) in self.spec.text.iter().zip(&self.fields.text) {
                if spec.stored {
                    fields.insert(spec.name.to_string(), s(*f));
                }
            }
            for (name, f) in self.spec.stored.iter().zip(&self.fields.stored) {
                fields.insert(name.to_string(), s(*f));
            }
            hits.push(Hit {
                id: s(self.fields.id),
                score,
                fields,
                time: self
                    .fields
                    .time
                    .and_then(|f| d.get_first(f).and_then(|v| v.as_i64())),
            });
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
        hits.truncate(query.top_k);
        Ok(hits)
    }

    /// The tantivy index (for benchmarks and inspection).
    pub fn tantivy(&self) -> &Index {
        &self.index
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every term of `text` from the whole analyser, in order.
    fn analysed_whole(text: &str) -> Vec<String> {
        let mut analyzer = analyzer();
        let mut stream = analyzer.token_stream(text);
        let mut out = Vec::new();
        while stream.advance() {
            out.push(stream.token().text.clone());
        }
        out
    }

    proptest! {
        /// The split analyser with its kept stems gives the whole analyser's terms, in order,
        /// on any text, twice over (the second time from the kept stems).
        #[test]
        fn kept_stems_are_the_analysers_terms(
            text in "(\\PC{0,12}|[A-Za-z]{1,12}|running|Runs|the|café|ſ) {0,3}.{0,4}",
            more in proptest::collection::vec("[a-zA-Z'éü-]{1,50}", 0..30),
        ) {
            let text = format!("{text} {}", more.join(" "));
            let want = analysed_whole(&text);
            for _ in 0..2 {
                let mut got = Vec::new();
                each_term(&text, |t| got.push(t.to_string()));
                prop_assert_eq!(&got, &want);
            }
            let a = analyse(&text);
            prop_assert_eq!(a.tokens as usize, want.len());
            let mut counts = std::collections::BTreeMap::new();
            for t in &want {
                *counts.entry(t.clone()).or_insert(0u32) += 1;
            }
            prop_assert_eq!(a.terms, counts.into_iter().collect::<Vec<_>>());
            prop_assert_eq!(terms(&text), want.into_iter().collect::<BTreeSet<_>>());
        }
    }

    proptest! {
        /// Postings of only the queries' terms rank every such query as the whole analysis
        /// does: the same documents, scores and order.
        #[test]
        fn postings_of_the_query_terms_alone_rank_as_the_whole(
            texts in proptest::collection::vec(
                proptest::collection::vec("(alpha|beta|gamma|delta|mines|mining|the|copper|x[a-c]{1,2})", 0..40),
                1..40,
            ),
            queries in proptest::collection::vec("(alpha|beta|gamma|mine|copper|xa|xb)( (alpha|beta|gamma|mine|copper|xa|xb)){0,3}", 1..6),
            k in 1usize..12,
        ) {
            let texts: Vec<String> = texts.iter().map(|t| t.join(" ")).collect();
            let ids: Vec<String> = (0..texts.len()).map(|i| format!("d{i:03}")).collect();
            let keep: std::collections::HashSet<String> =
                queries.iter().flat_map(|q| terms(q)).collect();
            let whole = crate::Impacts::from_analysed(
                ids.clone(),
                &texts.iter().map(|t| analyse(t)).collect::<Vec<_>>(),
            );
            let only = crate::Impacts::from_analysed(
                ids,
                &texts.iter().map(|t| analyse_only(t, &keep)).collect::<Vec<_>>(),
            );
            let mut scratch = crate::Scratch::default();
            for q in &queries {
                let terms = terms(q);
                let a = whole.search(&terms, k, &mut scratch);
                let b = only.search(&terms, k, &mut scratch);
                prop_assert_eq!(a, b);
            }
        }
    }

    fn spec() -> Spec {
        Spec {
            text: vec![
                TextField {
                    name: "title",
                    stored: true,
                },
                TextField {
                    name: "body",
                    stored: false,
                },
            ],
            stored: vec!["url"],
            time: Some("created"),
        }
    }

    fn doc(id: &str, title: &str, body: &str, time: i64) -> Doc {
        Doc {
            id: id.into(),
            text: vec![title.into(), body.into()],
            stored: vec![format!("https://x/{id}")],
            time: Some(time),
        }
    }

    fn docs() -> Vec<Doc> {
        vec![
            doc(
                "d1",
                "Plastic bags banned",
                "The city banned plastic bags.",
                100,
            ),
            doc("d2", "Weather", "Rain today; plastic chairs outside.", 200),
            doc("d3", "Bags", "Paper bags are back in shops.", 300),
            doc(
                "d4",
                "Nothing",
                "Completely unrelated text about trains.",
                400,
            ),
        ]
    }

    fn ids(hits: &[Hit]) -> Vec<&str> {
        hits.iter().map(|h| h.id.as_str()).collect()
    }

    #[test]
    fn ranks_by_bm25_with_boosts_filters_and_stored_fields() {
        let index = Bm25::in_ram(&spec(), docs()).unwrap();
        assert_eq!(index.len(), 4);
        let hits = index
            .search(&Query::new("banning plastic bags", 10))
            .unwrap();
        assert_eq!(ids(&hits), ["d1", "d3", "d2"]);
        assert_eq!(hits[0].field("title"), "Plastic bags banned");
        assert_eq!(hits[0].field("url"), "https://x/d1");
        assert_eq!(hits[0].field("body"), "", "body is not stored");
        assert_eq!(hits[0].time, Some(100));
        // Time bounds are inclusive.
        let q = Query {
            from: Some(200),
            to: Some(300),
            ..Query::new("plastic bags", 10)
        };
        assert_eq!(ids(&index.search(&q).unwrap()), ["d3", "d2"]);
        // A title boost lifts title matches.
        let q = Query {
            boosts: &[5.0, 1.0],
            ..Query::new("bags chairs", 10)
        };
        assert_eq!(ids(&index.search(&q).unwrap())[0], "d3");
        assert!(
            index
                .search(&Query::new("the of and", 10))
                .unwrap()
                .is_empty()
        );
        assert!(index.search(&Query::new("plastic", 0)).unwrap().is_empty());
    }

    #[test]
    fn ties_are_broken_by_id_whatever_the_insertion_order() {
        let same = |id: &str| doc(id, "Same", "identical words here", 1);
        let a = Bm25::in_ram(&spec(), ["c", "a", "b"].map(same)).unwrap();
        let b = Bm25::in_ram(&spec(), ["b", "c", "a"].map(same)).unwrap();
        let q = Query::new("identical words", 2);
        assert_eq!(ids(&a.search(&q).unwrap()), ["a", "b"]);
        assert_eq!(a.search(&q).unwrap(), b.search(&q).unwrap());
    }

    #[test]
    fn an_index_on_disk_reopens_with_the_same_answers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("idx");
        let mut b = Bm25::create(&spec(), Location::Dir(&path)).unwrap();
        for d in docs() {
            b.add(d).unwrap();
        }
        let built = b.finish().unwrap();
        let q = Query::new("plastic bags", 3);
        let want = built.search(&q).unwrap();
        drop(built);
        let reopened = Bm25::open(&path, &spec()).unwrap();
        assert_eq!(reopened.search(&q).unwrap(), want);
        assert_eq!(
            want,
            Bm25::in_ram(&spec(), docs()).unwrap().search(&q).unwrap()
        );
    }

    #[test]
    fn a_document_with_the_wrong_fields_is_refused() {
        let mut b = Bm25::create(&spec(), Location::Ram).unwrap();
        let e = b
            .add(Doc {
                id: "x".into(),
                text: vec!["only one".into()],
                stored: vec![],
                time: None,
            })
            .unwrap_err();
        assert!(e.to_string().starts_with("document `x`"), "{e}");
    }
}

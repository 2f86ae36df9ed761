//! [`Rows`]: the closed set of tables, each a vector of typed rows.
//!
//! The runner moves tables between stages as `Rows`; `noisebench-pipeline` converts them to and from
//! Parquet in one generic place, driven by each table's [`TableSchema`].

use std::collections::BTreeSet;

use serde::Serialize;

use crate::model::*;
pub use crate::schema::Record;
use crate::schema::TableSchema;

/// Columns that record when and from which raw response a row was fetched, not what it says:
/// a refetch of an unchanged page changes them and nothing else, so snapshot diffs do not count
/// them as changes.
pub(crate) const FETCH_COLUMNS: &[&str] = &["fetched_at", "archive_ref"];

/// Ties a row type to its [`Rows`] variant. Implemented by the `tables!` macro below.
pub trait TableRow: Record {
    const KIND: TableKind;
    fn into_rows(rows: Vec<Self>) -> Rows;
    /// The rows if `rows` holds this table, else the rows back unchanged.
    fn from_rows(rows: Rows) -> Result<Vec<Self>, Rows>;
    /// The rows if `rows` holds this table.
    fn slice(rows: &Rows) -> Option<&[Self]>;
}

macro_rules! tables {
    ($( $variant:ident($ty:ty) = $name:literal ),* $(,)?) => {
        /// Every table noisebench knows.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum TableKind { $($variant),* }

        impl TableKind {
            pub const ALL: &'static [TableKind] = &[$(TableKind::$variant),*];

            /// The table's name: its Parquet file stem and its schema file name.
            pub fn name(self) -> &'static str {
                match self { $(TableKind::$variant => $name),* }
            }

            pub fn from_name(name: &str) -> Option<Self> {
                match name { $($name => Some(TableKind::$variant),)* _ => None }
            }

            pub fn schema(self) -> TableSchema {
                match self { $(TableKind::$variant => <$ty as Record>::schema()),* }
            }
        }

        /// One table's rows, typed.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Rows { $($variant(Vec<$ty>)),* }

        impl Rows {
            pub fn empty(kind: TableKind) -> Rows {
                match kind { $(TableKind::$variant => Rows::$variant(Vec::new())),* }
            }

            /// One row of `kind` with every field at its default (tests build samples from it).
            pub fn one_default(kind: TableKind) -> Rows {
                match kind { $(TableKind::$variant => Rows::$variant(vec![<$ty>::default()])),* }
            }

            pub fn kind(&self) -> TableKind {
                match self { $(Rows::$variant(_) => TableKind::$variant),* }
            }

            pub fn len(&self) -> usize {
                match self { $(Rows::$variant(v) => v.len()),* }
            }

            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// Each row as a JSON object whose keys are the schema's columns.
            pub fn json_rows(&self) -> Box<dyn Iterator<Item = serde_json::Value> + '_> {
                match self {
                    $(Rows::$variant(v) => Box::new(v.iter().map(|r| {
                        serde_json::to_value(r).expect("rows of the data model always serialise")
                    }))),*
                }
            }

            /// Rows of `kind` from JSON objects (the inverse of [`Rows::json_rows`]); an error names
            /// the 0-based index of the first row that does not decode.
            pub fn from_json_rows(
                kind: TableKind,
                values: impl IntoIterator<Item = serde_json::Value>,
            ) -> Result<Rows, (usize, serde_json::Error)> {
                Ok(match kind {
                    $(TableKind::$variant => Rows::$variant(
                        values
                            .into_iter()
                            .enumerate()
                            .map(|(i, v)| serde_json::from_value(v).map_err(|e| (i, e)))
                            .collect::<Result<_, _>>()?,
                    )),*
                })
            }

            /// Serialise the rows in `range` (within the rows), in order, into `sink` (a serde
            /// serializer over `&mut W`, such as a column writer); an error names the row's index
            /// among all the rows.
            pub fn serialize_range<W, E>(
                &self,
                range: std::ops::Range<usize>,
                sink: &mut W,
            ) -> Result<(), (usize, E)>
            where
                for<'a> &'a mut W: serde::Serializer<Ok = (), Error = E>,
            {
                let start = range.start;
                match self {
                    $(Rows::$variant(v) => {
                        for (i, r) in v[range].iter().enumerate() {
                            r.serialize(&mut *sink).map_err(|e| (start + i, e))?;
                        }
                    }),*
                }
                Ok(())
            }

            /// `n` rows of `kind` decoded in parts, each on its own thread from its own source
            /// (`source(start)`, positioned at the part's first row), straight into one table:
            /// no part is copied to join them. `parts` are `(start, end)` row ranges covering
            /// `0..n` in order. An error names the 0-based index of the row.
            pub fn deserialize_parts<R, E: Send>(
                kind: TableKind,
                n: usize,
                parts: &[(usize, usize)],
                source: impl Fn(usize) -> R + Sync,
            ) -> Result<Rows, (usize, E)>
            where
                for<'a> &'a mut R: serde::Deserializer<'static, Error = E>,
            {
                Ok(match kind {
                    $(TableKind::$variant => {
                        // Defaults first (empty strings allocate nothing), so each thread
                        // fills its own slice safely.
                        let mut rows: Vec<$ty> = Vec::new();
                        rows.resize_with(n, Default::default);
                        let mut slices = Vec::with_capacity(parts.len());
                        let mut rest: &mut [$ty] = &mut rows;
                        for &(start, end) in parts {
                            let (part, tail) = rest.split_at_mut(end - start);
                            slices.push((start, part));
                            rest = tail;
                        }
                        let source = &source;
                        std::thread::scope(|scope| {
                            let handles: Vec<_> = slices
                                .into_iter()
                                .map(|(start, part)| {
                                    scope.spawn(move || {
                                        let mut r = source(start);
                                        for (i, slot) in part.iter_mut().enumerate() {
                                            *slot = <$ty as serde::Deserialize>::deserialize(
                                                &mut r,
                                            )
                                            .map_err(|e| (start + i, e))?;
                                        }
                                        Ok(())
                                    })
                                })
                                .collect();
                            handles
                                .into_iter()
                                .map(|h| h.join().expect("a decoding thread panicked"))
                                .collect::<Result<(), (usize, E)>>()
                        })?;
                        Rows::$variant(rows)
                    }),*
                })
            }

            /// The rows at `indices`, in that order (cloned).
            pub fn select(&self, indices: &[usize]) -> Rows {
                match self {
                    $(Rows::$variant(v) => Rows::$variant(indices.iter().map(|&i| v[i].clone()).collect())),*
                }
            }

            /// Each row's value in the string column `column`: `None` when the table has no such
            /// column or it holds another type (an empty table gives an empty list).
            pub fn string_column(&self, column: &str) -> Option<Vec<String>> {
                let mut out = Vec::with_capacity(self.len());
                for v in self.json_rows() {
                    out.push(v.get(column)?.as_str()?.to_string());
                }
                if self.is_empty() {
                    let schema = self.kind().schema();
                    schema.columns.iter().find(|c| c.name == column)?;
                }
                Some(out)
            }

            /// Append `other`'s rows after these. Panics when `other` holds another table (a
            /// caller's bug: the parts of one table are one kind).
            pub fn append(&mut self, other: Rows) {
                match (self, other) {
                    $((Rows::$variant(a), Rows::$variant(b)) => a.extend(b),)*
                    (this, other) => panic!(
                        "appending {} rows to {} rows",
                        other.kind().name(),
                        this.kind().name()
                    ),
                }
            }

            /// Ids that occur more than once, each once, sorted.
            pub fn duplicate_ids(&self) -> Vec<String> {
                fn dups<'a>(ids: impl Iterator<Item = &'a str> + Clone) -> Vec<String> {
                    repeated(ids).into_iter().map(str::to_string).collect()
                }
                match self {
                    $(Rows::$variant(v) => dups(v.iter().map(|r| r.id()))),*
                }
            }

            /// Every row's id, in order.
            pub fn ids(&self) -> Vec<String> {
                match self {
                    $(Rows::$variant(v) => v.iter().map(|r| r.id().to_string()).collect()),*
                }
            }

            /// `(id, sha256 of the row's JSON, sha256 of the same without the [`FETCH_COLUMNS`])`
            /// per row: snapshot diffs call rows whose second hash matches unchanged in content.
            /// Rows are hashed on every core.
            pub fn id_content_hashes(&self) -> Vec<(String, String, String)> {
                let fetched = self
                    .kind()
                    .schema()
                    .columns
                    .iter()
                    .any(|c| FETCH_COLUMNS.contains(&c.name.as_str()));
                if !fetched {
                    // No fetch bookkeeping: both hashes are of the row's JSON text, written
                    // straight from the row (the same text as through a JSON value: fields in
                    // order).
                    return match self {
                        $(Rows::$variant(v) => crate::parallel_map(v, crate::default_threads(), |r| {
                            let text = serde_json::to_vec(r)
                                .expect("rows of the data model always serialise");
                            let hash = crate::sha256_hex(&text);
                            (r.id().to_string(), hash.clone(), hash)
                        })),*
                    };
                }
                self.json_rows()
                    .map(|mut v| {
                        let full = crate::sha256_hex(v.to_string().as_bytes());
                        let id = v["id"].as_str().unwrap_or_default().to_string();
                        if let Some(map) = v.as_object_mut() {
                            for c in FETCH_COLUMNS {
                                map.shift_remove(*c);
                            }
                        }
                        (id, full, crate::sha256_hex(v.to_string().as_bytes()))
                    })
                    .collect()
            }
        }

        $(
            impl TableRow for $ty {
                const KIND: TableKind = TableKind::$variant;
                fn into_rows(rows: Vec<Self>) -> Rows { Rows::$variant(rows) }
                fn from_rows(rows: Rows) -> Result<Vec<Self>, Rows> {
                    match rows { Rows::$variant(v) => Ok(v), #[allow(unreachable_patterns)] other => Err(other) }
                }
                fn slice(rows: &Rows) -> Option<&[Self]> {
                    match rows { Rows::$variant(v) => Some(v), #[allow(unreachable_patterns)] _ => None }
                }
            }
        )*
    };
}

tables! {
    Claims(Claim) = "claims",
    Queries(Query) = "queries",
    SearchHits(SearchHit) = "search_hits",
    Documents(Document) = "documents",
    ClaimDocuments(ClaimDocument) = "claim_documents",
    Passages(Passage) = "passages",
    Labels(ClaimDocumentLabel) = "labels",
    Conflicts(Conflict) = "conflicts",
    DocumentCredibility(DocumentCredibility) = "document_credibility",
    Reports(Report) = "reports",
    Chunks(Chunk) = "chunks",
    Triplets(Triplet) = "triplets",
    Entities(Entity) = "entities",
    Aliases(Alias) = "aliases",
    GraphEdges(GraphEdge) = "graph_edges",
    Patterns(Pattern) = "patterns",
    Questions(Question) = "questions",
    QuestionJudgements(QuestionJudgement) = "question_judgements",
    RejectedQuestions(RejectedQuestion) = "rejected_questions",
    QuestionSplits(QuestionSplit) = "question_splits",
    QueryPerturbations(QueryPerturbation) = "query_perturbations",
    DocumentPerturbations(DocumentPerturbation) = "document_perturbations",
    Retrievals(Retrieval) = "retrievals",
    EvalPredictions(Prediction) = "eval_predictions",
    Metrics(Metric) = "metrics",
    Drops(DropRecord) = "drops",
    RunSummary(StageSummary) = "run_summary",
    LlmCalls(LlmCall) = "llm_calls",
}

impl std::fmt::Display for TableKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The ids that occur more than once among `ids`, each once, sorted. Stages write their rows
/// sorted by id: ids each above the last hold no repeat, found in one pass without a set of
/// them all; any other order goes through a hash set.
pub(crate) fn repeated<'a>(ids: impl Iterator<Item = &'a str> + Clone) -> BTreeSet<&'a str> {
    let mut last: Option<&str> = None;
    if ids.clone().all(|id| {
        let above = last.is_none_or(|l| l < id);
        last = Some(id);
        above
    }) {
        return BTreeSet::new();
    }
    let mut seen = foldhash::HashSet::default();
    ids.filter(|id| !seen.insert(*id)).collect()
}

/// Sort `rows` by id, stably (rows with equal ids keep their order), swapping each row about
/// once. [`sort_by_key_str`] over [`Record::id`]: what a stage does before it hands a table
/// over.
pub fn sort_by_id<T: Record>(rows: &mut [T]) {
    sort_by_key_str(rows, |r| r.id());
}

/// Sort `rows` by the string `key` gives each, stably, swapping each row about once. Sorting
/// the rows themselves moves every row about log2(n) times (a retrieval row is 136 bytes;
/// there are a million at RARE's size) and compares from the first byte, where a table's ids
/// all begin with the same prefix (`retrieval_`); here each row's key is reduced to its eight
/// bytes after the prefix all keys share, those are sorted with the row's place (a whole key
/// is read only when eight bytes tie), and the rows are swapped into that order in place.
pub fn sort_by_key_str<T>(rows: &mut [T], key: impl Fn(&T) -> &str) {
    // Tables read back are in id order already: one pass says so.
    if rows.windows(2).all(|w| key(&w[0]) <= key(&w[1])) {
        return;
    }
    let first = key(&rows[0]).as_bytes();
    let mut shared = first.len();
    for r in rows.iter() {
        let k = key(r).as_bytes();
        shared = first[..shared]
            .iter()
            .zip(k)
            .take_while(|(a, b)| a == b)
            .count();
    }
    // The eight bytes after the shared prefix, zero-padded: big-endian, so comparing them as
    // numbers orders as comparing the bytes does, and a tie leaves it to the whole keys.
    let eight = |k: &[u8]| {
        let rest = &k[shared..];
        let mut b = [0u8; 8];
        let m = rest.len().min(8);
        b[..m].copy_from_slice(&rest[..m]);
        u64::from_be_bytes(b)
    };
    let mut order: Vec<(u64, usize)> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| (eight(key(r).as_bytes()), i))
        .collect();
    order.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| key(&rows[a.1]).cmp(key(&rows[b.1])))
            .then(a.1.cmp(&b.1))
    });
    // Place k takes the row from order[k], in place, one cycle of the permutation at a time:
    // after a swap the cycle's first row waits where the next place's row was, and the cycle
    // closes when a place asks for it. Each place is settled once (no second table, and no
    // chase along earlier swaps, which a rotated table would make quadratic).
    let mut settled = vec![false; order.len()];
    for start in 0..order.len() {
        let mut k = start;
        while !settled[k] {
            settled[k] = true;
            let from = order[k].1;
            if from == start {
                break;
            }
            rows.swap(k, from);
            k = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The same order as a stable sort of the rows by key: keys with a long shared prefix,
        /// keys shorter than eight bytes after it, keys that are prefixes of others, NUL bytes
        /// and repeats (their rows keep their order).
        #[test]
        fn sorting_by_key_is_a_stable_sort(
            keys in proptest::collection::vec(
                (0usize..3, proptest::collection::vec(prop_oneof![Just(0u8), Just(b'a'), Just(b'b'), 0u8..=255], 0..12)),
                0..200,
            ),
        ) {
            let prefixes = ["retrieval_", "retrieval_x", ""];
            let rows: Vec<(String, usize)> = keys
                .iter()
                .enumerate()
                .map(|(i, (p, tail))| {
                    let tail: String = tail.iter().map(|b| char::from(*b)).collect();
                    (format!("{}{tail}", prefixes[*p]), i)
                })
                .collect();
            let mut want = rows.clone();
            want.sort_by(|a, b| a.0.cmp(&b.0));
            let mut got = rows;
            sort_by_key_str(&mut got, |r| r.0.as_str());
            prop_assert_eq!(got, want);
        }
    }

    /// Tables rotated by one either way (every row but one in order: the shape that makes
    /// chasing a permutation's cycles along earlier swaps quadratic) and reversed come out
    /// sorted.
    #[test]
    fn rotated_and_reversed_tables_sort() {
        let n = 50_000;
        let sorted: Vec<String> = (0..n).map(|i| format!("retrieval_{i:08}")).collect();
        let mut shapes = Vec::new();
        let mut left = sorted.clone();
        left.rotate_left(1);
        shapes.push(left);
        let mut right = sorted.clone();
        right.rotate_right(1);
        shapes.push(right);
        shapes.push(sorted.iter().rev().cloned().collect());
        for mut rows in shapes {
            sort_by_key_str(&mut rows, |r| r.as_str());
            assert_eq!(rows, sorted);
        }
    }

    /// Sorted ids (one pass) and any other order (a set) give the same duplicates, each once,
    /// sorted.
    #[test]
    fn duplicate_ids_in_any_order() {
        let rows = |ids: &[&str]| {
            Rows::Reports(
                ids.iter()
                    .map(|id| crate::Report {
                        id: (*id).into(),
                        ..Default::default()
                    })
                    .collect(),
            )
        };
        assert!(rows(&[]).duplicate_ids().is_empty());
        assert!(rows(&["a", "b", "c"]).duplicate_ids().is_empty());
        assert!(rows(&["c", "a", "b"]).duplicate_ids().is_empty());
        assert_eq!(rows(&["a", "b", "b", "c"]).duplicate_ids(), ["b"]);
        assert_eq!(rows(&["b", "a", "b", "a", "b"]).duplicate_ids(), ["a", "b"]);
        assert_eq!(rows(&["a", "a"]).duplicate_ids(), ["a"]);
    }

    /// The row hashes of a table without fetch columns are taken from the row's JSON text
    /// written directly; they must equal those through a JSON value (the path of tables with
    /// fetch columns), or a diff across the two would see every row as changed.
    #[test]
    fn direct_row_text_equals_the_json_value_text() {
        for kind in TableKind::ALL {
            let rows = Rows::one_default(*kind);
            let through_value: Vec<String> = rows.json_rows().map(|v| v.to_string()).collect();
            let hashes = rows.id_content_hashes();
            assert_eq!(
                hashes[0].1,
                crate::sha256_hex(through_value[0].as_bytes()),
                "{kind:?}"
            );
        }
    }
}

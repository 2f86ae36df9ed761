"""rank_bm25's BM25Okapi on the retrieval bench's corpus: the baseline `cargo bench -p
noisebench-perturb --bench retrieval` runs beside our tantivy BM25.

Usage: rank_bm25_baseline.py CORPUS.jsonl QUERIES.jsonl SAMPLE.txt K
  CORPUS.jsonl   one {"id", "text"} per line
  QUERIES.jsonl  one {"id", "text"} per line
  SAMPLE.txt     the query ids to run, one a line (rank_bm25 scores every document per term in
                 Python, so the whole query set would take hours)
Prints one JSON object: build and query seconds, queries run, and each sampled query's top K
document ids with their scores, for stock BM25Okapi (`results`, the timed baseline) and for
BM25Okapi with Lucene's idf put in its `idf` table (`results_lucene_idf`), which isolates what
the idf variant changes from what the rest of the scoring does, and with tantivy's one-byte
document lengths as well (`results_lucene_idf_one_byte_lengths`), which should leave only
float rounding.

Text is analysed the way our index analyses it, so the comparison is about ranking, not
tokenisation: words split at non-alphanumerics, lowercased, Lucene's English stopwords removed,
Snowball English stemmer (`snowballstemmer`, the algorithm tantivy's stemmer implements), each
query term once. k1 = 1.2 and b = 0.75 as in tantivy (rank_bm25 defaults to k1 = 1.5).
What still differs is the BM25 itself: rank_bm25's idf is log((N - n + 0.5) / (n + 0.5)), floored
at 0.25 x the mean idf for terms in more than half the documents, where tantivy's is
log(1 + (N - n + 0.5) / (n + 0.5)); and tantivy stores document lengths in one byte (exact to 40,
then coarser), rank_bm25 exactly.
"""

import json
import math
import re
import sys
import time

import numpy as np
import snowballstemmer
from rank_bm25 import BM25Okapi

STOPWORDS = {
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
    "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
    "these", "they", "this", "to", "was", "will", "with",
}
WORD = re.compile(r"[^\W_]+")
STEMMER = snowballstemmer.stemmer("english")
STEMS = {}


def analyse(text):
    out = []
    for w in WORD.findall(text.lower()):
        if len(w.encode()) >= 40 or w in STOPWORDS:
            continue
        s = STEMS.get(w)
        if s is None:
            s = STEMMER.stemWord(w)
            STEMS[w] = s
        out.append(s)
    return out


def lucene_idf(bm25):
    """Replace rank_bm25's idf table by Lucene's (and tantivy's) log(1 + (N - n + 0.5) / (n + 0.5))."""
    n_docs = bm25.corpus_size
    df = {}
    for doc in bm25.doc_freqs:
        for w in doc:
            df[w] = df.get(w, 0) + 1
    bm25.idf = {w: math.log(1.0 + (n_docs - n + 0.5) / (n + 0.5)) for w, n in df.items()}


def one_byte_length(n):
    """A document length as tantivy stores it: one byte, Lucene's SmallFloat.intToByte4 scheme
    (exact below 24, then 3 mantissa bits), decoded back, i.e. rounded down to its bucket."""
    free = 24
    if n < free:
        return n
    i = n - free
    bits = i.bit_length()
    if bits < 4:
        return n
    shift = bits - 4
    return free + ((((i >> shift) & 0x07) | 0x08) << shift)


def top_k(bm25, ids, text, k):
    terms = list(dict.fromkeys(analyse(text)))
    scores = bm25.get_scores(terms)
    # Documents matching no term are not hits, as in tantivy; ties by id.
    depth = min(k + 64, len(ids) - 1)
    top = np.argpartition(-scores, depth)[: depth + 1]
    hits = [(float(scores[i]), ids[i]) for i in top if scores[i] != 0.0]
    hits.sort(key=lambda h: (-h[0], h[1]))
    return [[d, s] for s, d in hits[:k]]


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    corpus_path, queries_path, sample_path, k = sys.argv[1:5]
    k = int(k)
    docs = read_jsonl(corpus_path)
    wanted = set(open(sample_path, encoding="utf-8").read().split())
    queries = [q for q in read_jsonl(queries_path) if q["id"] in wanted]
    ids = [d["id"] for d in docs]

    t0 = time.perf_counter()
    bm25 = BM25Okapi([analyse(d["text"]) for d in docs], k1=1.2, b=0.75)
    build_s = time.perf_counter() - t0

    results = {}
    t0 = time.perf_counter()
    for q in queries:
        results[q["id"]] = top_k(bm25, ids, q["text"], k)
    query_s = time.perf_counter() - t0

    lucene_idf(bm25)
    results_lucene = {q["id"]: top_k(bm25, ids, q["text"], k) for q in queries}
    bm25.doc_len = [one_byte_length(n) for n in bm25.doc_len]
    results_tantivy_like = {q["id"]: top_k(bm25, ids, q["text"], k) for q in queries}
    json.dump(
        {
            "build_s": build_s,
            "query_s": query_s,
            "queries": len(queries),
            "results": results,
            "results_lucene_idf": results_lucene,
            "results_lucene_idf_one_byte_lengths": results_tantivy_like,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()

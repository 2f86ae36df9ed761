"""rank_bm25's BM25Okapi over the `corpus` bench's documents: the baseline `cargo bench -p
noisebench-search --bench corpus` runs beside the `corpus` search backend (tantivy BM25).

Usage: rank_bm25_corpus.py CORPUS.jsonl QUERIES.jsonl SOURCES.txt K
  CORPUS.jsonl   one {"id", "title", "text"} per line
  QUERIES.jsonl  one {"id", "text"} per line
  SOURCES.txt    each query's source document id, one a line, in query order
Prints one JSON object (the bench's `Side`): indexing seconds (reading the file, analysing
title and text, building BM25Okapi: what the backend's first run does), querying seconds for
every query's top K, the peak resident memory (VmHWM) after indexing and at the end, and how
many queries found their source document in their top K.

Text is analysed the way our index analyses it, so both sides do the same work per word: words
split at non-alphanumerics, lowercased, Lucene's English stopwords removed, Snowball English
stemmer (`snowballstemmer`, the algorithm tantivy's stemmer implements), each query term once.
k1 = 1.2 and b = 0.75 as in tantivy. Needs rank_bm25, snowballstemmer and numpy (`just bench`
installs them).
"""

import json
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


def vm_hwm_kib():
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def top_k(bm25, ids, text, k):
    terms = list(dict.fromkeys(analyse(text)))
    scores = bm25.get_scores(terms)
    depth = min(k, len(ids) - 1)
    top = np.argpartition(-scores, depth)[: depth + 1]
    hits = [(float(scores[i]), ids[i]) for i in top if scores[i] != 0.0]
    hits.sort(key=lambda h: (-h[0], h[1]))
    return [d for _, d in hits[:k]]


def main():
    corpus_path, queries_path, sources_path, k = sys.argv[1:5]
    k = int(k)

    t0 = time.perf_counter()
    ids, tokens = [], []
    with open(corpus_path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                d = json.loads(line)
                ids.append(d["id"])
                tokens.append(analyse(d.get("title", "") + " " + d["text"]))
    bm25 = BM25Okapi(tokens, k1=1.2, b=0.75)
    build_s = time.perf_counter() - t0
    hwm_after_build = vm_hwm_kib()

    with open(queries_path, encoding="utf-8") as f:
        queries = [json.loads(line) for line in f if line.strip()]
    t0 = time.perf_counter()
    hits = [top_k(bm25, ids, q["text"], k) for q in queries]
    query_s = time.perf_counter() - t0

    with open(sources_path, encoding="utf-8") as f:
        sources = f.read().split()
    found = sum(1 for s, h in zip(sources, hits) if s in h)
    json.dump(
        {
            "build_s": build_s,
            "query_s": query_s,
            "queries": len(queries),
            "documents": len(ids),
            "hwm_after_build_kib": hwm_after_build,
            "hwm_kib": vm_hwm_kib(),
            "index_bytes": 0,
            "found_source": found,
        },
        sys.stdout,
    )
    print()


if __name__ == "__main__":
    main()

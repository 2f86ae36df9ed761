#!/usr/bin/env python3
"""Derive crates/perturb/data/wordnet-synonyms.txt.zst from WordNet 3.0.

The `word_level` query perturbation swaps words for synonyms. This script reads WordNet 3.0's
database files (Debian: `apt-get install wordnet-base`, files under /usr/share/wordnet/) and
writes one line per word: the word, then its synonyms, space-separated, all lowercase.

What counts as a synonym (kept deliberately narrow, so a swap keeps the question's meaning):
- only the word's dominant part of speech: the one whose senses WordNet's tagged corpus saw
  most often (`cntlist.rev`; "company" is a noun, not the verb "to company"), or every part of
  speech when the corpus never saw the word;
- only the first SENSES synsets of that part of speech, in WordNet's order (by sense frequency
  in the tagged corpus), and beyond the first only senses that corpus saw (`tagsense_cnt`);
- only other single-word, all-lowercase, purely alphabetic lemmas of those synsets (no
  collocations, no proper nouns, no hyphens or digits), adjective markers like `(a)` removed;
- at most MAX_SYNONYMS per word, in sense order, duplicates removed.
Words that WordNet lists as an irregular inflection (`verb.exc` and the other `.exc` files:
"rose" is "rise", "left" is "leave") are not written either: in a question they are far more
often the inflection than the lemma, and a swap would read "inflation rosebush".
Words with no synonym left are not written. Lines are sorted by word, so the output is stable.

Usage: python3 derive_synonyms.py [WORDNET_DIR] [OUT]   (needs the `zstd` command line tool)
"""

import os
import re
import subprocess
import sys

SENSES = 2
MAX_SYNONYMS = 6
MIN_LEN = 3
POS = ["noun", "verb", "adj", "adv"]
WORD = re.compile(r"^[a-z]+$")


def read_synsets(path):
    """offset -> lemmas (as written, markers removed) of one data.<pos> file."""
    synsets = {}
    with open(path, encoding="latin-1") as f:
        for line in f:
            if line.startswith("  "):  # the licence header
                continue
            fields = line.split()
            offset, count = fields[0], int(fields[3], 16)
            lemmas = [re.sub(r"\([a-z]+\)$", "", fields[4 + 2 * i]) for i in range(count)]
            synsets[offset] = lemmas
    return synsets


def read_index(path):
    """lemma -> synset offsets in sense order, of one index.<pos> file."""
    index = {}
    with open(path, encoding="latin-1") as f:
        for line in f:
            if line.startswith("  "):
                continue
            fields = line.split()
            lemma, synset_cnt, p_cnt = fields[0], int(fields[2]), int(fields[3])
            tagged = int(fields[4 + p_cnt + 1])
            offsets = fields[4 + p_cnt + 2 :][:synset_cnt]
            # The first sense always; later ones only if the tagged corpus saw them.
            index[lemma] = offsets[: max(1, min(SENSES, tagged))]
    return index


def read_counts(path):
    """(lemma, pos) -> how often the tagged corpus saw the lemma in that part of speech."""
    kinds = {"1": "noun", "2": "verb", "3": "adj", "4": "adv", "5": "adj"}
    counts = {}
    with open(path, encoding="latin-1") as f:
        for line in f:
            key, _sense, count = line.split()
            lemma, rest = key.split("%", 1)
            pos = kinds[rest[0]]
            counts[(lemma, pos)] = counts.get((lemma, pos), 0) + int(count)
    return counts


def dominant(lemma, counts):
    """The parts of speech whose synsets a lemma's synonyms come from."""
    seen = {pos: counts.get((lemma, pos), 0) for pos in POS}
    best = max(seen.values())
    if best == 0:
        return set(POS)
    return {max(POS, key=lambda pos: (seen[pos], -POS.index(pos)))}


def read_exceptions(wn):
    """Inflected forms WordNet's exception lists map to another lemma."""
    forms = set()
    for pos in POS:
        with open(os.path.join(wn, f"{pos}.exc"), encoding="latin-1") as f:
            for line in f:
                form, *lemmas = line.split()
                if any(lemma != form for lemma in lemmas):
                    forms.add(form)
    return forms


def main():
    wn = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/wordnet"
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "wordnet-synonyms.txt.zst")
    synonyms = {}
    counts = read_counts(os.path.join(wn, "cntlist.rev"))
    inflections = read_exceptions(wn)
    for pos in POS:
        synsets = read_synsets(os.path.join(wn, f"data.{pos}"))
        index = read_index(os.path.join(wn, f"index.{pos}"))
        for lemma, offsets in index.items():
            if not WORD.match(lemma) or len(lemma) < MIN_LEN:
                continue
            if lemma in inflections or pos not in dominant(lemma, counts):
                continue
            found = synonyms.setdefault(lemma, [])
            for offset in offsets[:SENSES]:
                for other in synsets[offset]:
                    if (
                        other != lemma
                        and WORD.match(other)
                        and len(other) >= MIN_LEN
                        and other not in found
                    ):
                        found.append(other)
    lines = [
        " ".join([w] + syns[:MAX_SYNONYMS]) for w, syns in sorted(synonyms.items()) if syns
    ]
    text = "\n".join(lines) + "\n"
    subprocess.run(
        ["zstd", "-19", "-q", "-f", "-o", out], input=text.encode(), check=True
    )
    print(f"{len(lines)} words, {len(text)} bytes before compression -> {out}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""edgartools' item cutting scored on the golden item sentences of the real 10-Ks.

For every `[[filing.item]]` of fixtures/real/10k/golden.toml (the first and last sentence of each
item, written by reading the filings), edgartools' `TenK(filing)["Item N"]` must hold the first
sentence within 1,000 characters of the item's start (after its heading line) and the last within
400 of its end: the rules `cargo test -p noisebench-chunk --test it fixtures::real::golden` holds
our item cutter to. Whitespace, dashes and quotes are compared folded, in edgartools' favour.

Run with `just items-vs-edgartools`, which installs edgartools in a virtual environment first.
Reads only the saved filings: edgartools is handed each page through a stand-in for its Filing
(the two members TenK reads), so nothing is fetched.
"""
import io
import logging
import sys
import tomllib
import warnings
from pathlib import Path

import zstandard
from edgar.company_reports import TenK

# edgartools warns and logs about filings it cannot place (a FutureWarning per parse failure);
# what counts here is the score.
warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)


class LocalFiling:
    """A saved primary document, as much of edgartools' Filing as TenK reads."""
    form = "10-K"
    accession_number = "local"

    def __init__(self, html):
        self._html = html

    def html(self):
        return self._html


# Dashes and quotes compared as their ASCII forms: a reader sees the same sentence either way,
# and edgartools writes en dashes as hyphens.
FOLD = str.maketrans({"\u2013": "-", "\u2014": "-", "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def squash(t):
    """Compared without whitespace: spacing a reader does not see ("1.Financial" in Chromium,
    "1. Financial" in edgartools) is not counted against either side."""
    return "".join(t.translate(FOLD).split())


def near_start(body, first):
    at = body.find(first)
    return at != -1 and at <= 1000


def near_end(body, last):
    at = body.rfind(last)
    return at != -1 and len(body) - (at + len(last)) <= 400


def body_of(text):
    """The item's text after its heading line, folded as `squash` does."""
    lines = text.strip().split("\n", 1)
    return squash(lines[1] if len(lines) > 1 else "")


def main(root):
    golden = tomllib.loads((root / "fixtures/real/10k/golden.toml").read_text())
    total = right = 0
    bad = []
    for f in golden["filing"]:
        raw = (root / "fixtures/real/10k" / f["file"]).read_bytes()
        html = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw)).read().decode("utf-8", "replace")
        try:
            k = TenK(LocalFiling(html))
        except Exception:
            k = None
        for item in f.get("item", []):
            try:
                text = k[f"Item {item['id']}"] if k is not None else None
            except Exception:
                text = None
            body = body_of(text or "")
            checks = [("first", squash(item["first"]), near_start)]
            if "last" in item:
                checks.append(("last", squash(item["last"]), near_end))
            for what, sentence, ok in checks:
                total += 1
                if text and ok(body, sentence):
                    right += 1
                else:
                    bad.append(f"{f['file']}: item {item['id']} {what}" + ("" if text else " (not found)"))
    for b in bad:
        print("  ", b)
    print(
        f"edgartools item first and last sentences: {right}/{total} right "
        f"over {len(golden['filing'])} filings"
    )

if __name__ == "__main__":
    main(Path(sys.argv[1]))

#!/usr/bin/env python3
"""noisebench's item cutter on the evals of HaoweiChan/sec-10k-extract (an SEC 10-K item
extractor): its golden, adversarial and held-out cases over real filings (the self-created
derivatives, the files its checkout does not hold, and its refusal of the 10-KSB, which
noisebench reads, are left out; an item its latest run reports `omitted` or `missing` counts as
rightly not found), scored on the checks that are
about which items a filing has and what they hold:

  expected_set_complete  each item listed is found (one check per item)
  only_items             no item outside the list is found (one check per case)
  item_present           the item is found (its status aside)
  item_absent            the item is not found
  text_contains          the item's text holds the phrase (whitespace squashed)
  pointer                item_present with status incorporated_by_reference on items 5-8: the
                         item is flagged as pointing to the annual report (ours flags only those)

Beside each case, whether sec-10k-extract's latest full run (`evals/report/*-all.json` of the
checkout: every check of the case, status and confidence too) passed it; its evals are the cases
it was built against. Usage:

  scripts/items-vs-sec-10k-extract.py <sec-10k-extract checkout> [items_json binary]

The binary is `cargo build --release -p noisebench-chunk --example items_json`'s
(target/release/examples/items_json by default).
"""

import json
import re
import subprocess
import sys
from pathlib import Path


def squash(text):
    return " ".join(text.split())


def self_created(repo):
    readme = (repo / "evals/fixtures/README.md").read_text()
    return {m.group(1) for m in re.finditer(r"^\| `([^/`]+)/filing\.\w+` \| SELF-CREATED", readme, re.M)}


# A case about a form noisebench reads by design: sec-10k-extract refuses the 10-KSB, the
# `reports` stage reads it (its own item numbering) when the source names it.
NOT_COMPARABLE = {"ksb-unsupported"}


def their_statuses(repo):
    """Item statuses and the verdict of sec-10k-extract's latest full run, by case (its results
    and its known debt): an item it reports `omitted` or `missing` has no text in the filing, so
    not finding it is right."""
    reports = sorted((repo / "evals/report").glob("*-all.json"))
    if not reports:
        return {}
    data = json.loads(reports[-1].read_text())
    return {
        r["id"]: (
            {i["item"]: i["status"] for i in r.get("items_summary") or []},
            r["passed"],
        )
        for r in data["results"] + data.get("debt", [])
    }


def cases(repo):
    mine = self_created(repo)
    for folder in ["evals/golden", "evals/adversarial", "evals/heldout"]:
        for path in sorted((repo / folder).glob("*.json")):
            case = json.loads(path.read_text())
            if case.get("task") not in (None, "sec10k") or "input" not in case:
                continue
            if path.stem in NOT_COMPARABLE or case.get("provenance", "").startswith("SELF-CREATED"):
                continue
            rel = case["input"].get("path", "")
            name = Path(rel).parent.name
            filing = repo / rel
            if not rel or name in mine or not filing.is_file():
                continue
            head = filing.read_bytes()[:200]
            if head.startswith(b"version https://git-lfs"):
                continue
            yield path.stem, filing, case["expect"]["checks"]


def score(found, checks, statuses):
    """(passed, total, failures) of the item checks of one case."""
    items = found["items"]
    absent = {k for k, v in statuses.items() if v in ("omitted", "missing")}
    passed = total = 0
    fails = []

    def check(ok, what):
        nonlocal passed, total
        total += 1
        passed += ok
        if not ok:
            fails.append(what)

    for c in checks:
        kind = c.get("type")
        if kind == "expected_set_complete":
            for item in c["items"]:
                check(item in items or item in absent, f"item {item} not found")
        elif kind == "only_items":
            extra = sorted(set(items) - set(c["items"]) - absent)
            check(not extra, f"items found beyond the list: {extra}")
        elif kind == "item_present" and c.get("status") in ("omitted", "missing"):
            check(c["item"] not in items, f"item {c['item']} found, its text absent")
        elif kind == "item_present":
            item = c["item"]
            check(item in items, f"item {item} not found")
            if c.get("status") == "incorporated_by_reference" and item in ("5", "6", "7", "7A", "8"):
                check(items.get(item, {}).get("pointer", False), f"item {item} not flagged as a pointer")
        elif kind == "item_absent":
            check(c["item"] not in items, f"item {c['item']} found")
        elif kind == "text_contains":
            text = squash(items.get(c["item"], {}).get("text", ""))
            check(squash(c["value"]) in text, f"item {c['item']} lacks {c['value'][:60]!r}")
    return passed, total, fails


def main():
    repo = Path(sys.argv[1])
    binary = sys.argv[2] if len(sys.argv) > 2 else "target/release/examples/items_json"
    rows = list(cases(repo))
    statuses = their_statuses(repo)
    files = sorted({str(f) for _, f, _ in rows})
    out = subprocess.run([binary, *files], check=True, capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        d = json.loads(line)
        found[d["path"]] = d
    all_passed = all_total = 0
    print(f"{'case':40} {'ours':>9}  {'theirs':6}  our misses")
    theirs_passed = cases_scored = 0
    for name, filing, checks in rows:
        their, their_pass = statuses.get(name, ({}, None))
        passed, total, fails = score(found[str(filing)], checks, their)
        if total == 0:
            continue
        cases_scored += 1
        theirs_passed += bool(their_pass)
        all_passed += passed
        all_total += total
        mark = {True: "pass", False: "FAIL", None: "-"}[their_pass]
        print(f"{name:40} {passed:>4}/{total:<4}  {mark:6}  {'; '.join(fails)}")
    print(f"\nnoisebench: {all_passed} of {all_total} item checks right over {cases_scored} cases "
          f"({len(files)} filings); sec-10k-extract passes {theirs_passed} of those {cases_scored} "
          f"cases whole in its latest report")


if __name__ == "__main__":
    main()

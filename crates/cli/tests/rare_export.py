"""Read a `noisebench export rare` folder as RARE's own scripts do: `json.load` on each file.

Usage: python3 rare_export.py EXPORT_DIR. Prints JSON: {"single_hop": n, "multi_hop": n,
"with_split": n, "records": {id: record}, "errors": [...]}. Every problem found is listed in
"errors" (a file that is not a JSON list, a missing or mistyped field, a repeated id, a
perturbation map that RARE's evaluation could not index), so one run names all of them.
Standard library only.
"""

import json
import os
import sys

SINGLE = "rag_single_hop_dataset.json"
MULTI = "rag_multi_hop_dataset.json"
MULTI_HOP_TYPES = {"chained_multi_hop", "star_shaped", "inverted_star_shaped"}
LIST_FIELDS = ["answer_chunk_ids", "source_sentences", "entity_1", "relation", "entity_2"]


def check_record(rec, multi, errors):
    rid = rec.get("id")
    where = f"{rid or '?'}"
    if not isinstance(rid, str) or not rid:
        errors.append(f"{where}: no string id")
    for field in ["question", "answer"]:
        if not isinstance(rec.get(field), str) or not rec[field]:
            errors.append(f"{where}: `{field}` is not a non-empty string")
    for field in LIST_FIELDS:
        value = rec.get(field)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            errors.append(f"{where}: `{field}` is not a list of strings")
    # One entry per triplet in the three entity/relation lists.
    lengths = {len(rec.get(f) or []) for f in ["entity_1", "relation", "entity_2"]}
    if len(lengths) != 1:
        errors.append(f"{where}: entity_1, relation, entity_2 differ in length")
    if not rec.get("answer_chunk_ids"):
        errors.append(f"{where}: no answer chunks")
    metadata = rec.get("metadata")
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        errors.append(f"{where}: `metadata` is not an object of strings")
    if multi:
        if rec.get("multi_hop_type") not in MULTI_HOP_TYPES:
            errors.append(f"{where}: multi_hop_type {rec.get('multi_hop_type')!r}")
    elif "multi_hop_type" in rec:
        errors.append(f"{where}: a single-hop record with multi_hop_type")
    if rec.get("split") not in (None, "train", "test"):
        errors.append(f"{where}: split {rec.get('split')!r}")
    # What RARE's evaluation reads, indexed without defaults.
    try:
        for kind, p in rec["query_perturbations"].items():
            assert isinstance(p["perturbed_query"], str), kind
            assert isinstance(p["similarity"], (int, float)), kind
        for kind in ["regex_delete", "back_translation"]:
            for d in rec["document_perturbations"][kind]:
                assert isinstance(d["chunk_id"], str) and isinstance(d["text"], str), kind
    except (KeyError, AssertionError, AttributeError, TypeError) as e:
        errors.append(f"{where}: perturbations unreadable: {e!r}")


def main(folder):
    out = {"single_hop": 0, "multi_hop": 0, "with_split": 0, "records": {}, "errors": []}
    for name, multi in [(SINGLE, False), (MULTI, True)]:
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            records = json.load(f)
        if not isinstance(records, list):
            out["errors"].append(f"{name}: not a JSON list")
            continue
        out["multi_hop" if multi else "single_hop"] = len(records)
        for rec in records:
            check_record(rec, multi, out["errors"])
            rid = rec.get("id")
            if rid in out["records"]:
                out["errors"].append(f"{name}: id {rid} repeated")
            out["records"][rid] = rec
            if rec.get("split") is not None:
                out["with_split"] += 1
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])

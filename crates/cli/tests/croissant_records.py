"""Read every record set of a snapshot's croissant.json back through mlcroissant.

Usage: python3 croissant_records.py SNAPSHOT_DIR. Prints JSON: {"record_sets": {id: rows},
"splits": {id: {split: rows}}, "errors": [...]}. `splits` counts, for the record sets with a
`<id>/split` field, the rows of each split. A record set that fails is reported with its error,
not raised, so one run names every failure. Validation is the job of `mlcroissant validate`
(run by the Rust test); this reads the data the way a Croissant user would.
"""

import json
import logging
import os
import sys
import traceback


def text(value):
    return value.decode() if isinstance(value, bytes) else value


def main(snapshot: str) -> None:
    # mlcroissant logs through absl and the root logger; keep stdout for the JSON.
    logging.disable(logging.WARNING)
    import mlcroissant

    path = os.path.join(snapshot, "croissant.json")
    document = json.load(open(path))
    dataset = mlcroissant.Dataset(jsonld=path)
    out = {"record_sets": {}, "splits": {}, "errors": []}
    for record_set in document["recordSet"]:
        name = record_set["@id"]
        try:
            rows = 0
            splits = {}
            for record in dataset.records(record_set=name):
                rows += 1
                split = record.get(f"{name}/split")
                if split is not None and any(
                    f["@id"] == f"{name}/split" and "references" in f for f in record_set["field"]
                ):
                    split = text(split)
                    splits[split] = splits.get(split, 0) + 1
            out["record_sets"][name] = rows
            if splits:
                out["splits"][name] = splits
        except Exception as e:  # noqa: BLE001 - every failure is reported
            detail = traceback.format_exception_only(type(e), e)[-1].strip()
            out["errors"].append(f"{name}: {detail}")
    print(json.dumps(out, indent=1, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1])

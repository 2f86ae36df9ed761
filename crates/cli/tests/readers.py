"""Open every table of a published snapshot with the readers dataset users reach for.

Usage: python3 readers.py SNAPSHOT_DIR. Prints JSON: {"tables": {table: {reader: rows}}, "splits":
{table: {split: rows}} (as `datasets` loads them), "errors": [...]}. Each reader opens the file as
a user would, with no options: pandas.read_parquet, pyarrow.parquet.read_table,
polars.read_parquet, DuckDB's read_parquet, and Hugging Face `datasets.load_dataset` on the
snapshot folder itself (its README card declares one config per table, with `test`/`train` splits
for the tables cut by question split). A reader that fails is reported with its error, not
raised, so one run names every failure.
"""

import json
import os
import shutil
import sys
import tempfile
import traceback


def main(snapshot: str) -> None:
    # `datasets` names the dataset after the folder; `.` would give it no name.
    snapshot = os.path.abspath(snapshot)
    manifest = json.load(open(os.path.join(snapshot, "manifest.json")))
    out = {"tables": {}, "splits": {}, "errors": []}

    def attempt(table, reader, count):
        try:
            out["tables"].setdefault(table, {})[reader] = int(count())
        except Exception as e:  # noqa: BLE001 - every failure is reported
            detail = traceback.format_exception_only(type(e), e)[-1].strip()
            out["errors"].append(f"{reader} on {table}: {detail}")

    import duckdb
    import pandas
    import polars
    import pyarrow.parquet

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    cache = tempfile.mkdtemp(prefix="noisebench-hf-")
    import datasets

    datasets.disable_progress_bars()
    for table, entry in sorted(manifest["tables"].items()):
        path = os.path.join(snapshot, entry["file"])

        def with_pandas():
            frame = pandas.read_parquet(path)
            # Touch every cell, as a user printing or iterating the frame would.
            frame.to_dict("records")
            return len(frame)

        attempt(table, "pandas", with_pandas)
        attempt(table, "pyarrow", lambda: pyarrow.parquet.read_table(path).to_pylist().__len__())
        attempt(table, "polars", lambda: polars.read_parquet(path).height)
        attempt(
            table,
            "duckdb",
            lambda: duckdb.sql(f"SELECT count(*) FROM read_parquet('{path}')").fetchall()[0][0],
        )

        def with_datasets():
            # Every split the card declares for the config; the reader's count is their sum.
            loaded = datasets.load_dataset(snapshot, table, cache_dir=cache)
            splits = {name: part.num_rows for name, part in loaded.items()}
            out["splits"][table] = splits
            return sum(splits.values())

        attempt(table, "datasets", with_datasets)
    shutil.rmtree(cache, ignore_errors=True)
    print(json.dumps(out, indent=1, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1])

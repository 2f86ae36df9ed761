"""Load every config of a dataset repository at one revision with Hugging Face `datasets`.

Usage: hub_datasets.py REPO REVISION CONFIG... (the Hub is HF_ENDPOINT). Prints JSON:
{"splits": {config: {split: rows}}, "error": null}, or with "error" the exception's type and text
when loading fails (a revision that does not exist), so the caller can check both.
"""

import json
import sys
import tempfile


def main(repo: str, revision: str, configs: list[str]) -> None:
    import datasets

    datasets.disable_progress_bars()
    out = {"splits": {}, "error": None}
    with tempfile.TemporaryDirectory() as cache:
        try:
            for config in configs:
                loaded = datasets.load_dataset(repo, config, revision=revision, cache_dir=cache)
                out["splits"][config] = {split: ds.num_rows for split, ds in loaded.items()}
        except Exception as e:  # the caller asserts on the kind of failure
            out["error"] = f"{type(e).__name__}: {e}"
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])

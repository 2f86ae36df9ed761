#!/usr/bin/env bash
# Wait for Slurm jobs to leave the queue, then print each job's final state (array jobs: every
# task) and exit non-zero if any did not end COMPLETED, printing the output file of each that did
# not. Jobs left pending behind a failed one are cancelled. Works against any Slurm, not only the
# one setup.sh starts. Usage: wait.sh [--timeout SECONDS] JOBID...   (default 1800 s; 0 = none)
#
# A job's final state is read from `scontrol show job` as soon as it leaves the queue (the
# controller forgets finished jobs after MinJobAge, 300 s by default; setup.sh sets an hour), or,
# for a job already forgotten, from the jobcomp/filetxt log setup.sh configures.
set -euo pipefail

timeout=1800
if [[ "${1:-}" == --timeout ]]; then
    timeout=$2
    shift 2
fi
(($#)) || { echo "usage: wait.sh [--timeout SECONDS] JOBID..." >&2; exit 2; }
jobcomp=${NOISEBENCH_SLURM_JOBCOMP:-/var/log/slurm/jobcomp.log}
ids=$(IFS=,; echo "$*")
start=$(date +%s)
declare -A final # job id -> its `scontrol show job -o` lines, once it left the queue

while :; do
    # "array-or-job-id job-id state reason dependency" per queued job (or pending array); squeue
    # fails when it knows none of the ids (all finished and forgotten): nothing is queued.
    queued=$(squeue -h -j "$ids" -o '%F %i %T %r %E' 2>/dev/null || true)

    # A job whose dependency failed never runs, yet Slurm 22.05 leaves it pending (even with
    # kill_invalid_depend) and notices the next link of a chain only a scheduler pass later.
    # Cancel it, and in the same pass every queued job that waits on a cancelled one, so the
    # jobs end (as CANCELLED) and the wait does too.
    dead=$(awk '$4 == "DependencyNeverSatisfied" { print $1 }' <<<"$queued")
    if [[ -n "$dead" ]]; then
        while :; do
            more=$(awk -v dead="$(tr '\n' ' ' <<<"$dead")" '
                BEGIN { n = split(dead, d, " "); for (i = 1; i <= n; i++) gone[d[i]] = 1 }
                $3 == "PENDING" && !($1 in gone) {
                    deps = $5; gsub(/\([^)]*\)/, "", deps); gsub(/[,?]/, " ", deps)
                    m = split(deps, list, " ")
                    for (i = 1; i <= m; i++) {
                        id = list[i]; sub(/^[a-z]+:/, "", id); sub(/_.*$/, "", id)
                        if (id in gone) { print $1; break }
                    }
                }' <<<"$queued")
            [[ -n "$more" ]] || break
            dead=$(printf '%s\n%s\n' "$dead" "$more")
        done
        dead=$(sort -un <<<"$dead")
        echo "wait.sh: cancelling $(tr '\n' ' ' <<<"$dead")(a dependency failed)" >&2
        # shellcheck disable=SC2086
        scancel $dead || true
    fi

    # Record the final state of every job (every task of an array) that has left the queue.
    for id in "$@"; do
        if [[ -z "${final[$id]+set}" ]] && ! grep -q "^$id " <<<"$queued"; then
            final[$id]=$(scontrol show job -o "$id" 2>/dev/null || true)
        fi
    done
    [[ -n "$queued" ]] || break
    if ((timeout > 0 && $(date +%s) - start >= timeout)); then
        echo "wait.sh: jobs still queued after ${timeout}s:" >&2
        echo "$queued" >&2
        exit 1
    fi
    sleep 1
done

failed=0
for id in "$@"; do
    lines=${final[$id]}
    if [[ -n "$lines" ]]; then
        # One line per job (per task for an array): "JobId=… ArrayTaskId=… JobState=… StdOut=…".
        while IFS= read -r line; do
            field() { { grep -o "\b$1=[^ ]*" <<<"$line" || true; } | head -n 1 | cut -d= -f2-; }
            job=$id
            task=$(field ArrayTaskId)
            state=$(field JobState)
            code=$(field ExitCode)
            name=$(field JobName)
            # A pending array cancelled whole has no task ids (4294967294 is Slurm's NO_VAL).
            if [[ "$task" == 4294967294 ]]; then
                job="${id}_*"
            elif [[ -n "$task" ]]; then
                job="${id}_$task"
            fi
            printf '%-14s %-10s exit %-5s %s\n' "$job" "$state" "$code" "$name"
            if [[ "$state" != COMPLETED ]]; then
                failed=1
                out=$(field StdOut)
                if [[ -n "$out" && -f "$out" ]]; then
                    echo "----- $job output ($out) -----"
                    tail -n 60 "$out"
                    echo "-----"
                fi
                reason=$(field Reason)
                if [[ -n "$reason" && "$reason" != None ]]; then
                    echo "$job reason: $reason"
                fi
            fi
        done <<<"$lines"
    elif [[ -f "$jobcomp" ]] && found=$(grep -E "^JobId=$id " "$jobcomp") && [[ -n "$found" ]]; then
        # The log names array tasks by their own job ids, so only a plain job is found here.
        state=$({ grep -o '\bJobState=[^ ]*' <<<"$found" || true; } | tail -n 1 | cut -d= -f2)
        printf '%-14s %-10s (from %s)\n' "$id" "$state" "$jobcomp"
        [[ "$state" == COMPLETED ]] || failed=1
    else
        echo "$id: unknown to scontrol and to $jobcomp" >&2
        failed=1
    fi
done
exit "$failed"

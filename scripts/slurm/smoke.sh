#!/usr/bin/env bash
# Smoke test of the local cluster (scripts/slurm/setup.sh first): an array job of 3 tasks, each
# writing its index and finish time to a file, and a job submitted with
# --dependency=afterok:<array> that records when it started and which task files it found. Passes
# when every task and the dependent job COMPLETED, each task wrote its own file, and the dependent
# job started after the last task finished and saw all three files. Prints the elapsed time.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d /tmp/noisebench-slurm-smoke.XXXXXX)
trap 'rm -rf "$dir"' EXIT
started=$(date +%s.%N)

# shellcheck disable=SC2016 # expanded by the job, not here
array=$(sbatch --parsable --job-name=smoke-array --array=0-2 --chdir="$dir" \
    --output="$dir/array-%A_%a.out" \
    --wrap 'sleep 1; echo "$SLURM_ARRAY_TASK_ID $(date +%s.%N)" > "task-$SLURM_ARRAY_TASK_ID"')
# shellcheck disable=SC2016
after=$(sbatch --parsable --job-name=smoke-after --dependency="afterok:$array" --chdir="$dir" \
    --output="$dir/after-%j.out" \
    --wrap 'date +%s.%N > after; ls task-* >> after')
echo "submitted array $array and dependent job $after"

# While the array runs, the dependent job must wait (its reason is Dependency once the
# controller has looked at it).
state=$(squeue -h -j "$after" -o '%T %r' || true)
case "$state" in
PENDING* | "") ;; # "" : everything already ran (very fast node)
*) echo "smoke: dependent job is '$state' while the array runs" >&2; exit 1 ;;
esac

"$here/wait.sh" --timeout 120 "$array" "$after"

fail() { echo "smoke: $*" >&2; exit 1; }
last=0
for i in 0 1 2; do
    [[ -f "$dir/task-$i" ]] || fail "task $i wrote nothing"
    read -r index finished <"$dir/task-$i"
    [[ "$index" == "$i" ]] || fail "task-$i holds index $index"
    last=$(awk -v a="$last" -v b="$finished" 'BEGIN { print (b > a) ? b : a }')
done
[[ -f "$dir/after" ]] || fail "the dependent job wrote nothing"
after_start=$(head -n 1 "$dir/after")
seen=$(tail -n +2 "$dir/after" | tr '\n' ' ')
[[ "$seen" == "task-0 task-1 task-2 " ]] || fail "the dependent job saw '$seen'"
awk -v a="$after_start" -v l="$last" 'BEGIN { exit !(a > l) }' ||
    fail "the dependent job started at $after_start, before the last task finished at $last"
echo "smoke: ok, array $array (3 tasks) then job $after in order, $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $started }") s"

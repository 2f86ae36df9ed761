#!/usr/bin/env bash
# An unattended refresh on a machine that starts empty (a CI runner, a fresh container):
# restore the last state, refresh, store the state back, and let `[publish.hub]` push a new
# version to the Hugging Face Hub. docs/publish.md explains each step.
#
# Needs: the `noisebench` binary (`just install`), and in the environment
#   PIPELINE   pipeline name or file (its [publish.hub] set, see docs/publish.md)
#   DATASET    its [snapshot] dataset
#   STATE      (optional) s3://bucket/prefix holding the state between runs: stage folders, the
#              LLM cache (the pipeline's [llm.cache] remote) and the published versions.
#              AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION (AWS_ENDPOINT_URL for MinIO/R2)
#   HUB_REPO   (optional) OWNER/NAME: without STATE, the last version is pulled from the Hub, so
#              the refresh diffs against it and numbers the next; stages and the LLM cache then
#              start empty (every request is sent again, and paid).
#   HF_TOKEN   a Hub token with write access; the model API key the pipeline's [llm] names
#   NOISEBENCH_FLAGS (optional) global options for the refresh, e.g. `--skip-preflight` (the LLM
#              preflight asks each model a few uncached questions on every run)
# Exit status: 0 nothing new (nothing pushed), 10 a new version published and pushed, else an
# error whose message (a gate's, a failed fetch's) is the last thing printed.
set -euo pipefail
: "${PIPELINE:?set PIPELINE}" "${DATASET:?set DATASET}"
if [[ -z "${STATE:-}" && -z "${HUB_REPO:-}" ]]; then
  echo "set STATE=s3://bucket/prefix, or HUB_REPO=OWNER/NAME to restore from the Hub" >&2
  exit 2
fi
nb=${NOISEBENCH:-noisebench}
read -r -a flags <<< "${NOISEBENCH_FLAGS:-}"

# 1. The last published version, so `refresh` diffs against it and picks the next version.
if [[ -n "${STATE:-}" ]]; then
  # Stage folders are pulled from $STATE/work before stages run and pushed back after
  # (the global --remote-work option); the LLM cache's remote layer is [llm.cache] remote.
  export NOISEBENCH_REMOTE_WORK="$STATE/work"
  if [[ -n "$("$nb" store list "$STATE/snapshots" "$DATASET")" ]]; then
    "$nb" store download "$STATE/snapshots" "$DATASET"
  fi
else
  "$nb" hub pull --repo "$HUB_REPO"
fi

# 2. Refresh: reruns the stages reading live sources; LLM answers come from the cache.
set +e
"$nb" "${flags[@]}" refresh "$PIPELINE" --if-changed
status=$?
set -e
case $status in
  0) exit 0 ;;   # "no change": nothing published, nothing pushed
  10) ;;         # a new version: published under snapshots/ and pushed by [publish.hub]
  *) echo "refresh stopped (exit $status); its message is above" >&2; exit "$status" ;;
esac

# 3. Store the new version back, so the next run starts from it (the Hub has it already).
if [[ -n "${STATE:-}" ]]; then
  latest=$(find "snapshots/$DATASET" -mindepth 1 -maxdepth 1 -type d ! -name '.*' -printf '%f\n' | sort -V | tail -1)
  "$nb" store publish "snapshots/$DATASET/$latest" "$STATE/snapshots"
fi
exit 10

#!/usr/bin/env bash
# Stop the single-node cluster scripts/slurm/setup.sh started: slurmd, slurmctld, then munged.
# Packages, the munge key, slurm.conf and the controller's saved state stay (the next setup is
# warm). Jobs still queued or running are cancelled first.
set -euo pipefail

run_dir=/run/slurm

stop() { # pid_file name
    local pid
    [[ -f "$1" ]] || return 0
    pid=$(cat "$1")
    kill -0 "$pid" 2>/dev/null || { rm -f "$1"; return 0; }
    kill "$pid"
    for _ in $(seq 100); do
        kill -0 "$pid" 2>/dev/null || { echo "slurm teardown: stopped $2 (pid $pid)" >&2; return 0; }
        sleep 0.1
    done
    echo "slurm teardown: $2 (pid $pid) still running after 10 s" >&2
    return 1
}

if command -v scancel >/dev/null && [[ -f "$run_dir/slurmctld.pid" ]]; then
    scancel --full --quiet --user=root 2>/dev/null || true
fi
stop "$run_dir/slurmd.pid" slurmd
stop "$run_dir/slurmctld.pid" slurmctld
munge_pid_file=/run/munge/munged.pid
stop "$munge_pid_file" munged

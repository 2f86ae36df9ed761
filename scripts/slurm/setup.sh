#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, from Debian's packages: munged, slurmctld and
# slurmd started directly (no systemd), one node with the CPUs and memory `slurmd -C` reports, one
# partition `debug`. Idempotent: installs only what is missing, keeps a munge key that exists,
# rewrites slurm.conf and restarts the daemons only when the configuration changed, and returns
# once `sinfo` says the node is idle. Needs root (daemons and jobs run as root). For tests and
# local trials of `noisebench plan --emit slurm`, not for a shared machine: no accounting, no
# cgroups, no limits.
#
# Environment: NOISEBENCH_SLURM_TIMEOUT (seconds to wait for an idle node, default 60).
# scripts/slurm/teardown.sh stops the daemons.
set -euo pipefail

timeout="${NOISEBENCH_SLURM_TIMEOUT:-60}"
conf_dir=/etc/slurm
conf="$conf_dir/slurm.conf"
log_dir=/var/log/slurm
run_dir=/run/slurm
ctld_state=/var/spool/slurmctld
slurmd_spool=/var/spool/slurmd
started=$(date +%s.%N)

say() { echo "slurm setup: $*" >&2; }
die() {
    say "error: $*"
    for log in "$log_dir/slurmctld.log" "$log_dir/slurmd.log"; do
        if [[ -f "$log" ]]; then
            echo "----- last lines of $log -----" >&2
            tail -n 40 "$log" >&2
        fi
    done
    exit 1
}

[[ $(id -u) -eq 0 ]] || die "needs root (it installs packages and starts daemons)"

# 1. Packages.
missing=()
for pkg in munge slurmctld slurmd slurm-client; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y --no-install-recommends "${missing[@]}" >/tmp/noisebench-slurm-apt.log 2>&1; then
        apt-get update >>/tmp/noisebench-slurm-apt.log 2>&1 || true
        apt-get install -y --no-install-recommends "${missing[@]}" >>/tmp/noisebench-slurm-apt.log 2>&1 ||
            { cat /tmp/noisebench-slurm-apt.log >&2; die "apt-get install ${missing[*]} failed"; }
    fi
fi

# 2. Munge: a key if none, then the daemon (as the munge user, who owns the key).
install -d -o munge -g munge -m 0700 /etc/munge /var/lib/munge
install -d -o munge -g munge -m 0755 /run/munge /var/log/munge
if [[ ! -s /etc/munge/munge.key ]]; then
    say "creating a munge key"
    mungekey --create --keyfile=/etc/munge/munge.key
    chown munge:munge /etc/munge/munge.key
    chmod 0400 /etc/munge/munge.key
fi
if ! pgrep -x munged >/dev/null; then
    say "starting munged"
    runuser -u munge -- /usr/sbin/munged
fi
for _ in $(seq 50); do
    munge -n </dev/null | unmunge >/dev/null 2>&1 && break
    sleep 0.1
done
munge -n </dev/null | unmunge >/dev/null 2>&1 || die "munged does not answer (see /var/log/munge/munged.log)"

# 3. slurm.conf, with this machine's name, CPUs and memory as slurmd sees them (a node that claims
# more than slurmd finds is drained).
host=$(hostname -s)
node_line=$(slurmd -C | head -n 1)
[[ "$node_line" == NodeName=* ]] || die "slurmd -C printed no node line: $node_line"
node_hw=${node_line#NodeName=* }
install -d -m 0755 "$conf_dir" "$log_dir" "$run_dir" "$ctld_state" "$slurmd_spool"
new_conf=$(
    cat <<EOF
# Written by noisebench's scripts/slurm/setup.sh: a single-node cluster for local runs and tests.
ClusterName=noisebench
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CryptoType=crypto/munge
MpiDefault=none
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$log_dir/jobcomp.log
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
# batch_sched_delay=0: a job whose dependency just completed starts within a second, not after
# the default 3 s (a plan is a chain of some thirty jobs). kill_invalid_depend is meant to cancel a
# job whose dependency failed; 22.05 still leaves it pending (DependencyNeverSatisfied), so wait.sh
# cancels such jobs itself.
SchedulerParameters=kill_invalid_depend,batch_sched_delay=0
ReturnToService=2
# Finished jobs stay visible to scontrol for an hour (wait.sh reads their final state there).
MinJobAge=3600
SlurmctldPidFile=$run_dir/slurmctld.pid
SlurmdPidFile=$run_dir/slurmd.pid
SlurmctldLogFile=$log_dir/slurmctld.log
SlurmdLogFile=$log_dir/slurmd.log
StateSaveLocation=$ctld_state
SlurmdSpoolDir=$slurmd_spool
SlurmctldPort=6817
SlurmdPort=6818
NodeName=$host NodeAddr=127.0.0.1 $node_hw State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
)
changed=0
if [[ ! -f "$conf" ]] || [[ "$(cat "$conf")" != "$new_conf" ]]; then
    say "writing $conf"
    printf '%s\n' "$new_conf" >"$conf"
    changed=1
fi

# 4. The daemons: restarted when the configuration changed, started when not running.
running() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }
if ((changed)); then
    for pid_file in "$run_dir/slurmd.pid" "$run_dir/slurmctld.pid"; do
        if running "$pid_file"; then
            kill "$(cat "$pid_file")"
            for _ in $(seq 100); do running "$pid_file" || break; sleep 0.1; done
        fi
    done
fi
if ! running "$run_dir/slurmctld.pid"; then
    say "starting slurmctld"
    /usr/sbin/slurmctld || die "slurmctld did not start"
fi
if ! running "$run_dir/slurmd.pid"; then
    say "starting slurmd"
    /usr/sbin/slurmd || die "slurmd did not start"
fi

# 5. Wait for an idle node (a node left down or drained by an earlier run is resumed once).
deadline=$(($(date +%s) + timeout))
resumed=0
while :; do
    state=$(sinfo -h -n "$host" -o %T 2>/dev/null | head -n 1 || true)
    # The controller may answer from its saved state before slurmd registers: both must run.
    running "$run_dir/slurmctld.pid" || die "slurmctld exited"
    running "$run_dir/slurmd.pid" || die "slurmd exited"
    case "$state" in
    idle | mixed | allocated) break ;;
    down* | drain* | fail*)
        if ((!resumed)); then
            say "node $host is $state; resuming it"
            scontrol update NodeName="$host" State=RESUME >/dev/null 2>&1 || true
            resumed=1
        fi
        ;;
    esac
    if (($(date +%s) >= deadline)); then
        pgrep -a 'slurm|munged' >&2 || true
        die "node $host not idle after ${timeout}s (sinfo says '${state:-nothing}')"
    fi
    sleep 0.5
done
say "node $host is $state ($(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $started }") s)"

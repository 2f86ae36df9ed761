#!/usr/bin/env python3
"""`just test`: every test of the workspace, the test binaries run side by side.

`cargo test --workspace` runs one test binary after another, and a binary ends on its slowest
test while the other core waits: on two cores the suite took more than twice its CPU time over
two. This script builds what `cargo test --workspace` builds (the same command with `--no-run`,
so the same features and the same artifacts), then runs every test binary and the doc tests as
jobs on a pool of workers (one per core by default), longest first. A binary whose modules hold
long end-to-end tests is split into one job per such module plus one job for the rest
(`SPLIT`); every test still runs exactly once, which the script checks against each binary's
`--list`.

Each job runs in its package's folder with the variables `cargo test` sets, its output goes to
`target/test-logs/<job>.log`, and one line per job says how it ended; a failed job's failures
are printed in full at the end. The durations of the last run (`target/test-durations.json`)
order the next one. Exit status: 0 when every job passed, 1 otherwise.

    scripts/test.py [--jobs N] [FILTER ...]   # FILTERs are passed to every test binary
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Modules of a test binary that get a job of their own: each holds end-to-end builds long enough
# that, left inside the binary's one run, they would be its tail. Keyed by (package, target).
# `scripts/test.py --times` prints the last run's durations to revisit this list.
SPLIT = {
    ("noisebench-cli", "it"): [
        "refresh_cost",
        "remote_shards",
        "faults",
        "shards",
        "reliability_faults",
        "reliability_kills",
        "demo",
        "refresh_exit",
        "full_disk",
        "task_models",
    ],
    ("noisebench-chunk", "it"): ["fixtures"],
    ("noisebench-search", "it"): ["hostile"],
}


def target_dir():
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout
    return Path(json.loads(out)["target_directory"])


def build():
    """Build every test binary as `cargo test --workspace` would; the binaries with their package."""
    cmd = ["cargo", "test", "--workspace", "--no-run", "--message-format=json-render-diagnostics"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    binaries = []
    for line in proc.stdout:
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        # (`json-render-diagnostics`: cargo prints warnings and errors on stderr itself)
        if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
            continue
        if not msg.get("profile", {}).get("test"):
            continue
        manifest = Path(msg["manifest_path"])
        binaries.append({
            "package": package_name(msg["package_id"], manifest),
            "target": msg["target"]["name"],
            "kind": msg["target"]["kind"][0],
            "exe": msg["executable"],
            "dir": str(manifest.parent),
        })
    if proc.wait() != 0:
        sys.exit("the build failed: nothing was run")
    return binaries


def package_name(package_id, manifest):
    # `path+file:///.../crates/cli#noisebench-cli@0.1.0` or `...#0.1.0` (name = folder's package)
    m = re.search(r"#([A-Za-z0-9_-]+)@", package_id)
    if m:
        return m.group(1)
    text = manifest.read_text()
    return re.search(r'^name\s*=\s*"([^"]+)"', text, re.M).group(1)


def listed(binary, filters):
    """Every test of the binary the filters select, ignored ones included."""
    args = [binary["exe"], "--list", "--format", "terse", *filters]
    out = subprocess.run(args, cwd=binary["dir"], capture_output=True, text=True, env=env_for(binary))
    if out.returncode != 0:
        sys.exit(f"{binary['exe']} --list failed:\n{out.stderr}")
    return [line[: -len(": test")] for line in out.stdout.splitlines() if line.endswith(": test")]


def env_for(binary):
    env = dict(os.environ)
    env["CARGO_MANIFEST_DIR"] = binary["dir"]
    env["CARGO_PKG_NAME"] = binary["package"]
    env["CARGO"] = shutil.which("cargo") or "cargo"
    return env


def jobs_of(binaries, filters):
    """One job per binary, or per split module plus the rest; checked against `--list`."""
    jobs = []
    for b in binaries:
        label = f"{b['package'].removeprefix('noisebench-')} {b['target'] if b['kind'] != 'lib' else 'lib'}"
        modules = SPLIT.get((b["package"], b["target"])) if b["kind"] == "test" else None
        if not modules:
            jobs.append({"name": label, "binary": b, "args": list(filters)})
            continue
        names = listed(b, filters)
        # Test names go to the binary with `--exact`: a filter matches substrings, so `faults::`
        # would also run `reliability_faults::`.
        done = set()
        for module in modules:
            mine = [n for n in names if n.startswith(module + "::")]
            if mine:
                done.update(mine)
                jobs.append({"name": f"{label} {module}::", "binary": b, "args": ["--exact", *mine]})
        rest = [n for n in names if n not in done]
        if rest:
            jobs.append({"name": f"{label} (rest)", "binary": b, "args": ["--exact", *rest]})
        if len(done) + len(rest) != len(set(names)):
            sys.exit(f"{label}: the split jobs would not run every test once")
    return jobs


def run_job(job, logs):
    b = job["binary"]
    log = logs / (re.sub(r"[^A-Za-z0-9_.-]+", "_", job["name"]).strip("_") + ".log")
    run(job, [b["exe"], *job["args"]], b["dir"], env_for(b), log)


def run_doc(job, logs, filters):
    cmd = ["cargo", "test", "--workspace", "--doc", "--", *filters]
    run(job, cmd, ROOT, dict(os.environ), logs / "doc_tests.log")


def run(job, args, cwd, env, log):
    """Run one job, its output into `log`; its exit code, duration and libtest's counts into `job`."""
    start = time.time()
    with open(log, "w") as out:
        job["code"] = subprocess.run(args, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    job["seconds"] = time.time() - start
    job["log"] = log
    text = log.read_text(errors="replace")
    counts = re.findall(r"test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored", text)
    job["counts"] = [sum(int(c[i]) for c in counts) for i in range(3)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--times", action="store_true", help="print the last run's durations and exit")
    parser.add_argument("filters", nargs="*")
    opts = parser.parse_args()
    target = target_dir()
    durations_file = target / "test-durations.json"
    last = json.loads(durations_file.read_text()) if durations_file.exists() else {}
    if opts.times:
        for name, secs in sorted(last.items(), key=lambda kv: -kv[1]):
            print(f"{secs:8.1f} s  {name}")
        return
    started = time.time()
    binaries = build()
    built = time.time()
    jobs = jobs_of(binaries, opts.filters)
    doc = {"name": "doc tests", "doc": True}
    jobs.append(doc)
    # Longest first: the last run's durations, else split modules and end-to-end binaries first.
    jobs.sort(key=lambda j: -last.get(j["name"], 1000 if "::" in j["name"] else 100))
    logs = target / "test-logs"
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    print(f"built in {built - started:.0f} s; running {len(jobs)} jobs on {opts.jobs} workers", flush=True)

    queue = list(jobs)
    lock = threading.Lock()

    def worker():
        while True:
            with lock:
                if not queue:
                    return
                job = queue.pop(0)
            if job.get("doc"):
                run_doc(job, logs, opts.filters)
            else:
                run_job(job, logs)
            p, f, i = job["counts"]
            status = "ok  " if job["code"] == 0 else "FAIL"
            with lock:
                print(f"{status} {job['name']:40} {p:4} passed {f:3} failed {i:3} ignored  {job['seconds']:6.1f} s", flush=True)

    threads = [threading.Thread(target=worker) for _ in range(opts.jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    failed = [j for j in jobs if j["code"] != 0]
    for j in failed:
        print(f"\n==== {j['name']} failed (full log: {j['log']})")
        text = j["log"].read_text(errors="replace")
        cut = text.find("\nfailures:\n")
        print(text[cut:] if cut >= 0 else text[-6000:])
    totals = [sum(j["counts"][i] for j in jobs) for i in range(3)]
    durations_file.write_text(json.dumps({j["name"]: round(j["seconds"], 1) for j in jobs}, indent=1))
    print(
        f"\n{'FAILED' if failed else 'ok'}: {totals[0]} passed, {totals[1]} failed, {totals[2]} ignored "
        f"in {len(jobs)} jobs; tests {time.time() - built:.0f} s after a build of {built - started:.0f} s"
    )
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

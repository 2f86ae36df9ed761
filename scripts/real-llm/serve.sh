#!/usr/bin/env bash
# Start llama.cpp's `llama-server` with SmolLM2-135M-Instruct on 127.0.0.1 (installing both
# first with install.sh, cached) and wait until it answers. Prints the OpenAI-compatible base
# URL (`http://127.0.0.1:PORT/v1`) on stdout; the server's pid goes to $NOISEBENCH_REAL_LLM_PID_FILE
# (default: <cache>/llama-server.pid) and its log to <cache>/llama-server.log. Stop it with
# `kill "$(cat <pid file>)"`.
#
# Settings (measured on two shared cores): one thread (`-t 1` is far faster than `-t 2` when
# other work shares the cores), two slots of 2,048 tokens each (`--parallel 2`, `-c 4096`).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${NOISEBENCH_REAL_LLM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/noisebench/real-llm}"
paths="$("$here/install.sh")"
server="$(sed -n 's/^server=//p' <<<"$paths")"
model="$(sed -n 's/^model=//p' <<<"$paths")"
port="${NOISEBENCH_REAL_LLM_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
threads="${NOISEBENCH_REAL_LLM_THREADS:-1}"
pid_file="${NOISEBENCH_REAL_LLM_PID_FILE:-$cache/llama-server.pid}"
log="$cache/llama-server.log"

"$server" -m "$model" --host 127.0.0.1 --port "$port" -t "$threads" -tb "$threads" \
    -c 4096 --parallel 2 --no-webui >"$log" 2>&1 &
pid=$!
echo "$pid" >"$pid_file"
for _ in $(seq 1 120); do
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "llama-server exited; its log:" >&2
        tail -20 "$log" >&2
        exit 1
    fi
    if curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1; then
        echo "http://127.0.0.1:$port/v1"
        exit 0
    fi
    sleep 0.5
done
echo "llama-server did not become ready in 60 s; its log:" >&2
tail -20 "$log" >&2
kill "$pid" 2>/dev/null || true
exit 1

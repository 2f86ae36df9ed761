#!/usr/bin/env bash
# What `just test` needs beyond the Rust toolchain, installed when missing (`just test` and
# .ci/run call this first; each step is skipped when its tool is already there):
# - moto's S3 API server (`moto[server]`): crates/store's tests start it on 127.0.0.1 and fail
#   without it;
# - the Python readers dataset users open tables with (pandas, pyarrow, polars, duckdb, datasets,
#   networkx, mlcroissant): the demo, graph and Croissant tests open the published files with
#   them and say SKIPPED without them (fail instead under NOISEBENCH_REQUIRE_READERS, as CI sets);
# - headless Chromium (Debian's `chromium`, with apt and sudo when not root): the report test
#   renders the demo's HTML report in it, SKIPPED without it.
# A step that cannot install (no network, no apt) prints a warning naming what is missing and
# which tests it affects; the script still exits 0 so the rest of the tests run.
set -uo pipefail

say() { echo "test-deps: $*" >&2; }

py_has() { python3 -c "import $1" 2>/dev/null; }

pip_install() {
  say "installing $* (pip)"
  python3 -m pip install --quiet "$@"
}

if ! command -v python3 >/dev/null 2>&1; then
  say "warning: no python3: the store tests fail (they need moto[server]); reader and graph checks are skipped"
else
  if ! py_has "moto.server, flask"; then
    pip_install 'moto[server]' \
      || say "warning: could not install moto[server]: crates/store's S3 tests will fail"
  fi
  readers="pandas pyarrow polars duckdb datasets networkx mlcroissant"
  if ! py_has "${readers// /, }"; then
    # shellcheck disable=SC2086 # one argument per package
    pip_install $readers \
      || say "warning: could not install the Python readers ($readers): their checks say SKIPPED"
  fi
fi

if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  if command -v apt-get >/dev/null 2>&1; then
    say "installing chromium (apt-get)"
    { $sudo apt-get update -qq \
        && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null; } \
      || say "warning: could not install chromium: the report's browser test says SKIPPED"
  else
    say "warning: no chromium and no apt-get: the report's browser test says SKIPPED"
  fi
fi
exit 0

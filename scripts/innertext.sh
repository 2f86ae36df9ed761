#!/usr/bin/env bash
# Headless Chromium's `document.body.innerText` of a saved page: the reference the visible-text
# rule (crates/web/src/visible.rs) is tested against. Reads a page (`.htm`, or `.htm.zst`), writes
# the innerText to stdout. Chromium loads the page from a temporary file:// copy with one script
# appended that replaces the body by a <pre> holding the body's innerText, then --dump-dom prints
# the DOM; the page's own requests (none in a 10-K) are not made (no network in tests anyway).
#   scripts/innertext.sh fixtures/real/10k/ibm-10-k-2025-02-25.htm.zst | zstd -19 > out.txt.zst
set -euo pipefail
src="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [[ "$src" == *.zst ]]; then zstd -q -d -c "$src" > "$tmp/page.html"; else cp "$src" "$tmp/page.html"; fi
cat >> "$tmp/page.html" <<'JS'
<script>
(function () {
  var t = document.body.innerText;
  var pre = document.createElement('pre');
  pre.id = 'noisebench-innertext';
  pre.textContent = t;
  document.body.innerHTML = '';
  document.body.appendChild(pre);
})();
</script>
JS
chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
  --disable-component-update --user-data-dir="$tmp/profile" --dump-dom "file://$tmp/page.html" \
  2>/dev/null > "$tmp/dom.html"
python3 - "$tmp/dom.html" <<'PY'
import html, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<pre id="noisebench-innertext">(.*?)</pre>', dom, re.S)
if not m:
    sys.exit("no innerText in the dumped DOM")
sys.stdout.write(html.unescape(m.group(1)))
PY

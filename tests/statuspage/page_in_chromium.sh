#!/usr/bin/env bash
# The status page as a browser shows it. Headless Chromium (Debian's chromium) loads URL
# (file:// of a rendered page, or http://127.0.0.1:PORT/ of a live `rota run`), then:
# - the parsed DOM must hold the sections queues, pending and recent, at least one queue row
#   with a usage bar (<svg class="usage-bar">), no <script> element, and every EXPECT string;
# - a screenshot must show the bars' colours (in use #1f77b4, borrowed #ff7f0e) painted.
# OUTDIR keeps dom.html, screenshot.png and chromium.log as the test's artifact.
#
#   tests/statuspage/page_in_chromium.sh URL OUTDIR [EXPECT...]
set -euo pipefail
fail() {
  echo "page_in_chromium: $*" >&2
  exit 1
}
(($# >= 2)) || fail "usage: page_in_chromium.sh URL OUTDIR [EXPECT...]"
URL=$1
OUT=$2
shift 2
command -v chromium >/dev/null || fail "chromium is missing (hack/install-deps.sh installs Debian's chromium)"
command -v python3 >/dev/null || fail "python3 is missing"
mkdir -p "$OUT"
rm -f "$OUT/dom.html" "$OUT/screenshot.png" "$OUT/chromium.log"
profile=$(mktemp -d "${TMPDIR:-/tmp}/rota-statuspage-chromium-XXXXXX")
trap 'rm -rf "$profile"' EXIT

flags=(--headless --no-sandbox --disable-gpu --user-data-dir="$profile" --window-size=1280,1200
  --hide-scrollbars --force-device-scale-factor=1)
timeout 120 chromium "${flags[@]}" --dump-dom "$URL" >"$OUT/dom.html" 2>>"$OUT/chromium.log" ||
  fail "Chromium could not load $URL (see $OUT/chromium.log)"
dom=$(<"$OUT/dom.html")
for id in queues pending recent; do
  grep -q "<section id=\"$id\"" <<<"$dom" || fail "no section with id $id in the DOM Chromium parsed ($OUT/dom.html)"
done
rows=$(grep -o 'class="queue-row"' <<<"$dom" | wc -l)
((rows >= 1)) || fail "no queue row (class=\"queue-row\") in the DOM"
bars=$(grep -o '<svg class="usage-bar"' <<<"$dom" | wc -l)
((bars >= 1)) || fail "no usage bar (<svg class=\"usage-bar\">) in the DOM"
! grep -qi '<script' <<<"$dom" || fail "the DOM holds a <script> element"
for want in "$@"; do
  grep -qF -- "$want" <<<"$dom" || fail "the DOM does not contain \"$want\""
done

timeout 120 chromium "${flags[@]}" --screenshot="$OUT/screenshot.png" "$URL" >>"$OUT/chromium.log" 2>&1 ||
  fail "Chromium could not take a screenshot of $URL (see $OUT/chromium.log)"
[[ -s $OUT/screenshot.png ]] || fail "Chromium wrote no screenshot"
python3 "$(dirname "${BASH_SOURCE[0]}")/../support/png_colours.py" "$OUT/screenshot.png" page_in_chromium \
  "the usage bars were not painted" "in-use blue=1f77b4" "borrowed orange=ff7f0e"
echo "page_in_chromium: $URL parsed ($rows queue rows, $bars usage bars) and painted; artifact in $OUT"

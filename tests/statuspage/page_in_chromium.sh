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
python3 - "$OUT/screenshot.png" <<'PY'
# Decodes the PNG (8-bit RGB or RGBA, as Chromium writes it) and counts the pixels of the bars'
# colours, which the bars and their legend paint at full opacity.
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat = 8, b""
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
        width, height, depth, colour = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
    pos += 12 + length
assert depth == 8 and colour in (2, 6), "unexpected PNG format"
bpp = 3 if colour == 2 else 4
raw, stride, prev, counts = zlib.decompress(idat), width * bpp, bytearray(width * bpp), {}
for row in range(height):
    f, line = raw[row * (stride + 1)], bytearray(raw[row * (stride + 1) + 1:(row + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for i in range(0, stride, bpp):
        px = bytes(line[i:i + 3])
        counts[px] = counts.get(px, 0) + 1
    prev = line
for name, rgb in (("in-use blue", b"\x1f\x77\xb4"), ("borrowed orange", b"\xff\x7f\x0e")):
    n = counts.get(rgb, 0)
    if n == 0:
        sys.exit("page_in_chromium: the screenshot shows no %s: the usage bars were not painted" % name)
    print("page_in_chromium: %d px of %s painted" % (n, name))
PY
echo "page_in_chromium: $URL parsed ($rows queue rows, $bars usage bars) and painted; artifact in $OUT"

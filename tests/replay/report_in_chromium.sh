#!/usr/bin/env bash
# report.html as a browser shows it. Headless Chromium (Debian's chromium) loads the report of
# examples/replay/scenario replayed on two configurations:
# - the parsed DOM must hold both runs' tables, team rows and SVG charts with their shapes;
# - a screenshot must show the charts, with both teams' legend colours painted.
#
#   tests/replay/report_in_chromium.sh ROTA_BINARY REPO
set -euo pipefail
ROTA=$1
REPO=$2
fail() {
  echo "report_in_chromium: $*" >&2
  exit 1
}
command -v chromium >/dev/null || fail "chromium is missing (hack/install-deps.sh installs Debian's chromium)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rota-report-chromium-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

scenario=$REPO/examples/replay/scenario
"$ROTA" replay --format workloads --cluster "$scenario/cluster" --compare "$scenario/isolated" \
  --trace "$scenario/workloads.yaml" --out "$tmp/out" --interval 10s --no-progress >/dev/null

flags=(--headless --no-sandbox --disable-gpu --user-data-dir="$tmp/profile" --window-size=1100,1400)
dom=$(timeout 120 chromium "${flags[@]}" --dump-dom "file://$tmp/out/report.html" 2>/dev/null)
for id in comparison delay-cdf-compare summary-0 summary-1 utilization-0 utilization-1 delay-cdf-0 delay-cdf-1; do
  grep -q "<svg id=\"$id\"\|<table id=\"$id\"" <<<"$dom" || fail "no element with id $id in the DOM Chromium parsed"
done
rows=$(grep -o 'class="team-row"' <<<"$dom" | wc -l)
((rows == 4)) || fail "expected 4 team rows (2 teams, 2 runs), found $rows"
areas=$(grep -o '<polygon class="team-area"' <<<"$dom" | wc -l)
((areas == 4)) || fail "expected 4 stacked areas in the utilization charts, found $areas"
curves=$(grep -o '<polyline class="cdf"' <<<"$dom" | wc -l)
((curves == 6)) || fail "expected 6 delay curves (2 compared, 2 teams per run), found $curves"

timeout 120 chromium "${flags[@]}" --screenshot="$tmp/shot.png" "file://$tmp/out/report.html" >/dev/null 2>&1
[[ -s $tmp/shot.png ]] || fail "Chromium wrote no screenshot"
python3 - "$tmp/shot.png" <<'PY'
# Decodes the PNG (8-bit RGB or RGBA, as Chromium writes it) and looks for the first two team
# colours of the report's palette, which the legends paint at full opacity.
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
raw, stride, prev, seen = zlib.decompress(idat), width * bpp, bytearray(width * bpp), set()
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
    seen.update(bytes(line[i:i + 3]) for i in range(0, stride, bpp))
    prev = line
for name, rgb in (("team-a blue", b"\x1f\x77\xb4"), ("team-b orange", b"\xff\x7f\x0e")):
    if rgb not in seen:
        sys.exit("report_in_chromium: the screenshot shows no %s: the charts were not painted" % name)
PY
echo "report_in_chromium: both runs' tables and charts parsed and painted"

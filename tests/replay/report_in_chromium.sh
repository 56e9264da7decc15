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
python3 "$(dirname "${BASH_SOURCE[0]}")/../support/png_colours.py" "$tmp/shot.png" report_in_chromium \
  "the charts were not painted" "team-a blue=1f77b4" "team-b orange=ff7f0e" >/dev/null
echo "report_in_chromium: both runs' tables and charts parsed and painted"

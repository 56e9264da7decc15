#!/usr/bin/env bash
# `rota replay` speed and memory on the shipped traces (../shared/traces, or ROTA_TRACES): for
# each configuration, the wall time, simulated jobs per second, engine passes and the peak RSS of
# the process. Figures are printed, never asserted.
#
#   bench/replay.sh [BUILD_DIR]
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${1:-$REPO/build}
TRACES=${ROTA_TRACES:-$REPO/../shared/traces}
OUT=$(mktemp -d "${TMPDIR:-/tmp}/rota-bench-replay-XXXXXX")
trap 'rm -rf "$OUT"' EXIT

[[ -f $TRACES/philly/philly.csv ]] || { echo "bench/replay.sh: no traces in $TRACES (set ROTA_TRACES)" >&2; exit 1; }

printf '%-40s %8s %10s %10s %9s %10s\n' configuration jobs "wall (s)" "jobs/s" passes "RSS (MiB)"
run() {  # name, args...
  local name=$1
  shift
  "$BUILD/bin/rota" replay "$@" --out "$OUT/$name" --no-progress >/dev/null 2>"$OUT/err" || {
    cat "$OUT/err" >&2
    exit 1
  }
  python3 - "$OUT/$name/summary.json" "$name" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
jobs, wall = s["trace"]["jobs"], s["wallSeconds"]
print("%-40s %8d %10.1f %10.0f %9d %10.1f" % (sys.argv[2], jobs, wall, jobs / max(wall, 1e-9), s["passes"],
                                               s["peakRssKiB"] / 1024))
PY
}
P=(--trace "$TRACES/philly/philly.csv")
A=(--format pai --trace "$TRACES/pai-v2023/openb_pod_list_default.csv")
run philly "${P[@]}" --cluster "$REPO/examples/replay/philly"
run philly-tight "${P[@]}" --cluster "$REPO/examples/replay/philly-tight"
run philly-tight-kueue-victims "${P[@]}" --cluster "$REPO/examples/replay/philly-tight-kueue-victims"
run philly-tight-checkpoints "${P[@]}" --cluster "$REPO/examples/replay/philly-tight-checkpoints"
run philly-tight-isolated "${P[@]}" --cluster "$REPO/examples/replay/philly-tight-isolated"
run pai "${A[@]}" --cluster "$REPO/examples/replay/pai"
run pai-tight "${A[@]}" --cluster "$REPO/examples/replay/pai-tight"

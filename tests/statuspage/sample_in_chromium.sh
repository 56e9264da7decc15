#!/usr/bin/env bash
# The ctest statuspage.in_chromium: renders the sample page (statuspage-sample) into OUTDIR and
# checks it in headless Chromium with page_in_chromium.sh, which leaves dom.html and
# screenshot.png in OUTDIR.
#
#   tests/statuspage/sample_in_chromium.sh STATUSPAGE_SAMPLE_BINARY OUTDIR
set -euo pipefail
SAMPLE=$1
OUT=$2
mkdir -p "$OUT"
"$SAMPLE" "$OUT/sample.html"
# The sample's queues, a MIG resource, the pending count, a workload, a preemption's reason, a
# checkpoint request, and a message whose ">" the page escaped and Chromium kept as text.
exec "$(dirname "${BASH_SOURCE[0]}")/page_in_chromium.sh" "file://$(cd "$OUT" && pwd)/sample.html" "$OUT" \
  team-vision team-nlp team-inference nvidia.com/mig-1g.10gb "showing 5 of 5" ml-nlp/llama-sft-13b \
  InCohortReclamation CheckpointRequested "16 nvidia.com/gpu &gt; nominal 8"

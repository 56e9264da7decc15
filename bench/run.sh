#!/usr/bin/env bash
# `make bench`: runs every benchmark binary and prints its figures.
set -euo pipefail
BUILD=${1:-build}
for b in "$BUILD"/bin/rota_bench_*; do
  echo "== $(basename "$b")"
  "$b" --benchmark_counters_tabular=true
done

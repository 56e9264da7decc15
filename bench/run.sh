#!/usr/bin/env bash
# `make bench`: the engine micro-benchmarks (no cluster), then the client benchmark against a
# local control plane of its own (state in .cluster-bench), which is stopped afterwards.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${1:-$REPO/build}

for b in "$BUILD"/bin/rota_bench_quantity "$BUILD"/bin/rota_bench_engine; do
  echo "== $(basename "$b")"
  "$b" --benchmark_counters_tabular=true
done

echo "== rota_bench_apiclient (real apiserver)"
export ROTA_CLUSTER_DIR=$REPO/.cluster-bench
trap '"$REPO/hack/cluster.sh" down' EXIT
up=$("$REPO/hack/cluster.sh" up)
eval "$(tail -n 1 <<<"$up")"
export PATH="$(sed -n 's/^bin=//p' "$ROTA_CLUSTER_DIR/endpoints"):$PATH"
kubectl apply -f "$REPO/crds/" >/dev/null
kubectl wait --for=condition=Established --timeout=60s -f "$REPO/crds/" >/dev/null
"$BUILD/bin/rota_bench_apiclient" "$KUBECONFIG" "${ROTA_BENCH_OBJECTS:-50000}" "${ROTA_BENCH_UPDATES:-10000}"

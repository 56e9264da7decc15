#!/usr/bin/env bash
# `make bench`: every benchmark, figures printed (never asserted).
#  1. `rota replay` on the shipped traces, the engine and parser micro-benchmarks (no cluster);
#  2. against a local control plane of its own (state in .cluster-bench, stopped afterwards): the
#     client benchmark, then a burst of Job creations through rota's mutating webhook;
#  3. Kueue's own scheduler benchmark (bench/kueue-bench.sh), baseline and large-scale, under
#     rota and under Kueue's minimalkueue, with one table per scenario (JSON in build/bench/).
# BENCH_SKIP_KUEUE=1 skips 3 (it takes the better part of an hour on 2 cores).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${1:-$REPO/build}

echo "== bench/replay.sh (rota replay on the shipped traces)"
"$REPO/bench/replay.sh" "$BUILD" || echo "(skipped: no traces)"

for b in "$BUILD"/bin/rota_bench_quantity "$BUILD"/bin/rota_bench_engine "$BUILD"/bin/rota_bench_engine_passes "$BUILD"/bin/rota_bench_incremental \
         "$BUILD"/bin/rota_bench_parse "$BUILD"/bin/rota_bench_cache_memory; do
  echo "== $(basename "$b")"
  "$b" --benchmark_counters_tabular=true
done

echo "== rota_bench_apiclient (real apiserver)"
export ROTA_CLUSTER_DIR=$REPO/.cluster-bench
rota_pid=""
cleanup() {
  [[ -n $rota_pid ]] && kill "$rota_pid" 2>/dev/null && wait "$rota_pid" 2>/dev/null
  "$REPO/hack/webhooks.sh" unregister >/dev/null 2>&1 || true
  "$REPO/hack/cluster.sh" down
}
trap cleanup EXIT
up=$("$REPO/hack/cluster.sh" up)
eval "$(tail -n 1 <<<"$up")"
export PATH="$(sed -n 's/^bin=//p' "$ROTA_CLUSTER_DIR/endpoints"):$PATH"
kubectl apply -f "$REPO/crds/" >/dev/null
kubectl wait --for=condition=Established --timeout=60s -f "$REPO/crds/" >/dev/null
"$BUILD/bin/rota_bench_apiclient" "$KUBECONFIG" "${ROTA_BENCH_OBJECTS:-50000}" "${ROTA_BENCH_UPDATES:-10000}"
kubectl delete workloads --all -A --wait=false >/dev/null 2>&1 || true

echo "== rota_bench_webhook (real apiserver -> rota's mutating webhook)"
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
webhook_port=$(port) metrics_port=$(port)
certs=$("$REPO/hack/webhooks.sh" cert-dir)
config=$(mktemp "${TMPDIR:-/tmp}/rota-bench-webhook-XXXXXX.yaml")
cat >"$config" <<YAML
metrics: {bindAddress: "127.0.0.1:$metrics_port"}
health: {bindAddress: "0"}
logging: {level: warn}
webhook: {bindAddress: "127.0.0.1:$webhook_port", certFile: $certs/tls.crt, keyFile: $certs/tls.key}
YAML
"$BUILD/bin/rota" run --kubeconfig "$KUBECONFIG" --config "$config" 2>"$BUILD/bench-webhook-rota.log" &
rota_pid=$!
for _ in $(seq 50); do curl -sf --cacert "$ROTA_CLUSTER_DIR/pki/ca.crt" "https://127.0.0.1:$webhook_port/healthz" >/dev/null && break; sleep 0.2; done
"$REPO/hack/webhooks.sh" register "$webhook_port" 2>/dev/null
"$BUILD/bin/rota_bench_webhook" "$KUBECONFIG" webhook-bench "http://127.0.0.1:$metrics_port/metrics" \
  "${ROTA_BENCH_JOBS:-500}" "${ROTA_BENCH_CLIENTS:-16}"
"$REPO/hack/webhooks.sh" unregister >/dev/null 2>&1
kill "$rota_pid"; wait "$rota_pid" 2>/dev/null || true; rota_pid=""
"$REPO/hack/cluster.sh" down
trap - EXIT

if [[ ${BENCH_SKIP_KUEUE:-0} != 1 ]]; then
  echo "== Kueue's scheduler benchmark: rota vs minimalkueue (bench/kueue-bench.sh)"
  ROTA_BIN=$BUILD/bin/rota "$REPO/bench/kueue-bench.sh" baseline large-scale
fi

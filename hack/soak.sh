#!/usr/bin/env bash
# `make soak`: rota's chaos soak (tests/soak/) on a local control plane of its own (state in
# .cluster-soak), for SOAK_DURATION (default 30m) of faults, then a drain and the auditor's
# verdict. SOAK_SEED replays a run. The replicas' logs and summary.json go to build/soak/.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD_DIR:-$REPO/build}
export ROTA_CLUSTER_DIR=${ROTA_SOAK_CLUSTER_DIR:-$REPO/.cluster-soak}

trap '"$REPO/hack/cluster.sh" down' EXIT
up=$("$REPO/hack/cluster.sh" up)
eval "$(tail -n 1 <<<"$up")"
export PATH="$(sed -n 's/^bin=//p' "$ROTA_CLUSTER_DIR/endpoints"):$PATH"
seed=()
[[ -n ${SOAK_SEED:-} ]] && seed=(--seed "$SOAK_SEED")
"$BUILD/bin/rota-soak" --rota "$BUILD/bin/rota" --kubeconfig "$KUBECONFIG" --duration "${SOAK_DURATION:-30m}" \
  --out "$BUILD/soak" "${seed[@]}"

#!/usr/bin/env bash
# `make test`: start a local control plane of its own (state in .cluster-test, so a demo cluster
# is left alone), run every test with ctest against it, and stop it again whatever happened.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD_DIR:-$REPO/build}
export ROTA_CLUSTER_DIR=${ROTA_TEST_CLUSTER_DIR:-$REPO/.cluster-test}

trap '"$REPO/hack/cluster.sh" down' EXIT
# The control plane must come up: if it cannot, the tests fail here (they are never skipped).
up=$("$REPO/hack/cluster.sh" up)
eval "$(tail -n 1 <<<"$up")"
export PATH="$(sed -n 's/^bin=//p' "$ROTA_CLUSTER_DIR/endpoints"):$PATH"
echo "[test] cluster ready: KUBECONFIG=$KUBECONFIG ($(kubectl version 2>/dev/null | sed -n 's/^Server Version: //p'))"

ctest --test-dir "$BUILD" --output-on-failure -j "${CTEST_PARALLEL:-2}" "$@"

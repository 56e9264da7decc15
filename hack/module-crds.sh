#!/usr/bin/env bash
# Prints the directory of another project's CRDs, taken from its Go module into the module cache
# (ROTA_CACHE, as the control plane's), for tests that check rota's manifests for those kinds
# with `kubectl apply --dry-run=server`. Nothing of it is committed.
#   hack/module-crds.sh cert-manager   -> cert-manager's Issuer, Certificate, ...
#   hack/module-crds.sh prometheus-operator   -> PrometheusRule, ServiceMonitor, ...
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${ROTA_CACHE:-$HOME/.cache/rota}
case ${1:-} in
  cert-manager) module=github.com/cert-manager/cert-manager@${CERT_MANAGER_VERSION:-v1.21.2} sub=deploy/crds ;;
  prometheus-operator)
    module=github.com/prometheus-operator/prometheus-operator@${PROMETHEUS_OPERATOR_VERSION:-v0.85.0}
    sub=example/prometheus-operator-crd
    ;;
  *) echo "usage: hack/module-crds.sh cert-manager|prometheus-operator" >&2; exit 2 ;;
esac
source "$REPO/hack/go-env.sh"
command -v go >/dev/null || export PATH=/usr/local/go/bin:$PATH
mkdir -p "$CACHE"
dir=$(cd "$CACHE" && go mod download -json "$module" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
[[ -d $dir/$sub ]] || { echo "$module has no $sub" >&2; exit 1; }
echo "$dir/$sub"

#!/usr/bin/env bash
# Prints the directory of cert-manager's CRDs (Issuer, Certificate, ...), taken from its Go
# module into the module cache (ROTA_CACHE, as the control plane's), for tests that check
# config/default with `kubectl apply --dry-run=server`. Nothing of it is committed.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${ROTA_CACHE:-$HOME/.cache/rota}
VERSION=${CERT_MANAGER_VERSION:-v1.21.2}
source "$REPO/hack/go-env.sh"
command -v go >/dev/null || export PATH=/usr/local/go/bin:$PATH
mkdir -p "$CACHE"
dir=$(cd "$CACHE" && go mod download -json "github.com/cert-manager/cert-manager@$VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
[[ -d $dir/deploy/crds ]] || { echo "cert-manager $VERSION has no deploy/crds in $dir" >&2; exit 1; }
echo "$dir/deploy/crds"

#!/usr/bin/env bash
# Builds Kueue's scheduler performance harness from its Go module (sigs.k8s.io/kueue, pinned):
# the runner (`test/performance/scheduler/runner`) and minimalkueue
# (`test/performance/scheduler/minimalkueue`), and Kueue's kubectl plugin kueuectl (`cmd/kueuectl`,
# which tests/visibility runs against rota's visibility API), into a cache outside the repository. It also copies
# the module's generator configs and Kueue's CRDs next to them so the benchmark can run Kueue with
# its own manifests. Nothing is committed; a second run reuses the cache.
#
#   bench/build-kueue.sh      build what is missing, print the cache directory on the last line
#   ROTA_CACHE=DIR            cache root (default ~/.cache/rota)
set -euo pipefail

KUEUE_VERSION=${KUEUE_VERSION:-v0.19.1}
CACHE=${ROTA_CACHE:-$HOME/.cache/rota}
OUT=$CACHE/kueue-$KUEUE_VERSION
MODULE=sigs.k8s.io/kueue

source "$(dirname "${BASH_SOURCE[0]}")/../hack/go-env.sh"
export PATH=/usr/local/go/bin:$PATH

log() { printf '[build-kueue] %s\n' "$*" >&2; }

if [[ -x $OUT/bin/runner && -x $OUT/bin/minimalkueue && -x $OUT/bin/kueuectl && -d $OUT/configs && -d $OUT/crds ]]; then
  log "cached: $OUT"
  echo "$OUT"
  exit 0
fi
command -v go >/dev/null || { log "error: go is not on PATH; Kueue's harness is built from its Go module"; exit 1; }
start=$(date +%s)
mkdir -p "$OUT/bin"
log "building $MODULE@$KUEUE_VERSION runner, minimalkueue and kueuectl with $(go version | cut -d' ' -f3)"
# `go install pkg@version` asks the proxy for the module's version list (to report deprecation),
# which this proxy refuses; a wrapper module that requires the pinned version builds the same code.
mkdir -p "$OUT/src"
cd "$OUT/src"
cat > go.mod <<GOMOD
module rota.local/kueuebench

go 1.26

require $MODULE $KUEUE_VERSION
GOMOD
cat > tools.go <<'GOSRC'
//go:build tools

package kueuebench

import (
	_ "sigs.k8s.io/kueue/cmd/kueuectl"
	_ "sigs.k8s.io/kueue/test/performance/scheduler/minimalkueue"
	_ "sigs.k8s.io/kueue/test/performance/scheduler/runner"
)
GOSRC
go mod tidy -e >/dev/null 2>&1 || true
go build -trimpath -ldflags "-s -w" -o "$OUT/bin/" \
  "$MODULE/test/performance/scheduler/runner" \
  "$MODULE/test/performance/scheduler/minimalkueue" \
  "$MODULE/cmd/kueuectl"

dir=$(go mod download -json "$MODULE@$KUEUE_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[[ -d $dir ]] || { log "error: could not find $MODULE@$KUEUE_VERSION in the module cache"; exit 1; }
rm -rf "$OUT/configs" "$OUT/crds"
cp -r "$dir/test/performance/scheduler/configs" "$OUT/configs"
cp -r "$dir/config/components/crd/bases" "$OUT/crds"
chmod -R u+w "$OUT/configs" "$OUT/crds"
log "built in $(( $(date +%s) - start )) s: $OUT"
echo "$OUT"

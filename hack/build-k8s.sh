#!/usr/bin/env bash
# Builds the local control plane's binaries from Go modules with the machine's Go toolchain:
# kube-apiserver, kube-controller-manager, kube-scheduler and a kubectl of the same release
# (k8s.io/kubernetes), etcd (the version that release pins) and kwok. Everything lands in a cache
# outside the repository, keyed by version, so a second run (or a fresh clone on the same
# machine) reuses it.
#
#   hack/build-k8s.sh            build what is missing, print the bin directory on the last line
#   ROTA_CACHE=DIR               cache root (default ~/.cache/rota)
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.36.3}
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
CACHE=${ROTA_CACHE:-$HOME/.cache/rota}
OUT=$CACHE/k8s-$K8S_VERSION
BIN=$OUT/bin
BINARIES=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok)

source "$(dirname "${BASH_SOURCE[0]}")/go-env.sh"

log() { printf '[build-k8s] %s\n' "$*" >&2; }

have_all() {
  for b in "${BINARIES[@]}"; do [[ -x $BIN/$b ]] || return 1; done
}

if have_all; then
  log "cached: $BIN"
  echo "$BIN"
  exit 0
fi

command -v go >/dev/null || { log "error: go is not on PATH; the control plane is built from Go modules"; exit 1; }
start=$(date +%s)
mkdir -p "$BIN" "$OUT/src"
log "building Kubernetes $K8S_VERSION and kwok $KWOK_VERSION with $(go version | cut -d' ' -f3) into $OUT"
log "a cold build takes a while on 2 cores (measured: see docs/performance.md); later runs reuse the cache"

# k8s.io/kubernetes requires its staging modules at v0.0.0 and fixes that with replace directives,
# which Go ignores in a dependency. A wrapper module replaces each one with its published tag.
minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
patch=${K8S_VERSION##*.}
staging_version="v0.$minor.$patch"
cd "$OUT/src"
cat > go.mod <<GOMOD
module rota.local/k8sbuild

go 1.26

require k8s.io/kubernetes $K8S_VERSION
GOMOD
go mod download -json "k8s.io/kubernetes@$K8S_VERSION" > kubernetes.mod.json
kmod=$(sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p' kubernetes.mod.json)
[[ -f $kmod ]] || { log "error: could not find k8s.io/kubernetes's go.mod in the module cache"; exit 1; }
{
  echo
  echo "replace ("
  grep -E '^[[:space:]]*k8s\.io/[a-z0-9-]+ v0\.0\.0[[:space:]]*$' "$kmod" | awk -v v="$staging_version" '{print "\t" $1 " => " $1 " " v}' | sort -u
  echo ")"
} >> go.mod

pkgver=k8s.io/component-base/version
cgover=k8s.io/client-go/pkg/version
date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)
ldflags="-s -w"
for p in $pkgver $cgover; do
  ldflags+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
  ldflags+=" -X $p.gitTreeState=clean -X $p.buildDate=$date_utc"
done

etcd_version=$(go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
log "etcd pinned by Kubernetes $K8S_VERSION: $etcd_version"

log "compiling kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, etcd"
go build -trimpath -ldflags "$ldflags" -o "$BIN/" \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler \
  k8s.io/kubernetes/cmd/kubectl \
  go.etcd.io/etcd/server/v3
mv -f "$BIN/server" "$BIN/etcd"  # the package path ends in server/v3; go names it "server"

log "compiling kwok $KWOK_VERSION"
GOBIN=$BIN GOFLAGS= go install -trimpath \
  -ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" \
  "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"

have_all || { log "error: build finished but some binaries are missing in $BIN"; exit 1; }
end=$(date +%s)
log "built in $((end - start)) s: $(cd "$BIN" && echo *)"
echo "$BIN"

# Sourced by the scripts that build Go test infrastructure from modules (hack/build-k8s.sh,
# bench/build-kueue.sh): the machine's Go toolchain only, module and build caches under $CACHE
# (shared, so modules both need are downloaded once), static binaries.
export GOTOOLCHAIN=local
export GOPATH=$CACHE/go
export GOMODCACHE=$CACHE/go/mod
export GOCACHE=$CACHE/go/build
export GOFLAGS=-mod=mod
export CGO_ENABLED=0

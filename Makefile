# rota — the two commands a newcomer needs are `make demo` and `make test`.
# Every target installs what is missing first (hack/install-deps.sh), then builds.
SHELL := /bin/bash
BUILD_DIR ?= build
PREFIX ?= /usr/local
export PATH := /usr/local/go/bin:$(PATH)

.PHONY: all deps build install image test unit-test soak demo bench cluster-up cluster-down cluster-status clean

all: build

deps:
	@hack/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD_DIR)

# rota and the kubectl plugin into $(PREFIX)/bin (default /usr/local/bin): `kubectl rota --help`
# works once that is on PATH (docs/kubectl-rota.md).
install: build
	@install -d $(DESTDIR)$(PREFIX)/bin
	@install -m 0755 $(BUILD_DIR)/bin/rota $(BUILD_DIR)/bin/kubectl-rota $(DESTDIR)$(PREFIX)/bin/
	@echo "installed rota and kubectl-rota in $(DESTDIR)$(PREFIX)/bin"

# The container image, an OCI archive: build/rota-image.tar (hack/image.sh).
image: build
	@hack/image.sh $(BUILD_DIR)

# Every test (unit and integration) against a real local control plane it starts and stops.
test: build
	@BUILD_DIR=$(BUILD_DIR) hack/run-tests.sh

# Unit tests only: no cluster.
unit-test: build
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -L unit

# The chaos soak: two replicas under faults for SOAK_DURATION (default 30m); SOAK_SEED replays one.
soak: build
	@BUILD_DIR=$(BUILD_DIR) hack/soak.sh

demo: build
	@hack/demo.sh

bench: build
	@bench/run.sh $(BUILD_DIR)

# The last line printed is `export KUBECONFIG=...`: eval "$$(make -s cluster-up | tail -n 1)"
cluster-up: deps
	@hack/cluster.sh up

cluster-down:
	@hack/cluster.sh down

cluster-status:
	@hack/cluster.sh status

clean:
	rm -rf $(BUILD_DIR)

#!/usr/bin/env bash
# Installs what building and testing rota needs, and only what is missing: Debian packages with
# apt-get (run `apt-get update` once, only when something must be installed). Go must already be
# on the machine (Debian's golang is too old to build Kubernetes 1.36).
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git curl ca-certificates openssl
  libcurl4-openssl-dev nlohmann-json3-dev libyaml-cpp-dev libspdlog-dev libboost-dev libssl-dev
  libjemalloc-dev libcli11-dev libsimdjson-dev libhowardhinnant-date-dev tzdata googletest libgtest-dev libgmock-dev libbenchmark-dev
  clang clang-format libclang-rt-14-dev python3 python3-yaml chromium
  mmdebstrap umoci prometheus gdb
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "[deps] installing: ${missing[*]}" >&2
  SUDO=""
  if [[ $(id -u) != 0 ]]; then
    command -v sudo >/dev/null || { echo "[deps] error: need root or sudo to apt-get install ${missing[*]}" >&2; exit 1; }
    SUDO=sudo
  fi
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

if ! command -v go >/dev/null; then
  for d in /usr/local/go/bin /usr/lib/go/bin; do [[ -x $d/go ]] && export PATH=$d:$PATH; done
fi
command -v go >/dev/null || { echo "[deps] error: Go is not installed; the local control plane is built from Go modules with it" >&2; exit 1; }
go_minor=$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')
if ((go_minor < 26)); then
  echo "[deps] error: $(go env GOVERSION) is too old: Kubernetes v1.36 needs Go 1.26 or newer" >&2
  exit 1
fi

# lizard (PyPI) measures the length of functions for hack/lint.sh.
if ! python3 -c 'import lizard' 2>/dev/null; then
  echo "[deps] installing: lizard (PyPI)" >&2
  python3 -m pip install --quiet lizard >&2 || { echo "[deps] error: cannot install lizard with pip" >&2; exit 1; }
fi

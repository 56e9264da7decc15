#!/usr/bin/env bash
# `make image`: rota's container image, built without a registry or a base image.
#
#   hack/image.sh [BUILD_DIR]    -> BUILD_DIR/rota-image.tar (an OCI image layout in a tar)
#
# The root file system holds only the Debian packages of the shared libraries rota links (found
# with ldd and dpkg) and tzdata (Budgets' time zones), extracted by mmdebstrap (no shell, no
# package manager), the stripped rota binary (and kubectl-rota when it is built), and a non-root
# user rota (65532). umoci makes the OCI image from it. The extracted packages are cached under
# ROTA_CACHE (default ~/.cache/rota), keyed by the package list, so a second build takes seconds.
#
# Load it with `podman load -i build/rota-image.tar` or `docker load -i build/rota-image.tar`
# (it is named rota:VERSION), or copy it to a registry with `skopeo copy oci-archive:...`.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "${1:-${BUILD_DIR:-$REPO/build}}" && pwd)
CACHE=${ROTA_CACHE:-$HOME/.cache/rota}/image
OUT=$BUILD/rota-image.tar
SUITE=${ROTA_IMAGE_SUITE:-bookworm}
UID_GID=65532

say() { echo "[image] $*" >&2; }
die() { say "error: $*"; exit 1; }

for tool in mmdebstrap umoci ldd dpkg objcopy; do
  command -v "$tool" >/dev/null || die "$tool is missing (hack/install-deps.sh installs it)"
done
[[ $(id -u) == 0 ]] || die "mmdebstrap's root mode and the image's file owners need root"
BINARIES=("$BUILD/bin/rota")
[[ -x ${BINARIES[0]} ]] || die "${BINARIES[0]} is not built (make build)"
[[ -x $BUILD/bin/kubectl-rota ]] && BINARIES+=("$BUILD/bin/kubectl-rota")
VERSION=$("${BINARIES[0]}" version | awk '{print $2}')

# The Debian package that owns each shared library the binaries load (usr-merged paths too).
owner() {
  local lib=$1 real
  real=$(readlink -f "$lib")
  dpkg -S "$lib" 2>/dev/null || dpkg -S "$real" 2>/dev/null || dpkg -S "${real#/usr}" 2>/dev/null ||
    die "no Debian package owns $lib"
}
packages=$(for b in "${BINARIES[@]}"; do ldd "$b" | awk '/=> \//{print $3}'; done | sort -u |
  while read -r lib; do owner "$lib" | head -n 1 | cut -d: -f1; done | sort -u | tr '\n' ',' | sed 's/,$//')
[[ -n $packages ]] || die "ldd found no shared libraries in ${BINARIES[*]}"
# Budgets' calendar windows read the time zone database (/usr/share/zoneinfo).
packages="$packages,tzdata"

mkdir -p "$CACHE"
key=$(printf '%s %s' "$SUITE" "$packages" | sha256sum | cut -c1-16)
rootfs_tar=$CACHE/rootfs-$key.tar
if [[ ! -s $rootfs_tar ]]; then
  say "extracting $packages from Debian $SUITE"
  mmdebstrap --quiet --variant=extract --mode=root --format=tar --include="$packages" \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/lintian/*' \
    "$SUITE" "$rootfs_tar.part" >&2
  mv "$rootfs_tar.part" "$rootfs_tar"
fi

work=$(mktemp -d "$BUILD/image.XXXXXX")
trap 'rm -rf "$work"' EXIT
umoci init --layout "$work/layout"
umoci new --image "$work/layout:$VERSION"
umoci unpack --image "$work/layout:$VERSION" "$work/bundle" >/dev/null
root=$work/bundle/rootfs
tar -xf "$rootfs_tar" -C "$root"
rm -rf "$root/var/cache/apt" "$root/var/lib/apt" "$root/var/lib/dpkg" "$root/var/log"/*
mkdir -p "$root/etc" "$root/tmp" "$root/home/rota" "$root/usr/bin"
for b in "${BINARIES[@]}"; do
  objcopy --strip-debug "$b" "$root/usr/bin/$(basename "$b")"
done
chmod 1777 "$root/tmp"
chown "$UID_GID:$UID_GID" "$root/home/rota"
printf 'root:x:0:0:root:/root:/sbin/nologin\nrota:x:%s:%s:rota:/home/rota:/sbin/nologin\n' "$UID_GID" "$UID_GID" \
  >"$root/etc/passwd"
printf 'root:x:0:\nrota:x:%s:\n' "$UID_GID" >"$root/etc/group"
umoci repack --image "$work/layout:$VERSION" "$work/bundle" >/dev/null
umoci config --image "$work/layout:$VERSION" \
  --config.user "$UID_GID:$UID_GID" --config.entrypoint /usr/bin/rota --config.cmd run \
  --config.workingdir /home/rota --config.env PATH=/usr/bin \
  --config.label "org.opencontainers.image.title=rota" \
  --config.label "org.opencontainers.image.version=$VERSION" \
  --config.label "org.opencontainers.image.source=https://github.com/rota-dev/rota" \
  --config.label "org.opencontainers.image.description=Batch-queue controller for shared GPU clusters (Kueue's API)"
umoci gc --layout "$work/layout"
# docker load and containerd name the image from this annotation; podman from ref.name.
python3 - "$work/layout/index.json" "rota:$VERSION" <<'EOF'
import json, sys
path, name = sys.argv[1], sys.argv[2]
index = json.load(open(path))
for m in index["manifests"]:
    m.setdefault("annotations", {})["io.containerd.image.name"] = "docker.io/library/" + name
json.dump(index, open(path, "w"))
EOF
tar --sort=name --owner=0 --group=0 --numeric-owner -C "$work/layout" -cf "$OUT.part" .
mv "$OUT.part" "$OUT"
say "$OUT: rota:$VERSION, $(du -h "$OUT" | cut -f1) ($packages)"

#!/usr/bin/env bash
# The image is complete and safe to run: unpacked as a runtime would, its entrypoint runs from its
# own root file system (chroot, nothing from the host) as the non-root user its config names, and
# it holds no shell or package manager.
#   tests/image/rootfs_test.sh BUILD_DIR
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/unpack.sh"
BUILD=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

unpack_image "$BUILD/rota-image.tar" "$work"
root=$work/bundle/rootfs
config=$work/bundle/config.json
user=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["process"]; print("%d:%d" % (p["user"]["uid"], p["user"]["gid"]))' "$config")
args=$(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["process"]["args"]))' "$config")
[[ $user != 0:* ]] || fail "the image runs as root ($user)"
[[ $args == "/usr/bin/rota run" ]] || fail "entrypoint and command are '$args', not '/usr/bin/rota run'"
for f in bin/sh usr/bin/sh usr/bin/dpkg usr/bin/apt; do
  [[ ! -e $root/$f ]] || fail "the image holds /$f"
done

out=$(env -i "$(command -v chroot)" --userspec="$user" "$root" /usr/bin/rota version) || fail "rota version failed in the image: $out"
want=$("$BUILD/bin/rota" version)
[[ $out == "$want" ]] || fail "the image's rota says '$out', the build's '$want'"
# Every library rota loads resolves inside the image (ldd's loader, run in the chroot).
missing=$(env -i "$(command -v chroot)" "$root" /lib64/ld-linux-x86-64.so.2 --list /usr/bin/rota | grep 'not found' || true)
[[ -z $missing ]] || fail "libraries missing from the image: $missing"
# Budgets' calendar windows need the time zone database.
[[ -f $root/usr/share/zoneinfo/Europe/Berlin ]] || fail "the image has no time zone database"
echo "ok: $out runs as $user from the image's own root file system ($(du -sh "$root" | cut -f1))"

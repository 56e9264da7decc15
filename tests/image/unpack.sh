# Sourced by the image tests: unpack_image IMAGE_TAR DIR unpacks the OCI archive's only image
# into DIR/bundle (DIR/bundle/rootfs, DIR/bundle/config.json) with umoci, as a runtime would.
unpack_image() {
  local tar=$1 dir=$2 tag
  [[ -s $tar ]] || { echo "FAIL: $tar is missing (make image)" >&2; return 1; }
  mkdir -p "$dir/layout"
  tar -xf "$tar" -C "$dir/layout"
  tag=$(umoci list --layout "$dir/layout" | head -n 1)
  [[ -n $tag ]] || { echo "FAIL: $tar holds no tagged image" >&2; return 1; }
  umoci unpack --image "$dir/layout:$tag" "$dir/bundle" >/dev/null
}

#!/usr/bin/env bash
# Style checks, run by `make test` (ctest lint.format and lint.length):
#
#   hack/lint.sh format   every C++ source is as clang-format formats it (.clang-format)
#   hack/lint.sh length   no function over 100 logical lines in controller/, apiclient/ and replay/, nor
#                         over 150 in admission/ (lizard, from PyPI)
#   hack/lint.sh fix      reformat every C++ source in place
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"

sources() { git ls-files '*.cc' '*.h'; }

case ${1:-} in
  format)
    command -v clang-format >/dev/null || { echo "lint: clang-format is missing (make deps)" >&2; exit 1; }
    bad=()
    while read -r f; do
      clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
    done < <(sources)
    if ((${#bad[@]})); then
      echo "lint: not formatted as .clang-format says (hack/lint.sh fix): ${bad[*]}" >&2
      exit 1
    fi
    echo "lint: $(sources | wc -l) C++ sources formatted"
    ;;
  length)
    python3 -c 'import lizard' 2>/dev/null || python3 -m pip install --quiet lizard >&2
    # -C and -L high: only the logical-line count (NLOC) is checked here.
    python3 -m lizard -l cpp -w -C 100000 -L 100000 -T nloc=100 controller apiclient replay
    python3 -m lizard -l cpp -w -C 100000 -L 100000 -T nloc=150 admission
    echo "lint: no function over 100 logical lines in controller/, apiclient/ and replay/, nor over 150 in admission/"
    ;;
  fix)
    sources | xargs clang-format -i
    ;;
  *)
    echo "usage: hack/lint.sh format|length|fix" >&2
    exit 2
    ;;
esac

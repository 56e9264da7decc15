#!/usr/bin/env bash
# Builds the AdmissionReview fuzz target with Debian's clang (libFuzzer, AddressSanitizer,
# UndefinedBehaviorSanitizer) and runs it for a bounded time from the seed corpus; any crash,
# leak or sanitizer report fails. `make test` runs it (FUZZ_SECONDS, default 30).
#
#   tests/fuzz/run.sh [OUT_DIR]
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${1:-$REPO/build/fuzz}
SECONDS_TO_RUN=${FUZZ_SECONDS:-30}
CXX=${FUZZ_CXX:-$(command -v clang++ || command -v clang++-14 || true)}
[[ -n $CXX ]] || { echo "fuzz: clang++ is not installed (hack/install-deps.sh installs it)" >&2; exit 1; }
mkdir -p "$OUT/corpus"
src=$REPO/controller/webhook
"$CXX" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$src" -I"$REPO/admission/include" \
  "$REPO/tests/fuzz/admission_review_fuzz.cc" "$src/admission_review.cc" "$src/webhooks.cc" \
  "$REPO/admission/quantity.cc" -lcrypto -o "$OUT/admission_review_fuzz"
cp -n "$REPO"/tests/fuzz/corpus/* "$OUT/corpus/" 2>/dev/null || true
# -rss_limit_mb: a parser that balloons is a bug too. The working corpus grows in OUT/corpus.
"$OUT/admission_review_fuzz" -max_total_time="$SECONDS_TO_RUN" -rss_limit_mb=1024 -max_len=65536 \
  -print_final_stats=1 "$OUT/corpus" 2>&1 | tail -n 15

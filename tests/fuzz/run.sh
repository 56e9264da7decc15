#!/usr/bin/env bash
# Builds rota's fuzz targets with Debian's clang (libFuzzer, AddressSanitizer,
# UndefinedBehaviorSanitizer) and runs each for a bounded time from its seed corpus; any crash,
# leak, sanitizer report or memory blow-up fails. `make test` runs it (FUZZ_SECONDS per target,
# default 30).
#
#   tests/fuzz/run.sh [OUT_DIR]
#   FUZZ_TARGETS="admission_review parsers"   which targets (default: both)
#
# Targets: admission_review (the AdmissionReview parser and every webhook rule; seeds in
# corpus/) and parsers (simulate's YAML, the run config, kubeconfig, the cache's decoding of
# listed and watched objects, quantities; seeds in corpus-parsers/). An input that fails is
# written to OUT_DIR as crash-*, leak-*, oom-* or timeout-*; run OUT_DIR/NAME on it to reproduce.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${1:-$REPO/build/fuzz}
SECONDS_TO_RUN=${FUZZ_SECONDS:-30}
CXX=${FUZZ_CXX:-$(command -v clang++ || command -v clang++-14 || true)}
[[ -n $CXX ]] || { echo "fuzz: clang++ is not installed (hack/install-deps.sh installs it)" >&2; exit 1; }
FLAGS=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)

# fuzz NAME SEED_DIR -- COMPILER ARGUMENTS...: build OUT/NAME, then run it from OUT/NAME-corpus
# (the working corpus, which grows there) seeded from SEED_DIR.
fuzz() {
  local name=$1 seeds=$2
  shift 3
  "$CXX" "${FLAGS[@]}" "$@" -o "$OUT/$name"
  mkdir -p "$OUT/$name-corpus"
  cp -n "$seeds"/* "$OUT/$name-corpus/" 2>/dev/null || true
  echo "fuzz: $name for ${SECONDS_TO_RUN}s"
  # -rss_limit_mb and -timeout: a parser that balloons or stalls (10 s on one input) is a bug too.
  "$OUT/$name" -max_total_time="$SECONDS_TO_RUN" -rss_limit_mb=1024 -timeout=10 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$OUT/" "$OUT/$name-corpus" 2>&1 | tail -n 15
  return "${PIPESTATUS[0]}"
}

TARGETS=${FUZZ_TARGETS:-admission_review parsers}
# Without allocation stacks: before it writes the input, libFuzzer's out-of-memory report profiles
# the heap by allocation stack, which over millions of chunks does not end in any useful time (the
# process sits stopped, in state "tl"). Reports lose the allocation and free stacks; running the
# written input by hand shows them.
export ASAN_OPTIONS=malloc_context_size=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}
mkdir -p "$OUT"
webhook=$REPO/controller/webhook
wants() { [[ " $TARGETS " == *" $1 "* ]]; }

if wants admission_review; then
  fuzz admission_review "$REPO/tests/fuzz/corpus" -- \
  -I"$webhook" -I"$REPO/controller" -I"$REPO/admission/include" -I"$REPO/crds/include" \
  -DONLY_C_LOCALE=1 -DHAS_STRING_VIEW=1 -DUSE_OS_TZDB=1 \
  "$REPO/tests/fuzz/admission_review_fuzz.cc" "$webhook/admission_review.cc" "$webhook/webhooks.cc" \
  "$REPO/controller/budget/window.cc" "$REPO/crds/budget.cc" \
  "$REPO/crds/api.cc" "$REPO/crds/checkpoint.cc" "$REPO/crds/snapshot.cc" "$REPO/admission/engine.cc" \
  "$REPO/admission/lost_work.cc" "$REPO/admission/quantity.cc" "$REPO/admission/quota_tree.cc" -lcrypto -ldate-tz
fi

if wants parsers; then
  fuzz parsers "$REPO/tests/fuzz/corpus-parsers" -- \
  -I"$REPO/controller" -I"$REPO/admission/include" -I"$REPO/crds/include" -I"$REPO/apiclient/include" \
  -I"$REPO/apiclient" -DONLY_C_LOCALE=1 -DHAS_STRING_VIEW=1 -DUSE_OS_TZDB=1 \
  "$REPO/tests/fuzz/parsers_fuzz.cc" "$REPO/controller/simulate.cc" "$REPO/controller/yaml_json.cc" \
  "$REPO/controller/budget/window.cc" "$REPO/controller/budget/ledger.cc" "$REPO/controller/budget/gates.cc" \
  "$REPO/crds/budget.cc" \
  "$REPO/controller/run_config.cc" "$REPO/controller/cache/compact_workload.cc" "$REPO/apiclient/config.cc" \
  "$REPO/apiclient/base64.cc" "$REPO/crds/api.cc" "$REPO/crds/checkpoint.cc" "$REPO/crds/snapshot.cc" \
  "$REPO/admission/engine.cc" "$REPO/admission/lost_work.cc" "$REPO/admission/quantity.cc" \
  "$REPO/admission/quota_tree.cc" -lyaml-cpp -lcrypto -ldate-tz
fi

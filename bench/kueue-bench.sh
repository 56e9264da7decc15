#!/usr/bin/env bash
# Kueue's own scheduler benchmark (sigs.k8s.io/kueue test/performance/scheduler), run unchanged
# against rota and against Kueue's minimalkueue, one after the other on this machine. The runner
# starts its own etcd + kube-apiserver (ours, from hack/build-k8s.sh, as KUBEBUILDER_ASSETS),
# creates the scenario's queues and workloads, finishes admitted ones after their run time,
# records time to admission and queue usage, and measures the controller process.
#
#   bench/kueue-bench.sh [SCENARIO...]     baseline, large-scale (default: both) or smoke
#   BENCH_CONTROLLERS="rota kueue"         which controllers to run (default: both)
#   BENCH_OUT=DIR                          results (default: build/bench); one JSON per scenario
#   --check                                exit non-zero unless every workload was admitted and
#                                          finished under each controller (the smoke test)
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${BENCH_OUT:-$REPO/build/bench}
CONTROLLERS=${BENCH_CONTROLLERS:-rota kueue}
check=0
scenarios=()
for a in "$@"; do
  case $a in
    --check) check=1 ;;
    baseline|large-scale|smoke) scenarios+=("$a") ;;
    *) echo "kueue-bench: unknown scenario \"$a\" (use baseline, large-scale or smoke)" >&2; exit 2 ;;
  esac
done
((${#scenarios[@]})) || scenarios=(baseline large-scale)

log() { printf '[kueue-bench] %s\n' "$*" >&2; }
K8S_BIN=$("$REPO/hack/build-k8s.sh" | tail -n 1)
KUEUE=$("$REPO/bench/build-kueue.sh" | tail -n 1)
[[ -x $REPO/build/bin/rota ]] || { log "error: build rota first (make build)"; exit 1; }

for scenario in "${scenarios[@]}"; do
  case $scenario in
    smoke) config=$REPO/bench/kueue/smoke-generator.yaml; timeout=5m ;;
    baseline) config=$KUEUE/configs/baseline/generator.yaml; timeout=30m ;;
    large-scale) config=$KUEUE/configs/large-scale/generator.yaml; timeout=90m ;;
  esac
  for controller in $CONTROLLERS; do
    case $controller in
      rota) exe=$REPO/bench/kueue/rota-controller.sh; crds=$REPO/crds ;;
      kueue) exe=$KUEUE/bin/minimalkueue; crds=$KUEUE/crds ;;
      *) log "error: unknown controller \"$controller\" (use rota or kueue)"; exit 2 ;;
    esac
    dir=$OUT/kueue/$scenario/$controller
    rm -rf "$dir" && mkdir -p "$dir"
    log "$scenario: running $controller (runner output in $dir/runner.log)"
    start=$(date +%s)
    # PROJECT_DIR: Kueue's test utilities look for the project's Makefile without it.
    if ! PROJECT_DIR=$KUEUE/Makefile KUBEBUILDER_ASSETS=$K8S_BIN ROTA_BIN=$REPO/build/bin/rota \
        "$KUEUE/bin/runner" --minimalKueue "$exe" --crds "$crds" --generatorConfig "$config" \
        --timeout "$timeout" --o "$dir" >"$dir/runner.log" 2>&1; then
      log "$scenario/$controller: the runner failed; last lines of $dir/runner.log:"
      tail -n 20 "$dir/runner.log" >&2
      exit 1
    fi
    log "$scenario: $controller done in $(( $(date +%s) - start )) s"
  done
  python3 "$REPO/bench/kueue/report.py" --scenario "$scenario" --config "$config" --out "$OUT" \
    $( ((check)) && echo --check ) $CONTROLLERS
done

#!/usr/bin/env bash
# Kueue's own scheduler benchmark (sigs.k8s.io/kueue test/performance/scheduler), run unchanged
# against rota and against Kueue's minimalkueue, one after the other on this machine. The runner
# starts its own etcd + kube-apiserver (ours, from hack/build-k8s.sh, as KUBEBUILDER_ASSETS),
# creates the scenario's queues and workloads, finishes admitted ones after their run time,
# records time to admission and queue usage, and measures the controller process.
#
#   bench/kueue-bench.sh [SCENARIO...]     baseline, large-scale (default: both), tenfold (ten
#                                          times the baseline: bench/kueue/tenfold-generator.yaml)
#                                          or smoke
#   BENCH_CONTROLLERS="rota kueue"         which controllers to run (default: both)
#   BENCH_OUT=DIR                          results (default: build/bench); one JSON per scenario
#   ROTA_BIN=PATH                          the rota binary (default: build/bin/rota)
#   ROTA_EXTRA_CONFIG=YAML                 lines added to rota's config file, to measure a setting:
#                                          'scheduling: {batchPeriod: 300ms}'
#   BENCH_RUNNER_TRACE=1                   the runner logs each reconcile of the workloads it
#                                          finishes (a line or two per workload in runner.log),
#                                          from which the table reports how fast it can finish them
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
    baseline|large-scale|tenfold|smoke) scenarios+=("$a") ;;
    *) echo "kueue-bench: unknown scenario \"$a\" (use baseline, large-scale, tenfold or smoke)" >&2; exit 2 ;;
  esac
done
((${#scenarios[@]})) || scenarios=(baseline large-scale)

log() { printf '[kueue-bench] %s\n' "$*" >&2; }
K8S_BIN=$("$REPO/hack/build-k8s.sh" | tail -n 1)
KUEUE=$("$REPO/bench/build-kueue.sh" | tail -n 1)
ROTA_BIN=${ROTA_BIN:-$REPO/build/bin/rota}
[[ -x $ROTA_BIN ]] || { log "error: build rota first (make build)"; exit 1; }

for scenario in "${scenarios[@]}"; do
  case $scenario in
    smoke) config=$REPO/bench/kueue/smoke-generator.yaml; timeout=5m ;;
    baseline) config=$KUEUE/configs/baseline/generator.yaml; timeout=30m ;;
    large-scale) config=$KUEUE/configs/large-scale/generator.yaml; timeout=90m ;;
    tenfold) config=$REPO/bench/kueue/tenfold-generator.yaml; timeout=90m ;;
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
    # The runner in a session of its own (envtest gives etcd and the apiserver process groups of
    # their own, but they stay in the session), so that if it dies (or this script is stopped) its
    # etcd, kube-apiserver and controller go with it instead of lingering and skewing later runs.
    PROJECT_DIR=$KUEUE/Makefile KUBEBUILDER_ASSETS=$K8S_BIN ROTA_BIN=$ROTA_BIN \
      setsid "$KUEUE/bin/runner" --minimalKueue "$exe" --crds "$crds" --generatorConfig "$config" \
      --timeout "$timeout" --o "$dir" ${BENCH_RUNNER_TRACE:+--zap-log-level=5} >"$dir/runner.log" 2>&1 &
    runner=$!
    trap 'pkill -s $runner 2>/dev/null || true' EXIT INT TERM
    # Where the time goes: the CPU time of the runner itself (its workload generator and
    # finisher share the machine) and of its kube-apiserver and etcd, and the apiserver's request
    # counters and the sum and count of its request latencies, sampled until the runner stops
    # them. BENCH_APISERVER_PROFILE=N also takes an N-second CPU profile of the apiserver (pprof)
    # a minute into the run.
    (
      if [[ -n ${BENCH_APISERVER_PROFILE:-} ]]; then
        (sleep 60 && "$K8S_BIN/kubectl" --kubeconfig "$dir/kubeconfig" get --raw \
           "/debug/pprof/profile?seconds=$BENCH_APISERVER_PROFILE" >"$dir/kube-apiserver.pprof" 2>/dev/null) &
      fi
      # The work evictions throw away, watched from outside the controller (kueue/lost_work.py)
      # from as soon as the runner's apiserver is up.
      while kill -0 $runner 2>/dev/null && [[ ! -f $dir/kubeconfig ]]; do sleep 0.2; done
      watcher=
      if [[ -f $dir/kubeconfig ]]; then
        KUBECTL=$K8S_BIN/kubectl python3 "$REPO/bench/kueue/lost_work.py" "$dir/kubeconfig" "$dir/lost-work.json" &
        watcher=$!
      fi
      while kill -0 $runner 2>/dev/null; do
        awk '{print "runner", ($14 + $15) / 100}' "/proc/$runner/stat" 2>/dev/null >"$dir/runner.cpu.tmp" &&
          mv "$dir/runner.cpu.tmp" "$dir/runner.cpu"
        for c in kube-apiserver etcd; do
          for p in $(pgrep -s $runner -x "$c"); do
            awk -v c="$c" '{print c, ($14 + $15) / 100}' "/proc/$p/stat" 2>/dev/null >"$dir/$c.cpu.tmp" &&
              mv "$dir/$c.cpu.tmp" "$dir/$c.cpu"
          done
        done
        if [[ -f $dir/kubeconfig ]] && "$K8S_BIN/kubectl" --kubeconfig "$dir/kubeconfig" get --raw /metrics \
            2>/dev/null | grep -E '^apiserver_request_(total|duration_seconds_(sum|count))\{' >"$dir/apiserver.requests.tmp"; then
          mv "$dir/apiserver.requests.tmp" "$dir/apiserver.requests"
        fi
        sleep 10
      done
      [[ -z $watcher ]] || kill $watcher 2>/dev/null || true
    ) &
    if ! wait $runner; then
      pkill -s $runner 2>/dev/null || true
      log "$scenario/$controller: the runner failed; last lines of $dir/runner.log:"
      tail -n 20 "$dir/runner.log" >&2
      exit 1
    fi
    pkill -s $runner 2>/dev/null || true  # anything the runner left behind
    trap - EXIT INT TERM
    log "$scenario: $controller done in $(( $(date +%s) - start )) s"
  done
  python3 "$REPO/bench/kueue/report.py" --scenario "$scenario" --config "$config" --out "$OUT" \
    $( ((check)) && echo --check ) $CONTROLLERS
done

#!/usr/bin/env bash
# The "controller under test" for Kueue's scheduler benchmark runner: the runner starts
# `PATH --kubeconfig FILE [--metricsPort N] [--zap-log-level=N] ...` as if it were minimalkueue.
# This runs `rota run` against that kubeconfig instead, serving /metrics on the port the runner
# scrapes (if any) and no health port; everything else is rota's default configuration, unless
# ROTA_EXTRA_CONFIG adds lines to it (a setting to measure: 'scheduling: {batchPeriod: 300ms}').
# Flags rota has no use for (profiles, log levels, TAS) are accepted and ignored. `exec` keeps the
# process the runner measures (wall, CPU, max RSS) rota's.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rota=${ROTA_BIN:-$here/../../build/bin/rota}
kubeconfig="" metrics_port=0
while (($#)); do
  case $1 in
    --kubeconfig) kubeconfig=$2; shift 2 ;;
    --kubeconfig=*) kubeconfig=${1#*=}; shift ;;
    --metricsPort) metrics_port=$2; shift 2 ;;
    --metricsPort=*) metrics_port=${1#*=}; shift ;;
    --cpuprofile|--memprofile) shift 2 ;;
    *) shift ;;
  esac
done
[[ -n $kubeconfig ]] || { echo "rota-controller.sh: --kubeconfig is required" >&2; exit 2; }
config=$(mktemp "${TMPDIR:-/tmp}/rota-bench-XXXXXX.yaml")
metrics='"0"'; ((metrics_port)) && metrics="\"127.0.0.1:$metrics_port\""
cat > "$config" <<YAML
metrics: {bindAddress: $metrics}
health: {bindAddress: "0"}
logging: {level: ${ROTA_LOG_LEVEL:-info}}
${ROTA_EXTRA_CONFIG:-}
YAML
# rota's log goes next to the runner's output (the kubeconfig's directory), at info level.
exec "$rota" run --kubeconfig "$kubeconfig" --config "$config" 2>>"$(dirname "$kubeconfig")/rota.log"

#!/usr/bin/env bash
# The ops side against real parts: a real Prometheus (Debian's) scrapes a live rota over secure
# serving (HTTPS, a bearer token of a ServiceAccount bound to rota-metrics-reader) while Jobs
# are admitted, wait, and are preempted after a checkpoint request; it evaluates
# config/prometheus/rota-rules.yaml. Then every query of config/grafana/rota-dashboard.json must
# return data, every series the rules select must exist, and promtool must accept the rules and
# rota's exposition.
#   tests/prometheus/prometheus_test.sh BUILD_DIR REPO    (KUBECONFIG: the local control plane)
set -euo pipefail
BUILD=$1 REPO=$2
source "$REPO/tests/support/kueue_objects.sh"
NS=rota-prom-test-$$
work=$(mktemp -d)
pids=()
fail() {
  echo "FAIL: $*" >&2
  for f in rota.log prometheus.log; do
    [[ -f $work/$f ]] && { echo "--- $f (last 20 lines)" >&2; tail -n 20 "$work/$f" >&2; }
  done
  exit 1
}
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  delete_queue "$NS" "$NS"
  kubectl delete clusterrolebinding "$NS-scraper" --ignore-not-found >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() {  # wait_for SECONDS WHAT COMMAND...
  local limit=$1 what=$2
  shift 2
  for ((i = 0; i < limit * 2; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  fail "$what did not happen within ${limit}s"
}

kubectl get configmap rota-local-control-plane -n kube-system >/dev/null 2>&1 ||
  fail "refusing to run against a cluster that is not hack/cluster.sh's local control plane"
command -v prometheus >/dev/null && command -v promtool >/dev/null || fail "prometheus and promtool are missing (make deps)"
install_crds "$REPO"
kubectl create namespace rota-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl apply -k "$REPO/config/rbac" >/dev/null

make_queue "$NS" "$NS" 2
kubectl create serviceaccount -n "$NS" scraper >/dev/null
kubectl create clusterrolebinding "$NS-scraper" --clusterrole rota-metrics-reader --serviceaccount "$NS:scraper" >/dev/null
kubectl create token -n "$NS" scraper --duration 1h >"$work/token"

cat >"$work/rota.yaml" <<YAML
metrics: {bindAddress: "127.0.0.1:0", secureServing: true}
health: {bindAddress: "0"}
YAML
"$BUILD/bin/rota" run --config "$work/rota.yaml" >"$work/rota.log" 2>&1 &
pids+=($!)
metrics_port() { sed -n 's/.*serving \/metrics over HTTPS on port \([0-9]*\).*/\1/p' "$work/rota.log" | grep .; }
wait_for 30 "rota serving /metrics" metrics_port
port=$(metrics_port)

prom_port=$(free_port)
cat >"$work/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [$REPO/config/prometheus/rota-rules.yaml]
scrape_configs:
- job_name: rota
  scheme: https
  tls_config: {insecure_skip_verify: true}   # rota's own certificate (no certFile given)
  authorization: {credentials_file: $work/token}
  static_configs: [{targets: ["127.0.0.1:$port"]}]
YAML
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" >"$work/prometheus.log" 2>&1 &
pids+=($!)
scraped() { curl -sf "http://127.0.0.1:$prom_port/api/v1/query?query=up%7Bjob%3D%22rota%22%7D%3D%3D1" | grep -q '"value"'; }
wait_for 60 "Prometheus scraping rota over HTTPS with the reader's token" scraped

job() { submit_job "$NS" "$NS" "$@"; }  # job NAME PRIORITY CPU
job low-1 low 1
job low-2 low 1
job low-3 low 1
sleep 3
job high high 2
suspended_low() { [[ $(kubectl get job -n "$NS" low-1 -o jsonpath='{.spec.suspend}') == true ]]; }
wait_for 60 "the preemption of the low-priority Jobs" suspended_low

"$REPO/tests/prometheus/check_queries.py" --prometheus "http://127.0.0.1:$prom_port" \
  --dashboard "$REPO/config/grafana/rota-dashboard.json" --rules "$REPO/config/prometheus/rota-rules.yaml" \
  --wait 90 || fail "dashboard queries or rule series without data (above)"
promtool check rules "$REPO/config/prometheus/rota-rules.yaml" >/dev/null || fail "promtool check rules"
curl -sk -H "Authorization: Bearer $(cat "$work/token")" "https://127.0.0.1:$port/metrics" >"$work/metrics.txt"
promtool check metrics <"$work/metrics.txt" || fail "promtool check metrics found problems in rota's /metrics"
"$REPO/hack/prometheusrule.sh" --check || fail "config/prometheus/prometheusrule.yaml is out of date"
echo "ok: Prometheus scraped rota over HTTPS; every dashboard query and rule series has data; promtool passes"

#!/usr/bin/env bash
# GPU-hour budgets on the local control plane (docs/budgets.md). A team with a Budget of 0.01
# GPU-hours (36 GPU-seconds) in a rolling 2-minute window runs a 2-GPU Job for 30 s; rota is
# killed with SIGKILL while it runs and started again. Then:
# - the Budget's status shows the GPU-hours the Job held, within one sync period of the truth
#   (from its Workload's QuotaReserved and Finished times), Exhausted=True, an Event, and the
#   rota_budget_* metrics;
# - the team's next Job waits with reason BudgetExhausted and a message naming the budget;
# - once the usage leaves the window, the Job is admitted and Exhausted turns False.
# An invalid Budget is refused by the apiserver with the field named.
# With stopRunning, a Job running when the budget is used up is evicted and suspended.
#   tests/budget/budget_test.sh BUILD_DIR REPO    (KUBECONFIG: the local control plane)
set -euo pipefail
BUILD=$1
REPO=$2
work=$(mktemp -d)
ns=bud-$$
cq=bud-$$
fail() {
  echo "FAIL: $*" >&2
  [[ -f $work/rota.log ]] && tail -n 40 "$work/rota.log" >&2
  exit 1
}
# shellcheck source=../support/kueue_objects.sh
source "$REPO/tests/support/kueue_objects.sh"
kubectl get configmap rota-local-control-plane -n kube-system >/dev/null 2>&1 ||
  fail "refusing to run against a cluster that is not hack/cluster.sh's local control plane"
cleanup() {
  [[ -n ${rota_pid:-} ]] && kill "$rota_pid" 2>/dev/null && wait "$rota_pid" 2>/dev/null
  kubectl delete budget "$cq" "$cq-bad" --ignore-not-found >/dev/null 2>&1 || true
  delete_queue "$cq" "$ns"
  rm -rf "$work"
}
trap cleanup EXIT
install_crds "$REPO"
port=$(free_port)
printf 'metrics: {bindAddress: "127.0.0.1:%s"}\nhealth: {bindAddress: "0"}\nbudgets: {syncPeriod: 2s}\n' "$port" \
  >"$work/rota.yaml"
start_rota() {
  "$BUILD/bin/rota" run --kubeconfig "$KUBECONFIG" --config "$work/rota.yaml" 2>>"$work/rota.log" &
  rota_pid=$!
}
start_rota

kubectl create namespace "$ns" >/dev/null
kubectl apply -f - >/dev/null <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: $cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: $cq}
spec:
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: $ns}}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: $cq
      resources: [{name: nvidia.com/gpu, nominalQuota: 4}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: main, namespace: $ns}
spec: {clusterQueue: $cq}
---
apiVersion: rota.dev/v1alpha1
kind: Budget
metadata: {name: $cq}
spec:
  clusterQueue: $cq
  window: {rolling: 2m}
  limits: [{resource: nvidia.com/gpu, hours: "0.01"}]
  warnAt: 50
YAML

# The apiserver refuses a Budget that names both scopes, saying which field.
bad=$(kubectl apply -f - 2>&1 <<YAML || true
apiVersion: rota.dev/v1alpha1
kind: Budget
metadata: {name: $cq-bad}
spec:
  clusterQueue: $cq
  cohort: research
  window: {rolling: 2m}
  limits: [{resource: nvidia.com/gpu, hours: 1}]
YAML
)
[[ $bad == *"name exactly one of clusterQueue and cohort"* ]] || fail "an invalid Budget was not refused: $bad"

budget() { kubectl get budget "$cq" -o json; }

timed_job "$ns" first main 30 "{limits: {nvidia.com/gpu: \"2\"}}"
wait_for 60 "Job first did not start" job_started "$ns" first
sleep 10
kill -9 "$rota_pid"
wait "$rota_pid" 2>/dev/null || true
start_rota
# While the Job runs, rota writes the Budget's status once a sync period (2 s), not again on
# seeing its own write: 5 s of watching sees the listing and two or three writes, not dozens.
sleep 2
writes=$( (timeout 5 kubectl get budget "$cq" -w --output-watch-events -o name || true) | wc -l)
((writes >= 3 && writes <= 6)) || fail "the Budget's status was written $((writes - 1)) times in 5 s (sync period 2 s)"
wait_for 60 "Job first did not finish" \
  bash -c "[[ \$(kubectl get job -n $ns first -o jsonpath='{.status.succeeded}') == 1 ]]"
exhausted() { budget | python3 -c '
import json, sys
c = {x["type"]: x for x in json.load(sys.stdin)["status"]["conditions"]}
sys.exit(0 if c["Exhausted"]["status"] == sys.argv[1] else 1)' "$1"; }
wait_for 30 "the Budget is not Exhausted" exhausted True
# Its usage, once the Workload has finished and a sync has charged up to then.
wait_for 30 "the Workload of Job first did not finish" \
  bash -c "kubectl get workloads -n $ns -o json | grep -q '\"Finished\"'"
sleep 4
kubectl get workloads -n "$ns" -o json >"$work/workloads.json"
budget >"$work/budget.json"
python3 - "$work/workloads.json" "$work/budget.json" <<'PY' || fail "the Budget's usage: $(cat "$work/budget.json")"
import datetime, json, sys
def t(s): return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
w = json.load(open(sys.argv[1]))["items"][0]
c = {x["type"]: x for x in w["status"]["conditions"]}
truth = 2 * (t(c["Finished"]["lastTransitionTime"]) - t(c["QuotaReserved"]["lastTransitionTime"])) / 3600
b = json.load(open(sys.argv[2]))
used = float(b["status"]["used"][0]["hours"])
# Within one sync period (2 s) of 2 GPUs, and the seconds the times are rounded to.
assert abs(used - truth) <= 2 * 4 / 3600, (used, truth)
assert b["status"]["percentUsed"] >= 100, b["status"]
assert b["status"]["buckets"], b["status"]
print(f"used {used:.5f} GPU-hours, truth {truth:.5f}")
PY
kubectl get events --field-selector involvedObject.name="$cq",reason=BudgetExhausted -o name | grep -q . ||
  fail "no BudgetExhausted Event on the Budget"
curl -sf "http://127.0.0.1:$port/metrics" >"$work/metrics.txt"
grep -q "^rota_budget_exhausted{budget=\"$cq\"} 1" "$work/metrics.txt" || fail "metrics: $(grep rota_budget "$work/metrics.txt")"
grep -q "^rota_budget_limit_hours{budget=\"$cq\",resource=\"nvidia.com/gpu\"} 0.01" "$work/metrics.txt" ||
  fail "metrics: $(grep rota_budget "$work/metrics.txt")"
kubectl get budgets | grep -q "^$cq " || fail "kubectl get budgets does not list it"

# The next Job waits, saying why, until the usage leaves the 2-minute window.
timed_job "$ns" second main 3 "{limits: {nvidia.com/gpu: \"1\"}}"
pending_reason() {
  kubectl get workloads -n "$ns" -o json | python3 -c '
import json, sys
for w in json.load(sys.stdin)["items"]:
    if w["metadata"]["ownerReferences"][0]["name"] != "second": continue
    c = {x["type"]: x for x in w.get("status", {}).get("conditions", [])}
    q = c.get("QuotaReserved", {})
    print(q.get("reason", ""), "|", q.get("message", ""))'
}
wait_for 30 "Job second is not pending with reason BudgetExhausted" \
  bash -c "kubectl get workloads -n $ns -o json | grep -q 'used all 0.01 GPU-hours of Budget $cq'"
reason=$(pending_reason)
[[ $reason == "BudgetExhausted | ClusterQueue $cq used all 0.01 GPU-hours of Budget $cq in the last 2m; usage starts to expire at "* ]] ||
  fail "Job second's pending reason: $reason"
job_started "$ns" second && fail "Job second started while the budget was exhausted"
wait_for 180 "Job second did not start once the usage left the window" job_started "$ns" second
wait_for 30 "the Budget is still Exhausted" exhausted False

# stopRunning: a Job that runs on once the budget is used up is evicted (reason BudgetExhausted)
# and suspended, and waits like a new one.
kubectl patch budget "$cq" --type merge -p '{"spec": {"stopRunning": true}}' >/dev/null
timed_job "$ns" long main 600 "{limits: {nvidia.com/gpu: \"4\"}}"
wait_for 60 "Job long did not start" job_started "$ns" long
wait_for 60 "Job long was not suspended once the budget was used up" \
  bash -c "[[ \$(kubectl get job -n $ns long -o jsonpath='{.spec.suspend}') == true ]]"
kubectl get workloads -n "$ns" -o json | python3 -c '
import json, sys
for w in json.load(sys.stdin)["items"]:
    if w["metadata"]["ownerReferences"][0]["name"] != "long": continue
    c = {x["type"]: x for x in w["status"]["conditions"]}
    assert c["Evicted"]["reason"] == "BudgetExhausted", c["Evicted"]
    assert "used all 0.01 GPU-hours" in c["Evicted"]["message"], c["Evicted"]
' || fail "Job long's Workload was not evicted with reason BudgetExhausted"
echo "ok: a team runs until its budget is spent, waits with the reason, and resumes when the window rolls;"
echo "    with stopRunning a running Job is evicted and suspended"

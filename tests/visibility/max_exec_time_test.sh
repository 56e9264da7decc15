#!/usr/bin/env bash
# maximumExecutionTimeSeconds, as Kueue does it: a Job labelled kueue.x-k8s.io/max-exec-time-seconds
# gets the limit on its Workload; once admitted longer than that, the Workload is deactivated
# (DeactivationTarget and Evicted with reason ...MaximumExecutionTimeExceeded, spec.active false),
# its Job suspended, and the quota goes to the next Job.
#   tests/visibility/max_exec_time_test.sh BUILD_DIR REPO    (KUBECONFIG: the local control plane)
set -euo pipefail
BUILD=$1
REPO=$2
work=$(mktemp -d)
ns=mx-$$
fail() {
  echo "FAIL: $*" >&2
  [[ -f $work/rota.log ]] && tail -n 30 "$work/rota.log" >&2
  exit 1
}
# shellcheck source=../support/kueue_objects.sh
source "$REPO/tests/support/kueue_objects.sh"
kubectl get configmap rota-local-control-plane -n kube-system >/dev/null 2>&1 ||
  fail "refusing to run against a cluster that is not hack/cluster.sh's local control plane"
cleanup() {
  [[ -n ${rota_pid:-} ]] && kill "$rota_pid" 2>/dev/null && wait "$rota_pid" 2>/dev/null
  delete_queue mx "$ns"
  rm -rf "$work"
}
trap cleanup EXIT
install_crds "$REPO"
printf 'metrics: {bindAddress: "0"}\nhealth: {bindAddress: "0"}\n' >"$work/rota.yaml"
"$BUILD/bin/rota" run --kubeconfig "$KUBECONFIG" --config "$work/rota.yaml" 2>"$work/rota.log" &
rota_pid=$!

make_queue mx "$ns" 1
job() {  # NAME [LABEL]
  kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  labels: {kueue.x-k8s.io/queue-name: main${2:+, $2}}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, resources: {requests: {cpu: "1"}}}]
YAML
}
job limited 'kueue.x-k8s.io/max-exec-time-seconds: "3"'
sleep 1
job next
wl() { kubectl get workloads -n "$ns" -o json | python3 -c "
import json, sys
for w in json.load(sys.stdin)['items']:
    if w['metadata']['ownerReferences'][0]['name'] == '$1': print(json.dumps(w))"; }
for ((i = 0; i < 60; i++)); do
  [[ $(wl limited | python3 -c 'import json,sys; print(json.load(sys.stdin)["spec"].get("maximumExecutionTimeSeconds"))' 2>/dev/null) == 3 ]] && break
  sleep 0.5
done
((i < 60)) || fail "the Workload of Job limited has no maximumExecutionTimeSeconds 3: $(wl limited)"
for ((i = 0; i < 60; i++)); do
  [[ $(kubectl get job -n "$ns" next -o jsonpath='{.spec.suspend}') == false ]] && break
  sleep 0.5
done
((i < 60)) || fail "Job next did not start once Job limited ran out of time"
[[ $(kubectl get job -n "$ns" limited -o jsonpath='{.spec.suspend}') == true ]] || fail "Job limited was not suspended"
wl limited | python3 -c '
import json, sys
w = json.load(sys.stdin)
assert w["spec"]["active"] is False, w["spec"]
c = {x["type"]: x for x in w["status"]["conditions"]}
assert c["DeactivationTarget"]["status"] == "True" and c["DeactivationTarget"]["reason"] == "MaximumExecutionTimeExceeded", c
assert c["Evicted"]["reason"] == "DeactivatedDueToMaximumExecutionTimeExceeded", c["Evicted"]
assert c["Evicted"]["message"] == "The maximum execution time (3s) exceeded", c["Evicted"]
assert "admission" not in w["status"] or w["status"]["admission"] is None
' || fail "the Workload of Job limited: $(wl limited)"
kubectl get events -n "$ns" --field-selector reason=MaximumExecutionTimeExceeded -o name | grep -q . ||
  fail "no MaximumExecutionTimeExceeded Event"
grep -q "started Job $ns/limited" "$work/rota.log" || fail "Job limited never ran"
echo "ok: a Job past its maximum execution time is deactivated and suspended; the next one takes its quota"

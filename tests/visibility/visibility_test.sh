#!/usr/bin/env bash
# Kueue's visibility API served by rota through the real apiserver (API aggregation), the
# start-time forecasts in it, and the status page in headless Chromium:
# - rota serves visibility.kueue.x-k8s.io behind the front proxy (hack/visibility.sh registers the
#   APIServices); `kubectl get --raw` as the admin lists a ClusterQueue's and a LocalQueue's
#   pending workloads in scheduling order with Kueue's positions, offset and limit;
# - the forecast: two running Jobs expected to run 10 minutes (rota.dev/expected-runtime) and three
#   waiting: the waiting ones start exactly when the running ones are due to end, the last one
#   after its maximumExecutionTimeSeconds (the Job label kueue.x-k8s.io/max-exec-time-seconds);
# - Kueue's kueuectl (built from its Go module) shows the positions in its POSITION IN QUEUE column;
# - run times learned from finished runs (the median of a queue) give estimates too;
# - a user without rights gets 403 from rota's SubjectAccessReview, and a bad limit 400;
# - the status page on the metrics port, as Chromium renders it (artifacts in ARTIFACTS).
#   tests/visibility/visibility_test.sh BUILD_DIR REPO    (KUBECONFIG: the local control plane)
set -euo pipefail
BUILD=$1
REPO=$2
ARTIFACTS=$BUILD/artifacts/visibility
work=$(mktemp -d)
ns=vt-$$ # (a namespace of an earlier run may still be terminating)
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
  "$REPO/hack/visibility.sh" unregister >/dev/null 2>&1 || true
  delete_queue vt "$ns"
  delete_queue vt-m "$ns-m"
  rm -rf "$work"
}
trap cleanup EXIT
install_crds "$REPO"

metrics=$(free_port)
start_visible_rota "$REPO" "$BUILD/bin/rota" "$work" "metrics: {bindAddress: \"127.0.0.1:$metrics\"}" \
  "health: {bindAddress: \"0\"}" ||
  fail "the APIService did not become Available: $(kubectl get apiservice v1beta2.visibility.kueue.x-k8s.io -o yaml)"

# Two 1-CPU Jobs run (10 minutes expected); three wait behind them.
make_queue vt "$ns" 2
job() {  # NAME CPU [LABEL]
  kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  labels: {kueue.x-k8s.io/queue-name: main${3:+, $3}}
  annotations: {rota.dev/expected-runtime: 10m}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, resources: {requests: {cpu: "$2"}}}]
YAML
}
job run-1 1
job run-2 1
for ((i = 0; i < 120; i++)); do
  [[ $(kubectl get workloads -n "$ns" -o jsonpath='{.items[?(@.status.admission)].metadata.name}' | wc -w) == 2 ]] && break
  sleep 0.5
done
((i < 120)) || fail "the two running Jobs were not admitted"
sleep 1 # (the waiting ones are created after: a second later, so that their order is certain)
job wait-a 1
sleep 1
job wait-b 1
sleep 1
job wait-c 2 "kueue.x-k8s.io/max-exec-time-seconds: \"300\""

api=/apis/visibility.kueue.x-k8s.io/v1beta2
summary() { kubectl get --raw "$1" >"$work/summary.json" || fail "GET $1"; }
for ((i = 0; i < 60; i++)); do
  summary "$api/clusterqueues/vt/pendingworkloads"
  python3 - "$work/summary.json" <<'PY' && break
import json, sys
items = json.load(open(sys.argv[1]))["items"]
sys.exit(0 if len(items) == 3 and all("estimatedStartTime" in i for i in items) else 1)
PY
  sleep 0.5
done
# The admitted ones' reservation times: the forecast must follow from them exactly.
reserved=$(kubectl get workloads -n "$ns" -o json | python3 -c '
import json, sys
for w in json.load(sys.stdin)["items"]:
    for c in w.get("status", {}).get("conditions", []):
        if c["type"] == "QuotaReserved" and c["status"] == "True": print(c["lastTransitionTime"])')
python3 - "$work/summary.json" "$reserved" "$ns" <<'PY' || fail "the ClusterQueue's pending workloads: $(cat "$work/summary.json")"
import json, sys
from datetime import datetime, timedelta
d = json.load(open(sys.argv[1]))
assert d["kind"] == "PendingWorkloadsSummary" and d["apiVersion"] == "visibility.kueue.x-k8s.io/v1beta2", d
items = d["items"]
owners = [i["metadata"]["ownerReferences"][0]["name"] for i in items]
assert owners == ["wait-a", "wait-b", "wait-c"], owners
assert [i["positionInClusterQueue"] for i in items] == [0, 1, 2]
assert [i["positionInLocalQueue"] for i in items] == [0, 1, 2]
assert all(i["localQueueName"] == "main" and i["metadata"]["namespace"] == sys.argv[3] for i in items)
t = lambda s: datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ")
ends = sorted(t(s) + timedelta(minutes=10) for s in sys.argv[2].split())
assert len(ends) == 2, sys.argv[2]
starts = [t(i["estimatedStartTime"]) for i in items]
# wait-a when the first running Job ends, wait-b when the second does, wait-c (two CPUs) when
# both wait-a and wait-b (10 minutes each) have ended.
assert starts == [ends[0], ends[1], ends[1] + timedelta(minutes=10)], (starts, ends)
# (Other tests' workloads may be in the cluster too: the counts are not checked.)
assert " by maximumExecutionTimeSeconds, " in items[0]["estimateBasis"], items[0]
assert " by rota.dev/expected-runtime" in items[0]["estimateBasis"], items[0]
PY
echo "ok: positions and forecasts of ClusterQueue vt through the apiserver"

summary "$api/namespaces/$ns/localqueues/main/pendingworkloads?offset=1&limit=1"
python3 - "$work/summary.json" <<'PY' || fail "the LocalQueue's page: $(cat "$work/summary.json")"
import json, sys
items = json.load(open(sys.argv[1]))["items"]
assert len(items) == 1 and items[0]["metadata"]["ownerReferences"][0]["name"] == "wait-b", items
assert items[0]["positionInLocalQueue"] == 1
PY
kubectl get --raw /apis/visibility.kueue.x-k8s.io/v1beta1/clusterqueues/vt/pendingworkloads | grep -q '"wait-a"' ||
  fail "v1beta1 does not list the same workloads"
echo "ok: LocalQueue paging and v1beta1"

out=$(kubectl get --raw "$api/clusterqueues/vt/pendingworkloads" --as=someone 2>&1) && fail "a user without rights was answered: $out"
grep -q 'forbidden: User "someone" cannot get resource "clusterqueues/pendingworkloads"' <<<"$out" ||
  fail "expected a 403 naming the user and subresource, got: $out"
out=$(kubectl get --raw "$api/clusterqueues/vt/pendingworkloads?limit=-1" 2>&1) && fail "limit=-1 was accepted: $out"
grep -q 'limit: "-1" is not a non-negative integer' <<<"$out" || fail "expected a 400 naming limit, got: $out"
out=$(kubectl get --raw "$api/clusterqueues/absent/pendingworkloads" 2>&1) && fail "an absent queue was answered: $out"
grep -q 'NotFound\|not found' <<<"$out" || fail "expected 404 for an absent ClusterQueue, got: $out"
echo "ok: 403 for a user without rights, 400 for a bad limit, 404 for an absent queue"

# Kueue's own kubectl plugin, built from its Go module, reads the positions unchanged.
kueuectl=$("$REPO/bench/build-kueue.sh" 2>/dev/null | tail -n 1)/bin/kueuectl
"$kueuectl" list workload -n "$ns" >"$work/kueuectl.txt" 2>&1 || fail "kueuectl list workload: $(cat "$work/kueuectl.txt")"
python3 - "$work/kueuectl.txt" <<'PY' || fail "kueuectl's POSITION IN QUEUE column: $(cat "$work/kueuectl.txt")"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
header = lines[0]
col = header.index("POSITION IN QUEUE")
rows = {re.split(r"\s+", l)[2]: l[col:col + 17].strip() for l in lines[1:]}  # by JOB NAME
assert rows == {"run-1": "", "run-2": "", "wait-a": "0", "wait-b": "1", "wait-c": "2"}, rows
PY
echo "ok: kueuectl list workload shows rota's positions"

# Run times learned from finished runs: a Job that kwok completes after 2 s teaches rota the
# median of queue vt-m; a Job with no run time of its own, running there, is then expected to end
# by that median (it already has: now), and the Job waiting behind it gets an estimate that says so.
make_queue vt-m "$ns-m" 1
mjob() {  # NAME [POD ANNOTATIONS]
  kubectl apply -n "$ns-m" -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: $1, labels: {kueue.x-k8s.io/queue-name: main}}
spec:
  suspend: true
  template:
    metadata: {annotations: {${2:-}}}
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, resources: {requests: {cpu: "1"}}}]
YAML
}
mjob quick 'pod-complete.stage.kwok.x-k8s.io/delay: "2s"'
for ((i = 0; i < 120; i++)); do
  [[ $(kubectl get workloads -n "$ns-m" -o jsonpath='{.items[*].status.conditions[?(@.type=="Finished")].status}') == True ]] && break
  sleep 0.5
done
((i < 120)) || fail "Job quick did not finish"
mjob runner
mjob waiter
for ((i = 0; i < 60; i++)); do
  summary "$api/namespaces/$ns-m/localqueues/main/pendingworkloads"
  python3 - "$work/summary.json" <<'PY' && break
import json, sys
items = json.load(open(sys.argv[1]))["items"]
sys.exit(0 if len(items) == 1 and "estimatedStartTime" in items[0] else 1)
PY
  sleep 0.5
done
python3 - "$work/summary.json" <<'PY' || fail "no estimate from the median of finished runs: $(cat "$work/summary.json")"
import json, re, sys
item = json.load(open(sys.argv[1]))["items"][0]
assert item["metadata"]["ownerReferences"][0]["name"] == "waiter", item
m = re.search(r"(\d+) by the median of finished runs", item["estimateBasis"])
assert m and int(m.group(1)) >= 1, item["estimateBasis"]
PY
delete_queue vt-m "$ns-m"
echo "ok: a run time learned from a finished run gives the next Job its estimate"

# The status page, rendered by Chromium.
mkdir -p "$ARTIFACTS"
"$REPO/tests/statuspage/page_in_chromium.sh" "http://127.0.0.1:$metrics/" "$ARTIFACTS" vt "$ns/job-run-1-" \
  || fail "the status page in Chromium"
dom=$ARTIFACTS/dom.html
for want in "$(kubectl get workloads -n "$ns" -o jsonpath='{.items[?(@.metadata.ownerReferences[0].name=="wait-c")].metadata.name}')"; do
  grep -q "$want" "$dom" || fail "the status page does not list pending workload $want"
done
echo "ok: the status page in Chromium (artifacts in $ARTIFACTS)"

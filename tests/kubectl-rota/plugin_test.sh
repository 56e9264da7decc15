#!/usr/bin/env bash
# kubectl-rota against the local control plane: a `rota run` of its own admits, queues and
# preempts Jobs of a ClusterQueue made for the test (one admitted, one waiting, one preempted by a
# higher-priority Job), and the plugin's queues, why, preempted and top must say so, in tables,
# JSON and YAML, invoked directly and as `kubectl rota`; a Job that does not exist exits 1 naming
# it, and a bad flag exits 2.
#   tests/kubectl-rota/plugin_test.sh BUILD_DIR REPO    (KUBECONFIG: the local control plane)
set -euo pipefail
BUILD=$1 REPO=$2
source "$REPO/tests/support/kueue_objects.sh"
ID=kr-$$  # (namespace, queues, flavors and classes of this run alone: other tests share the cluster)
NS=$ID
plugin=$BUILD/bin/kubectl-rota
work=$(mktemp -d)
rota_pid=""
fail() {
  echo "FAIL: $*" >&2
  [[ -f $work/out ]] && { echo "--- the plugin's last output" >&2; cat "$work/out" "$work/err" >&2; }
  [[ -f $work/rota.log ]] && { echo "--- rota's log (last 30 lines)" >&2; tail -n 30 "$work/rota.log" >&2; }
  exit 1
}
cleanup() {
  [[ -n $rota_pid ]] && kill "$rota_pid" 2>/dev/null && wait "$rota_pid" 2>/dev/null
  "$REPO/hack/visibility.sh" unregister >/dev/null 2>&1 || true
  kubectl delete namespace "$NS" --wait=false --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete clusterqueue "$ID" --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete workloadpriorityclass "$ID-low" "$ID-high" --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete resourceflavor "$ID-cpu" "$ID-gpu" --ignore-not-found >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
wait_for() {  # wait_for SECONDS WHAT COMMAND...
  local limit=$1 what=$2
  shift 2
  for ((i = 0; i < limit * 2; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    [[ -n $rota_pid ]] && ! kill -0 "$rota_pid" 2>/dev/null && fail "rota exited while waiting for $what"
    sleep 0.5
  done
  fail "$what did not happen within ${limit}s"
}
# run CODE ARGS...: runs the plugin, its output in $work/out and $work/err; fails unless it exits CODE.
run() {
  local want=$1 code=0
  shift
  "$plugin" "$@" >"$work/out" 2>"$work/err" || code=$?
  [[ $code == "$want" ]] || fail "kubectl-rota $* exited $code, not $want"
}
has() { grep -E -q -- "$1" "$work/out" || fail "the output of the last command has no line matching: $1"; }
says() { grep -E -q -- "$1" "$work/err" || fail "the last command's error output does not say: $1"; }

kubectl get configmap rota-local-control-plane -n kube-system >/dev/null 2>&1 ||
  fail "refusing to run against a cluster that is not hack/cluster.sh's local control plane"
install_crds "$REPO"
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Namespace
metadata: {name: $NS}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: $ID-cpu}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: $ID-gpu}
spec: {nodeLabels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB, nvidia.com/mig.config: all-disabled}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: $ID-low}
value: 10
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: $ID-high}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: $ID}
spec:
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: $NS}}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors: [{name: $ID-cpu, resources: [{name: cpu, nominalQuota: 16}, {name: memory, nominalQuota: 64Gi}]}]
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: $ID-gpu, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: main, namespace: $NS}
spec: {clusterQueue: $ID}
YAML
job() {  # job NAME PRIORITY GPUS
  kubectl apply -n "$NS" -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  labels: {kueue.x-k8s.io/queue-name: main, kueue.x-k8s.io/priority-class: $ID-$2}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, resources: {requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "$3"}, limits: {nvidia.com/gpu: "$3"}}}]
YAML
}
suspended() { [[ $(kubectl get job -n "$NS" "$1" -o jsonpath='{.spec.suspend}') == "$2" ]]; }
workload_of() { kubectl get workloads -n "$NS" -l kueue.x-k8s.io/job-uid="$(kubectl get job -n "$NS" "$1" -o jsonpath='{.metadata.uid}')" -o name | sed 's|.*/||'; }
pending_reason() { [[ -n $(kubectl get workload -n "$NS" "$1" -o jsonpath='{.status.conditions[?(@.type=="QuotaReserved")].reason}') ]]; }
cq_counts() { [[ $(kubectl get clusterqueue "$ID" -o jsonpath='{.status.pendingWorkloads}/{.status.admittedWorkloads}') == "$1" ]]; }

# rota serves the visibility API (positions and forecasts for `why`) through the apiserver.
start_visible_rota "$REPO" "$BUILD/bin/rota" "$work" 'metrics: {bindAddress: "127.0.0.1:0"}' \
  'health: {bindAddress: "127.0.0.1:0"}' || fail "the visibility API did not become Available"

job train low 4
wait_for 60 "the low-priority Job's admission" suspended train false
sleep 10  # (so that its preemption loses work worth measuring: 4 GPUs x 10 s)
job urgent high 4
kubectl annotate job -n "$NS" urgent rota.dev/expected-runtime=30m >/dev/null
wait_for 60 "the high-priority Job's admission" suspended urgent false
wait_for 60 "the low-priority Job's preemption" suspended train true
job waiting high 2  # (the head of the line: rota writes the pending reason of the head)
wait_for 30 "the waiting Job's Workload" workload_of waiting
train_wl=$(workload_of train) urgent_wl=$(workload_of urgent) waiting_wl=$(workload_of waiting)
wait_for 30 "a pending reason for the waiting Job" pending_reason "$waiting_wl"
wait_for 30 "the ClusterQueue's status: 2 pending, 1 admitted" cq_counts 2/1

# queues: the GPU row of the test's queue, full; -o wide: every resource of every flavor.
run 0 queues
has "^$ID +<none> +nvidia.com/gpu +4 +0 +4 +2 +1 +\[##########\]$"
run 0 queues -o wide
has "^$ID +<none> +$ID-cpu +cpu +16 +0 +[0-9]+ +[0-9]+ +<none> +<none> +2 +1 +None +\[#"
has "^$ID +<none> +$ID-gpu +nvidia.com/gpu +4 +0 +4 +4 "
run 0 queues -o json
python3 - "$work/out" "$ID" <<'PY' || fail "queues -o json is not the QueueSummaryList expected"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["apiVersion"] == "rota.dev/v1alpha1" and doc["kind"] == "QueueSummaryList", doc
q = [i for i in doc["items"] if i["name"] == sys.argv[2]][0]
gpu = [r for r in q["resources"] if r["resource"] == "nvidia.com/gpu"][0]
assert (q["pendingWorkloads"], q["admittedWorkloads"], gpu["nominal"], gpu["inUse"]) == (2, 1, "4", "4"), q
PY
run 0 queues -o yaml
python3 - "$work/out" "$ID" <<'PY' || fail "queues -o yaml does not read back as the same document"
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
q = [i for i in doc["items"] if i["name"] == sys.argv[2]][0]
assert doc["kind"] == "QueueSummaryList" and q["resources"][0]["nominal"] == "16", q  # (a string, not 16)
PY

# why: the waiting Job, what holds its quota, and why preemption cannot help.
run 0 why "job/waiting" -n "$NS"
has "^Workload: +$NS/$waiting_wl$"
has "^State: +Pending: waiting to be admitted"
has "^Reason: +WaitingForQuota: not enough free quota"
has "^Position: +1st \(the head\) in ClusterQueue $ID, 1st \(the head\) in LocalQueue main$"
# urgent is expected to run 30 minutes (its annotation): the waiting Job starts when it ends.
urgent_end=$(kubectl get workload -n "$NS" "$urgent_wl" \
  -o jsonpath='{.status.conditions[?(@.type=="QuotaReserved")].lastTransitionTime}' |
  python3 -c 'import sys, datetime as d; t = d.datetime.strptime(sys.stdin.read().strip(), "%Y-%m-%dT%H:%M:%SZ"); print((t + d.timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%SZ"))')
has "^Forecast: +starts around $urgent_end .*: assumes no new workloads arrive"
has "^  $NS/$urgent_wl +$ID +1000 +yes +nvidia.com/gpu: 4, cpu: 1, memory: 1Gi "
has "^Preemption could help: no: the 1 workload holding its quota in $ID has no lower priority than its own \(1000\)"
run 0 why "$urgent_wl" -n "$NS"  # (a bare name that is no Job: the Workload)
has "^State: +Admitted: admitted by ClusterQueue $ID$"
run 0 why "job/train" -n "$NS" -o json
python3 - "$work/out" "$NS/$urgent_wl" <<'PY' || fail "why job/train -o json does not show the preempted Job"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["kind"] == "WorkloadExplanation" and doc["state"] == "Evicted" and doc["job"] == "train", doc
assert sys.argv[2] in doc["summary"] and doc["preemption"]["couldHelp"] is False, doc
PY
# The namespace of the kubeconfig's context, and --context.
kubectl config view --raw >"$work/kubeconfig"
kubectl config set-context --current --namespace "$NS" --kubeconfig "$work/kubeconfig" >/dev/null
run 0 why job/urgent --kubeconfig "$work/kubeconfig"
has "^State: +Admitted"
run 0 why job/urgent --kubeconfig "$work/kubeconfig" --context "$(kubectl config current-context)"
run 1 why job/urgent --kubeconfig "$work/kubeconfig" --context no-such-context
says 'context "no-such-context" is not defined'

# preempted: train, by urgent, in the test's queue, with the work it lost (4 GPUs for 10 s or more).
run 0 preempted -n "$NS"
has "^$train_wl +$ID +$NS/$urgent_wl +InClusterQueue +[0-9]+s +4 +0\.[0-9][0-9]$"
run 0 preempted -A -o wide
has "^$NS +$train_wl +$ID +$NS/$urgent_wl +InClusterQueue +.* train +20[0-9-]+T"
run 0 preempted -n "$NS" -o json
python3 - "$work/out" "$NS/$urgent_wl" <<'PY' || fail "preempted -o json does not measure the work lost"
import json, sys
doc = json.load(open(sys.argv[1]))
p = doc["items"][0]
assert doc["kind"] == "PreemptionList" and len(doc["items"]) == 1 and p["preemptor"] == sys.argv[2], doc
assert p["gpus"] == 4 and 4 * 9 / 3600 <= p["gpuHoursLost"] <= 4 * 120 / 3600, p
PY
sleep 2
run 0 preempted -n "$NS" --since 1s
[[ ! -s $work/out ]] && says "No preemptions found in $NS namespace" || fail "preempted --since 1s listed an older preemption"

# top: the namespace holds urgent's 4 GPUs; by ClusterQueue the same.
run 0 top -n "$NS"
has "^NAMESPACE +WORKLOADS +GPU-EQ +nvidia.com/gpu +cpu +memory$"
has "^$NS +1 +4.00 +4 +1 +1Gi$"
run 0 top -A --by clusterqueue -o yaml
python3 - "$work/out" "$ID" <<'PY' || fail "top -A --by clusterqueue -o yaml does not show the queue's use"
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
g = [i for i in doc["items"] if i["clusterQueue"] == sys.argv[2]][0]
assert doc["kind"] == "UsageList" and g["workloads"] == 1 and g["usage"]["nvidia.com/gpu"] == "4", g
PY

# As kubectl's plugin, and kubectl's exit codes: 1 for what is not there, 2 for a usage error.
PATH="$BUILD/bin:$PATH" kubectl rota queues >"$work/out" 2>"$work/err" || fail "kubectl rota queues failed"
has "^$ID +<none> +nvidia.com/gpu "
run 1 why job/no-such-job -n "$NS"
says "^Error from server \(NotFound\): jobs.batch \"no-such-job\" not found$"
run 1 why no-such-thing -n "$NS"
says "jobs.batch \"no-such-thing\" not found, and no workloads.kueue.x-k8s.io \"no-such-thing\""
run 2 queues --no-such-flag
says "no-such-flag"
run 2 top --by team
run 2 why
run 0 why --help
has "^Usage: kubectl rota why \[OPTIONS\] TARGET"
echo "PASS"

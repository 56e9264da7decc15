#!/usr/bin/env bash
# `make demo`: start the local control plane with its fake GPU nodes, run a GPU Job on them, install
# rota's CRDs and the example GPU platform, run `rota run`, submit a mixed stream of Jobs (a
# best-effort sweep that borrows, critical inference, a MIG notebook, training that takes the
# borrowed GPUs back after asking the sweep to checkpoint) and show what was admitted, preempted
# and why; ask `kubectl rota why` about a waiting Job (position and start forecast from rota's
# visibility API) and look at the status page; then the admission
# engine alone on a contended moment (`rota simulate`). The cluster keeps running afterwards so you
# can look around; `make cluster-down` stops it.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${ROTA_CLUSTER_DIR:-$REPO/.cluster}

up=$("$REPO/hack/cluster.sh" up)
eval "$(tail -n 1 <<<"$up")"
export PATH="$(sed -n 's/^bin=//p' "$STATE/endpoints"):$PATH"

echo
echo "== The fake GPU nodes (kwok) and what they offer"
kubectl get nodes -o custom-columns='NODE:.metadata.name,PRODUCT:.metadata.labels.nvidia\.com/gpu\.product,GPU:.status.allocatable.nvidia\.com/gpu,MIG-1G.10GB:.status.allocatable.nvidia\.com/mig-1g\.10gb,MIG-2G.20GB:.status.allocatable.nvidia\.com/mig-2g\.20gb,GPU.SHARED:.status.allocatable.nvidia\.com/gpu\.shared,CPU:.status.allocatable.cpu,MEMORY:.status.allocatable.memory'

echo
echo "== A training Job asking for 2 whole GPUs (kwok completes its pod after 3s)"
kubectl delete job demo-train --ignore-not-found --wait=true >/dev/null
kubectl apply -f "$REPO/examples/jobs/train-2gpu.yaml"
kubectl wait --for=condition=Complete job/demo-train --timeout=120s
kubectl get pods -l job-name=demo-train -o wide

echo
echo "== rota's API and the example platform (examples/gpu-cluster/: 4 teams in one cohort,"
echo "   32 A100s, MIG and time-sliced flavors, 3 priority tiers)"
kubectl apply -f "$REPO/crds/" >/dev/null
kubectl wait --for=condition=Established --timeout=60s -f "$REPO/crds/" >/dev/null
for f in "$REPO"/examples/gpu-cluster/0[0-4]-*.yaml; do kubectl apply -f "$f" >/dev/null; done
kubectl get clusterqueues

echo
echo "== rota run"
# Metrics and health on ports the system picks (so nothing else on the machine is in the way).
# Admission webhooks over HTTPS on 127.0.0.1 with the certificate hack/cluster.sh issued, and
# Kueue's visibility API for the apiserver's front proxy (on this machine's address: the
# apiserver reaches it through an EndpointSlice, which may not name 127.0.0.1).
certs=$("$REPO/hack/webhooks.sh" cert-dir)
vcerts=$("$REPO/hack/visibility.sh" cert-dir)
printf 'budgets: {syncPeriod: 2s}\nmetrics: {bindAddress: "127.0.0.1:0"}\nhealth: {bindAddress: "127.0.0.1:0"}\nwebhook: {bindAddress: "127.0.0.1:0", certFile: %s, keyFile: %s}\nvisibility: {bindAddress: ":0", certFile: %s, keyFile: %s}\n' \
  "$certs/tls.crt" "$certs/tls.key" "$vcerts/tls.crt" "$vcerts/tls.key" >"$STATE/rota.yaml"
"$REPO/build/bin/rota" run --kubeconfig "$KUBECONFIG" --config "$STATE/rota.yaml" 2>"$STATE/rota.log" &
rota_pid=$!
# The webhooks go with rota: a cluster left running must not call a webhook nobody serves.
trap '"$REPO/hack/webhooks.sh" unregister >/dev/null 2>&1; "$REPO/hack/visibility.sh" unregister >/dev/null 2>&1; kill $rota_pid 2>/dev/null; wait $rota_pid 2>/dev/null || true' EXIT
webhook_port=""
for _ in $(seq 1 50); do
  webhook_port=$(sed -n 's/.*admission webhooks over HTTPS on port \([0-9]*\).*/\1/p' "$STATE/rota.log" | head -n 1)
  [[ -n $webhook_port ]] && break
  sleep 0.2
done
[[ -n $webhook_port ]] || { echo "rota did not start its webhook server:"; cat "$STATE/rota.log"; exit 1; }
"$REPO/hack/webhooks.sh" register "$webhook_port" 2>/dev/null
echo "rota serves its admission webhooks on https://127.0.0.1:$webhook_port (registered with the apiserver)"
visibility_port=$(sed -n 's/.*visibility API over HTTPS on port \([0-9]*\).*/\1/p' "$STATE/rota.log" | head -n 1)
"$REPO/hack/visibility.sh" register "$visibility_port" 2>/dev/null
echo "rota serves Kueue's visibility API on port $visibility_port (an aggregated API of the apiserver)"

# Waits until `kubectl get job NAME -n NS` has .spec.suspend == $3.
wait_job() {
  for _ in $(seq 1 60); do
    [[ $(kubectl get job "$2" -n "$1" -o jsonpath='{.spec.suspend}' 2>/dev/null) == "$3" ]] && return 0
    sleep 1
  done
  echo "  (timed out waiting for job $1/$2 suspend=$3)"
}

echo
echo "== Jobs arrive (examples/jobs/stream/), as data scientists submit them"
echo "-- team-vision's best-effort sweep (16 x 1 GPU): 8 GPUs of its own and 8 borrowed from idle teams"
kubectl apply -f "$REPO/examples/jobs/stream/1-vision-sweep.yaml" >/dev/null
wait_job team-vision vision-sweep false
echo "-- critical inference (2 x 2 GPUs) and a notebook on a MIG slice"
kubectl apply -f "$REPO/examples/jobs/stream/2-inference.yaml" -f "$REPO/examples/jobs/stream/3-notebook.yaml" >/dev/null
wait_job team-inference ranking-serve false
wait_job notebooks notebook-alice false
echo "-- team-llm's training (4 x 4 GPUs = its guarantee) needs the GPUs team-vision borrowed. The sweep"
echo "   is checkpointable (rota.dev/checkpoint: \"true\"), so rota asks it to checkpoint first"
kubectl apply -f "$REPO/examples/jobs/stream/4-llm-train.yaml" >/dev/null
sweep_wl=$(kubectl get workloads -n team-vision -o jsonpath='{.items[0].metadata.name}')
for _ in $(seq 1 60); do
  [[ $(kubectl get workload "$sweep_wl" -n team-vision -o jsonpath='{.status.conditions[?(@.type=="CheckpointRequested")].status}') == True ]] && break
  sleep 1
done
sleep 2
kubectl get workloads -n team-vision -o custom-columns='WORKLOAD:.metadata.name,CHECKPOINT REQUESTED:.status.conditions[?(@.type=="CheckpointRequested")].status,MESSAGE:.status.conditions[?(@.type=="CheckpointRequested")].message'
kubectl get workloads -n team-llm -o custom-columns='WORKLOAD:.metadata.name,WAITING:.status.conditions[?(@.type=="QuotaReserved")].message'
sweep_pod=$(kubectl get pods -n team-vision -l job-name=vision-sweep -o jsonpath='{.items[0].metadata.name}')
echo "   the sweep keeps running; its pods see the request in their downward API annotations file:"
echo "   $sweep_pod: rota.dev/checkpoint-requested-at=$(kubectl get pod "$sweep_pod" -n team-vision -o jsonpath='{.metadata.annotations.rota\.dev/checkpoint-requested-at}')"
echo "-- the sweep saves a checkpoint and says so (what rota checkpoint-agent does for a trainer):"
echo "   \$ kubectl annotate pod $sweep_pod -n team-vision rota.dev/checkpointed-at=\$(date -u +%Y-%m-%dT%H:%M:%SZ)"
kubectl annotate pod "$sweep_pod" -n team-vision "rota.dev/checkpointed-at=$(date -u +%Y-%m-%dT%H:%M:%SZ)" --overwrite >/dev/null
wait_job team-llm llm-finetune false
echo "   rota evicted the sweep once it had checkpointed; it came back smaller, within team-vision's own GPUs:"
kubectl get workloads -n team-vision -o custom-columns='WORKLOAD:.metadata.name,CHECKPOINT:.status.conditions[?(@.type=="CheckpointRequested")].reason,MESSAGE:.status.conditions[?(@.type=="CheckpointRequested")].message,PREVIOUSLY:.status.conditions[?(@.type=="Evicted")].message,TRIALS NOW:.status.admission.podSetAssignments[0].count'
sleep 3

echo
echo "== The webhooks: a Job submitted without spec.suspend is created suspended (it waits for its"
echo "   queue instead of grabbing GPUs), and changing a running Job's queue is refused"
kubectl create -n team-vision -f - <<'YAML' >/dev/null
apiVersion: batch/v1
kind: Job
metadata:
  name: forgot-suspend
  labels: {kueue.x-k8s.io/queue-name: gpu}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: registry.example/train:1
        resources: {limits: {nvidia.com/gpu: "1"}}
YAML
echo "  kubectl create job forgot-suspend (no spec.suspend): spec.suspend=$(kubectl get job forgot-suspend -n team-vision -o jsonpath='{.spec.suspend}')"
echo "  \$ kubectl label job llm-finetune -n team-llm kueue.x-k8s.io/queue-name=other --overwrite"
kubectl label job llm-finetune -n team-llm kueue.x-k8s.io/queue-name=other --overwrite 2>&1 | sed 's/^/  /' || true

echo
echo "== Why is my job waiting, and when will it start? team-llm submits an evaluation (2 x 4 GPUs,"
echo "   expected to run 45m). Its guarantee is taken by its fine-tuning, so it must borrow; the GPUs"
echo "   it could borrow are the sweep's, at a lower priority: rota asks the sweep to checkpoint again"
kubectl apply -f "$REPO/examples/jobs/stream/5-llm-eval.yaml" >/dev/null
for _ in $(seq 1 30); do
  [[ -n $(kubectl get workloads -n team-llm -o jsonpath='{.items[?(@.metadata.ownerReferences[0].name=="llm-eval")].status.conditions[?(@.type=="QuotaReserved")].reason}') ]] && break
  sleep 1
done
echo "\$ kubectl rota why job/llm-eval -n team-llm      (build/bin/kubectl-rota; make install puts it on PATH)"
"$REPO/build/bin/kubectl-rota" why job/llm-eval -n team-llm | sed 's/^/  /' || true
echo "\$ kubectl rota queues"
"$REPO/build/bin/kubectl-rota" queues | sed 's/^/  /' || true
echo "\$ kubectl get --raw /apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/team-llm/localqueues/gpu/pendingworkloads"
kubectl get --raw /apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/team-llm/localqueues/gpu/pendingworkloads |
  python3 -c 'import json, sys
for i in json.load(sys.stdin)["items"]:
    print("  %s: position %d in ClusterQueue, %d in LocalQueue; estimated start %s" % (i["metadata"]["name"],
          i["positionInClusterQueue"], i["positionInLocalQueue"], i.get("estimatedStartTime", "none")))' || true

echo
echo "== GPU-hour budgets: the notebooks team may use 0.001 MIG-slice-hours (3.6 slice-seconds) in"
echo "   any hour: a tiny Budget, so that it runs out during the demo (examples/budgets/ has real ones)"
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: rota.dev/v1alpha1
kind: Budget
metadata: {name: notebooks-demo}
spec:
  clusterQueue: notebooks
  window: {rolling: 1h}
  limits: [{resource: nvidia.com/mig-1g.10gb, hours: "0.001"}]
YAML
echo "-- notebook-bob starts on a MIG slice and uses the budget up within seconds"
sed 's/notebook-alice/notebook-bob/' "$REPO/examples/jobs/stream/3-notebook.yaml" | kubectl apply -f - >/dev/null
wait_job notebooks notebook-bob false
for _ in $(seq 1 30); do
  [[ $(kubectl get budget notebooks-demo -o jsonpath='{.status.conditions[?(@.type=="Exhausted")].status}') == True ]] && break
  sleep 1
done
echo "-- notebook-carol arrives after that, and waits:"
sed 's/notebook-alice/notebook-carol/' "$REPO/examples/jobs/stream/3-notebook.yaml" | kubectl apply -f - >/dev/null
for _ in $(seq 1 20); do
  [[ -n $(kubectl get workloads -n notebooks -o jsonpath='{.items[?(@.metadata.ownerReferences[0].name=="notebook-carol")].status.conditions[?(@.type=="QuotaReserved")].reason}') ]] && break
  sleep 1
done
echo "\$ kubectl get budgets"
kubectl get budgets | sed 's/^/  /'
kubectl get workloads -n notebooks -o custom-columns='WORKLOAD:.metadata.name,REASON:.status.conditions[?(@.type=="QuotaReserved")].reason,MESSAGE:.status.conditions[?(@.type=="QuotaReserved")].message' | sed 's/^/  /'

echo
kubectl get jobs -A -o custom-columns='NAMESPACE:.metadata.namespace,JOB:.metadata.name,SUSPENDED:.spec.suspend,PARALLELISM:.spec.parallelism,RUNNING PODS:.status.active,NODE SELECTOR:.spec.template.spec.nodeSelector'
echo
kubectl get workloads -A -o custom-columns='NAMESPACE:.metadata.namespace,WORKLOAD:.metadata.name,CLUSTERQUEUE:.status.admission.clusterQueue,ADMITTED:.status.conditions[?(@.type=="Admitted")].status,PREEMPTED:.status.conditions[?(@.type=="Preempted")].reason,WHY:.status.conditions[?(@.type=="QuotaReserved")].message'
echo
kubectl get clusterqueues
echo
sed 's/^/  rota: /' "$STATE/rota.log" | grep -v 'serving\|starting\|synced' | head -n 16
metrics_port=$(sed -n 's/.*serving \/metrics and the status page (\/) on port \([0-9]*\).*/\1/p' "$STATE/rota.log" | head -n 1)
if [[ -n $metrics_port ]]; then
  echo
  echo "== The status page (http://127.0.0.1:$metrics_port/ while rota runs): queues, pending workloads"
  echo "   with positions and forecasts, recent admissions and preemptions; as text:"
  curl -s "http://127.0.0.1:$metrics_port/" | python3 -c 'import html, re, sys
text = re.sub(r"<(style|title)[^>]*>.*?</\1>", "", sys.stdin.read(), flags=re.S)
for line in re.sub(r"<[^>]+>", " ", text.replace("</tr>", "\n").replace("</h2>", "\n")).splitlines():
    line = " ".join(html.unescape(line).split())
    if line: print("  " + line)' | head -n 24
  echo
  echo "== Kueue's metrics, as a Prometheus scrape of rota's /metrics sees them (excerpt)"
  curl -s "http://127.0.0.1:$metrics_port/metrics" |
    grep -E '^(kueue_(admitted_workloads_total|preempted_workloads_total|cluster_queue_resource_usage\{cluster_queue="team-(llm|vision)",flavor="a100-80gb")|rota_checkpoint_requests_total|rota_preemption_lost_resource_seconds_total\{.*nvidia|rota_budget_)' || true
fi
"$REPO/hack/webhooks.sh" unregister >/dev/null 2>&1
"$REPO/hack/visibility.sh" unregister >/dev/null 2>&1
kill $rota_pid 2>/dev/null; wait $rota_pid 2>/dev/null || true
trap - EXIT

echo
echo "== rota's admission engine at a busy moment on the same platform: team-vision's sweep borrows"
echo "   8 GPUs; team-llm's training and critical inference arrive."
echo "   \$ build/bin/rota simulate examples/gpu-cluster/*.yaml examples/simulate/busy-cluster.yaml"
"$REPO/build/bin/rota" simulate "$REPO"/examples/gpu-cluster/*.yaml "$REPO/examples/simulate/busy-cluster.yaml" |
  "$REPO/hack/summarize-decisions.sh"

echo
echo "The cluster is still running (rota is not). Try it yourself:"
echo "  $(tail -n 1 <<<"$up")"
echo "  build/bin/rota run &      # then: kubectl get clusterqueues,workloads -A"
echo "  (with webhooks: build/bin/rota run --config $STATE/rota.yaml, then hack/webhooks.sh register PORT)"
echo "Stop it with: make cluster-down"

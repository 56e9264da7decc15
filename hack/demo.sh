#!/usr/bin/env bash
# `make demo`: start the local control plane with its fake GPU nodes, run a GPU Job on them, install
# rota's CRDs and the example GPU platform, run `rota run` and watch it admit the teams' workloads,
# then show the admission engine deciding a contended moment (`rota simulate`). The cluster keeps
# running afterwards so you can look around; `make cluster-down` stops it.
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
echo "   32 A100s, MIG and time-sliced flavors, 3 priority tiers, 4 waiting Workloads)"
kubectl apply -f "$REPO/crds/" >/dev/null
kubectl wait --for=condition=Established --timeout=60s -f "$REPO/crds/" >/dev/null
kubectl apply -f "$REPO/examples/gpu-cluster/"

echo
echo "== rota run: the controller admits the Workloads by their queues' quota"
# Metrics and health on ports the system picks (so nothing else on the machine is in the way).
printf 'metrics: {bindAddress: "127.0.0.1:0"}\nhealth: {bindAddress: "127.0.0.1:0"}\n' >"$STATE/rota.yaml"
"$REPO/build/bin/rota" run --kubeconfig "$KUBECONFIG" --config "$STATE/rota.yaml" 2>"$STATE/rota.log" &
rota_pid=$!
trap 'kill $rota_pid 2>/dev/null; wait $rota_pid 2>/dev/null || true' EXIT
for _ in $(seq 1 60); do
  admitted=$(kubectl get workloads -A -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Admitted")].status}{"\n"}{end}' | grep -c True || true)
  [[ $admitted -ge 4 ]] && break
  sleep 1
done
kubectl get clusterqueues
echo
kubectl get workloads -A
echo
sed 's/^/  rota: /' "$STATE/rota.log" | head -n 14
metrics_port=$(sed -n 's/.*serving \/metrics on port \([0-9]*\).*/\1/p' "$STATE/rota.log" | head -n 1)
if [[ -n $metrics_port ]]; then
  echo
  echo "== Kueue's metrics, as a Prometheus scrape of rota's /metrics sees them (excerpt)"
  curl -s "http://127.0.0.1:$metrics_port/metrics" |
    grep -E '^kueue_(admitted_workloads_total|pending_workloads|cluster_queue_resource_usage)\{cluster_queue="team-llm"' || true
fi
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
echo "Stop it with: make cluster-down"

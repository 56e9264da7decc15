#!/usr/bin/env bash
# `make demo`: start the local control plane with its fake GPU nodes, show them, run a GPU Job on
# them, and show rota's admission engine deciding a contended moment on the example platform.
# The cluster keeps running afterwards so you can look around; `make cluster-down` stops it.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

up=$("$REPO/hack/cluster.sh" up)
eval "$(tail -n 1 <<<"$up")"
export PATH="$(sed -n 's/^bin=//p' "${ROTA_CLUSTER_DIR:-$REPO/.cluster}/endpoints"):$PATH"

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
echo "== rota's admission engine on the example platform (examples/gpu-cluster/: 4 teams, 1 cohort,"
echo "   32 A100s, MIG and time-sliced flavors, 3 priority tiers) at a busy moment:"
echo "   team-vision's sweep borrows 8 GPUs; team-llm's training and critical inference arrive."
echo "   \$ build/bin/rota simulate examples/gpu-cluster/*.yaml examples/simulate/busy-cluster.yaml"
"$REPO/build/bin/rota" simulate "$REPO"/examples/gpu-cluster/*.yaml "$REPO/examples/simulate/busy-cluster.yaml" |
  "$REPO/hack/summarize-decisions.sh"

echo
echo "The cluster is still running. Try it yourself:"
echo "  $(tail -n 1 <<<"$up")"
echo "  kubectl get nodes"
echo "Stop it with: make cluster-down"

#!/usr/bin/env bash
# Kueue's admission fair sharing on the local control plane: in a ClusterQueue with admissionScope
# UsageBasedAdmissionFairSharing, a LocalQueue that has used nothing goes before one that has,
# whatever the order the Jobs came in; the usage is in the LocalQueues' status.
#   tests/fairsharing/admission_fair_sharing_test.sh BUILD_DIR REPO    (KUBECONFIG: the local control plane)
set -euo pipefail
BUILD=$1
REPO=$2
work=$(mktemp -d)
ns=afs-$$
cq=afs-$$
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
  delete_queue "$cq" "$ns"
  rm -rf "$work"
}
trap cleanup EXIT
install_crds "$REPO"
cat >"$work/rota.yaml" <<'YAML'
metrics: {bindAddress: "0"}
health: {bindAddress: "0"}
admissionFairSharing: {usageHalfLifeTime: 10m, usageSamplingInterval: 1s}
YAML
"$BUILD/bin/rota" run --kubeconfig "$KUBECONFIG" --config "$work/rota.yaml" 2>"$work/rota.log" &
rota_pid=$!

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
  admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: $cq
      resources: [{name: cpu, nominalQuota: 1}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: heavy, namespace: $ns}
spec: {clusterQueue: $cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: light, namespace: $ns}
spec: {clusterQueue: $cq}
YAML
consumed() {  # QUEUE: its status' consumed cpu, or nothing
  kubectl get localqueue -n "$ns" "$1" \
    -o jsonpath='{.status.fairSharing.admissionFairSharingStatus.consumedResources.cpu}'
}

timed_job "$ns" first heavy 10 "{requests: {cpu: \"1\"}}"
wait_for 60 "Job first did not start" job_started "$ns" first
wait_for 30 "LocalQueue heavy's status shows no usage" bash -c "[[ -n \$(kubectl get localqueue -n $ns heavy \
  -o jsonpath='{.status.fairSharing.admissionFairSharingStatus.consumedResources.cpu}') ]]"
# heavy comes first in time, light after it: light has used nothing and goes first.
timed_job "$ns" heavy-next heavy 3 "{requests: {cpu: \"1\"}}"
sleep 1
timed_job "$ns" light-next light 3 "{requests: {cpu: \"1\"}}"
wait_for 60 "neither waiting Job started once Job first finished" \
  bash -c "[[ \$(kubectl get job -n $ns heavy-next light-next -o jsonpath='{.items[*].spec.suspend}') == *false* ]]"
job_started "$ns" light-next || fail "Job heavy-next started before light-next, though LocalQueue heavy had used more"
job_started "$ns" heavy-next && fail "both waiting Jobs started on 1 CPU"
light=$(consumed light)
echo "ok: LocalQueue heavy used $(consumed heavy) CPU (decayed), light ${light:-0}; light's Job went first"

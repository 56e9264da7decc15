#!/usr/bin/env bash
# How long a follower takes to resume admissions after the leader is killed (kill -9), on a
# cluster holding JOBS queued Jobs (and their Workloads), measured from the Lease's expiry to a
# probe Job's admission, ROUNDS times. Prints one line per round and the median.
#   bench/takeover.sh [BUILD_DIR]     (KUBECONFIG: the local control plane; JOBS=2000 ROUNDS=3)
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "${1:-$REPO/build}" && pwd)
ROTA=${ROTA_BIN:-$BUILD/bin/rota}
JOBS=${JOBS:-2000} ROUNDS=${ROUNDS:-3}
NS=rota-takeover
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
source "$REPO/tests/support/kueue_objects.sh"
kubectl get configmap rota-local-control-plane -n kube-system >/dev/null 2>&1 || { echo "not the local control plane" >&2; exit 1; }
install_crds "$REPO"
kubectl create namespace rota-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null
# A queue too small for the backlog: JOBS Jobs wait (each with its Workload), one runs.
make_queue "$NS" "$NS" 1
kubectl get -n "$NS" jobs -o name | grep -q . || {
  python3 - "$NS" "$JOBS" <<'PY' | kubectl apply -f - >/dev/null
import sys
ns, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    print(f"""---
apiVersion: batch/v1
kind: Job
metadata: {{name: backlog-{i}, namespace: {ns}, labels: {{kueue.x-k8s.io/queue-name: main}}}}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: main, image: busybox, resources: {{requests: {{cpu: "1"}}}}}}]""")
PY
}
# A second queue for the probes, with room.
make_queue "$NS-probe" "$NS-probe" 100
cat >"$work/rota.yaml" <<YAML
leaderElection: {enabled: true, leaseName: rota-takeover, leaseNamespace: rota-system, leaseDuration: 5s, renewDeadline: 3s, retryPeriod: 1s}
metrics: {bindAddress: "0"}
health: {bindAddress: "0"}
YAML
start() {  # start NAME: a replica logging to rota-NAME.log; its pid in $started
  "$ROTA" run --config "$work/rota.yaml" >>"$work/rota-$1.log" 2>&1 &
  started=$!
  pids+=("$started")
}
holder() { kubectl get lease -n rota-system rota-takeover -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
start a
a=$started
until grep -q 'caches synced' "$work/rota-a.log"; do sleep 0.5; done
start b
b=$started
sleep 5
wl_count() { kubectl get workloads -n "$NS" -o name | wc -l; }
until (($(wl_count) >= JOBS)); do sleep 2; done
results=()
for ((r = 1; r <= ROUNDS; r++)); do
  leader_pid=$(holder)
  leader_pid=${leader_pid##*_}  # (the identity is host_pid)
  if [[ $leader_pid == "$a" ]]; then leader=a; else leader=b; fi
  kill -9 "$leader_pid"
  killed=$(date +%s.%N)
  expiry=$(python3 -c "print($killed + 5)")
  submit_job "$NS-probe" "$NS-probe" "probe-$r-$$" low 1
  until [[ $(kubectl get job -n "$NS-probe" "probe-$r-$$" -o jsonpath='{.spec.suspend}') == false ]]; do sleep 0.1; done
  admitted=$(date +%s.%N)
  took=$(python3 -c "print(f'{max(0.0, $admitted - $expiry):.2f}')")
  echo "round $r: admissions resumed ${took} s after the Lease expired (${JOBS} Jobs waiting)"
  results+=("$took")
  # Restart the killed replica as the new follower.
  if [[ $leader == a ]]; then
    start a
    a=$started
  else
    start b
    b=$started
  fi
  sleep 8
done
printf '%s\n' "${results[@]}" | sort -n | awk '{v[NR]=$1} END {print "median: " v[int((NR+1)/2)] " s"}'

# Sourced by the shell integration tests: a small queue of their own and Jobs for it.
#
#   make_queue PREFIX NS CPU   Namespace NS; ResourceFlavor PREFIX; WorkloadPriorityClasses
#                              PREFIX-low (10) and PREFIX-high (1000); ClusterQueue PREFIX with
#                              CPU cpus of nominal quota, preempting lower priority within it;
#                              LocalQueue NS/main
#   submit_job PREFIX NS NAME PRIORITY CPU
#                              a suspended Job in NS/main at PREFIX-PRIORITY, asking to checkpoint
#                              (2s to answer) before it is preempted
#   delete_queue PREFIX NS     all of the above (the namespace without waiting)
#   install_crds REPO          the CRDs of REPO/crds, applied and established

install_crds() {
  kubectl apply --server-side --force-conflicts -f "$1/crds" >/dev/null
  # (kubectl wait errs while a new CRD has no conditions yet: ask again.)
  for ((i = 0; i < 60; i++)); do
    kubectl wait --for condition=established --timeout=10s -f "$1/crds" >/dev/null 2>&1 && return 0
    sleep 1
  done
  echo "the CRDs in $1/crds were not established within a minute" >&2
  return 1
}

make_queue() {
  local prefix=$1 ns=$2 cpu=$3
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Namespace
metadata: {name: $ns}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: $prefix}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: $prefix-low}
value: 10
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: $prefix-high}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: $prefix}
spec:
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: $ns}}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: $prefix
      resources: [{name: cpu, nominalQuota: "$cpu"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: main, namespace: $ns}
spec: {clusterQueue: $prefix}
YAML
}

submit_job() {
  local prefix=$1 ns=$2 name=$3 priority=$4 cpu=$5
  kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $name
  labels: {kueue.x-k8s.io/queue-name: main, kueue.x-k8s.io/priority-class: $prefix-$priority}
  annotations: {rota.dev/checkpoint: "true", rota.dev/checkpoint-timeout: "2s"}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, resources: {requests: {cpu: "$cpu"}}}]
YAML
}

delete_queue() {
  local prefix=$1 ns=$2
  kubectl delete namespace "$ns" --wait=false --ignore-not-found >/dev/null 2>&1 || true
  # (One kind per command: kubectl would read a second kind's name as a name of the first.)
  kubectl delete clusterqueue "$prefix" --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete workloadpriorityclass "$prefix-low" "$prefix-high" --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete resourceflavor "$prefix" --ignore-not-found >/dev/null 2>&1 || true
}

# A TCP port nobody listens on now.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])'; }

# start_visible_rota REPO ROTA_BINARY WORKDIR [YAML...]: starts `rota run` (its log in
# WORKDIR/rota.log, its pid in $rota_pid) serving the visibility API on a free port of every
# interface, with the YAML lines given added to its config, and registers the APIServices with
# the local control plane (hack/visibility.sh; unregister them when done). Returns once the
# apiserver calls the APIService Available, or 1 after a minute.
start_visible_rota() {
  local repo=$1 rota=$2 dir=$3 port certs i
  shift 3
  port=$(free_port)
  certs=$("$repo/hack/visibility.sh" cert-dir)
  {
    echo "visibility: {bindAddress: \":$port\", certFile: $certs/tls.crt, keyFile: $certs/tls.key}"
    printf '%s\n' "$@"
  } >"$dir/rota.yaml"
  "$rota" run --kubeconfig "$KUBECONFIG" --config "$dir/rota.yaml" 2>"$dir/rota.log" &
  rota_pid=$!
  "$repo/hack/visibility.sh" register "$port" 2>/dev/null
  for ((i = 0; i < 120; i++)); do
    grep -q "visibility API over HTTPS on port $port" "$dir/rota.log" &&
      [[ $(kubectl get apiservice v1beta2.visibility.kueue.x-k8s.io \
        -o jsonpath='{.status.conditions[?(@.type=="Available")].status}') == True ]] && return 0
    sleep 0.5
  done
  return 1
}

# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND every half second; after SECONDS calls
# the caller's `fail` with "DESCRIPTION within SECONDSs".
wait_for() {
  local limit=$1 what=$2 i
  shift 2
  for ((i = 0; i < limit * 2; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  fail "$what within ${limit}s"
}

# job_started NS JOB: whether rota has let the Job run (spec.suspend false).
job_started() { [[ $(kubectl get job -n "$1" "$2" -o jsonpath='{.spec.suspend}') == false ]]; }

# timed_job NS NAME QUEUE SECONDS RESOURCES: a suspended Job in LocalQueue QUEUE whose one pod kwok
# completes SECONDS after it starts; RESOURCES is the container's resources, as YAML flow.
timed_job() {
  kubectl apply -n "$1" -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $2
  labels: {kueue.x-k8s.io/queue-name: $3}
spec:
  suspend: true
  backoffLimit: 0
  template:
    metadata:
      annotations: {pod-complete.stage.kwok.x-k8s.io/delay: "${4}s"}
    spec:
      restartPolicy: Never
      containers: [{name: main, image: trainer, resources: $5}]
YAML
}

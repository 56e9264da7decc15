#!/usr/bin/env bash
# A real, local Kubernetes control plane on 127.0.0.1 for rota's demo and integration tests:
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok (fake GPU nodes whose
# pods become Ready, and Succeeded after the delay in their pod-complete annotation).
#
#   hack/cluster.sh up       build what is missing, start everything, wait until it is usable;
#                            idempotent; the last line printed is `export KUBECONFIG=<path>`
#   hack/cluster.sh down     stop exactly the processes `up` started and remove the state
#   hack/cluster.sh status   say what is running
#   hack/cluster.sh env      print the export line for a running cluster
#   hack/cluster.sh restart kube-apiserver   stop one component and start it again, same flags
#
# Environment: ROTA_CLUSTER_DIR (state, default <repo>/.cluster), ROTA_CACHE (binary cache,
# default ~/.cache/rota), ROTA_CLUSTER_TIMEOUT (seconds to wait for each component, default 120).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${ROTA_CLUSTER_DIR:-$REPO/.cluster}
TIMEOUT=${ROTA_CLUSTER_TIMEOUT:-120}
PKI=$STATE/pki
LOGS=$STATE/logs
PIDS=$STATE/pids
KUBECONFIG_FILE=$STATE/kubeconfig
# Started in this order, stopped in the reverse one.
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)

log() { printf '[cluster] %s\n' "$*" >&2; }
die() { printf '[cluster] error: %s\n' "$*" >&2; exit 1; }

pid_of() { [[ -f $PIDS/$1.pid ]] && cat "$PIDS/$1.pid"; }
alive() { local pid; pid=$(pid_of "$1") && [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; }

# A port nobody listens on, at or above $1, not yet handed out by this script.
declare -A TAKEN=()
free_port() {
  local p=$1
  while [[ -n ${TAKEN[$p]:-} ]] || (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do p=$((p + 1)); done
  TAKEN[$p]=1
  echo "$p"
}

# Start a component in its own session so `down` can stop it and everything it spawned. The
# command line is kept so `restart` can start it again the same way.
start() {
  local name=$1; shift
  printf '%q ' "$@" >"$PIDS/$name.cmd"
  setsid "$@" >>"$LOGS/$name.log" 2>&1 < /dev/null &
  echo $! >"$PIDS/$name.pid"
}

stop_component() {
  local c=$1 pid
  pid=$(pid_of "$c") || return 0
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
  # Each component leads its own session (setsid): signal the whole group.
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + 15))
  while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then
    log "$c (pid $pid) ignored SIGTERM; killing it"
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  fi
  log "stopped $c (pid $pid)"
}

# wait_for NAME DESCRIPTION COMMAND...: retry COMMAND until it succeeds, NAME stays alive and the
# timeout has not passed; on failure show the component's log tail.
wait_for() {
  local name=$1 what=$2; shift 2
  local deadline=$((SECONDS + TIMEOUT))
  until "$@" >/dev/null 2>&1; do
    if ! alive "$name"; then
      tail -n 30 "$LOGS/$name.log" >&2 || true
      die "$name exited before $what (log: $LOGS/$name.log)"
    fi
    if ((SECONDS >= deadline)); then
      tail -n 30 "$LOGS/$name.log" >&2 || true
      die "timed out after ${TIMEOUT}s waiting for $what (log: $LOGS/$name.log)"
    fi
    sleep 0.5
  done
}

# issue_cert BASE SUBJECT EXTENSIONS: a key BASE.key and a certificate BASE.crt signed by the
# local CA, with the given subject and X.509 extensions (printf format).
issue_cert() {
  openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$1.key" -out "$1.csr" 2>/dev/null
  printf "$3" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days "$days" -extfile "$1.ext" -out "$1.crt" 2>/dev/null
}

make_pki() {
  mkdir -p "$PKI"
  local days=3650
  openssl req -x509 -newkey rsa:2048 -nodes -days $days -subj "/CN=rota-local-ca" \
    -keyout "$PKI/ca.key" -out "$PKI/ca.crt" 2>/dev/null
  # Serving certificate for kube-apiserver.
  issue_cert "$PKI/apiserver" "/CN=kube-apiserver" \
    'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.0.0.1\nextendedKeyUsage=serverAuth\n'
  # Admin client certificate (group system:masters) used by the kubeconfig.
  issue_cert "$PKI/admin" "/O=system:masters/CN=rota-admin" 'extendedKeyUsage=clientAuth\n'
  # Serving certificate for rota's admission webhooks on 127.0.0.1 (the apiserver calls rota
  # there; hack/webhooks.sh registers the webhooks with this CA), in cert-manager's file names.
  mkdir -p "$PKI/webhook"
  issue_cert "$PKI/webhook" "/CN=rota-webhook" \
    'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:rota-webhook-service.rota-system.svc\nextendedKeyUsage=serverAuth\n'
  mv "$PKI/webhook.crt" "$PKI/webhook/tls.crt"
  mv "$PKI/webhook.key" "$PKI/webhook/tls.key"
  # The front proxy (API aggregation: the apiserver proxies to rota's visibility API with this
  # client certificate, signed by a CA of its own, as kubeadm sets it up).
  openssl req -x509 -newkey rsa:2048 -nodes -days $days -subj "/CN=rota-local-front-proxy-ca" \
    -keyout "$PKI/front-proxy-ca.key" -out "$PKI/front-proxy-ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=front-proxy-client" -keyout "$PKI/front-proxy-client.key" \
    -out "$PKI/front-proxy-client.csr" 2>/dev/null
  printf 'extendedKeyUsage=clientAuth\n' >"$PKI/front-proxy-client.ext"
  openssl x509 -req -in "$PKI/front-proxy-client.csr" -CA "$PKI/front-proxy-ca.crt" -CAkey "$PKI/front-proxy-ca.key" \
    -CAcreateserial -days "$days" -extfile "$PKI/front-proxy-client.ext" -out "$PKI/front-proxy-client.crt" 2>/dev/null
  # Serving certificate for rota's visibility API, under the name the aggregator checks
  # (SERVICE.NAMESPACE.svc of the APIService; hack/visibility.sh registers it with this CA).
  mkdir -p "$PKI/visibility"
  issue_cert "$PKI/visibility" "/CN=rota-visibility" \
    'subjectAltName=DNS:rota-visibility.rota-system.svc,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n'
  mv "$PKI/visibility.crt" "$PKI/visibility/tls.crt"
  mv "$PKI/visibility.key" "$PKI/visibility/tls.key"
  # Service account token signing keys.
  openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
  openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
  # A bearer token for tools that prefer one (curl); same rights as the admin certificate.
  local token
  token=$(openssl rand -hex 24)
  echo "$token" >"$PKI/admin.token"
  echo "$token,rota-admin,rota-admin,\"system:masters\"" >"$PKI/tokens.csv"
  chmod 600 "$PKI"/*.key "$PKI/webhook/tls.key" "$PKI/visibility/tls.key" "$PKI/admin.token" "$PKI/tokens.csv"
}

write_kubeconfig() {
  local server=$1
  cat >"$KUBECONFIG_FILE" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: rota-local
  cluster:
    server: $server
    certificate-authority: $PKI/ca.crt
users:
- name: rota-admin
  user:
    client-certificate: $PKI/admin.crt
    client-key: $PKI/admin.key
contexts:
- name: rota-local
  context:
    cluster: rota-local
    user: rota-admin
current-context: rota-local
EOF
  chmod 600 "$KUBECONFIG_FILE"
}

healthy() {
  [[ -f $KUBECONFIG_FILE ]] || return 1
  for c in "${COMPONENTS[@]}"; do alive "$c" || return 1; done
  kubectl --kubeconfig "$KUBECONFIG_FILE" --request-timeout=5s get --raw /readyz >/dev/null 2>&1
}

# The mark rota's integration tests look for before they touch a cluster: they install CRDs
# cluster-wide and register webhooks that fail closed, which only this throwaway cluster may get.
mark_cluster() {
  kubectl --kubeconfig "$KUBECONFIG_FILE" create configmap rota-local-control-plane -n kube-system \
    --from-literal=state="$STATE" --dry-run=client -o yaml |
    kubectl --kubeconfig "$KUBECONFIG_FILE" apply -f - >/dev/null
}

cmd_up() {
  if healthy; then
    mark_cluster
    log "already running (state: $STATE)"
    echo "export KUBECONFIG=$KUBECONFIG_FILE"
    return
  fi
  if [[ -d $STATE ]]; then
    log "found a stopped or partial cluster in $STATE: cleaning it up first"
    cmd_down
  fi
  command -v kubectl >/dev/null || die "kubectl is not on PATH"
  command -v openssl >/dev/null || die "openssl is not on PATH"
  local bin
  bin=$("$REPO/hack/build-k8s.sh" | tail -n 1)
  [[ -x $bin/kube-apiserver ]] || die "no control plane binaries in '$bin'"
  # Use the kubectl of the same release as the apiserver for everything below.
  export PATH="$bin:$PATH"
  local began=$SECONDS
  mkdir -p "$STATE" "$LOGS" "$PIDS" "$STATE/etcd"
  make_pki

  local etcd_port etcd_peer api_port kcm_port sched_port kwok_port
  etcd_port=$(free_port 23790)
  etcd_peer=$(free_port 23800)
  api_port=$(free_port 26443)
  kcm_port=$(free_port 20257)
  sched_port=$(free_port 20259)
  kwok_port=$(free_port 20250)
  local server=https://127.0.0.1:$api_port
  write_kubeconfig "$server"
  printf 'apiserver=%s\netcd=http://127.0.0.1:%s\nbin=%s\n' "$server" "$etcd_port" "$bin" >"$STATE/endpoints"

  log "starting etcd on 127.0.0.1:$etcd_port"
  start etcd "$bin/etcd" --name rota-local --data-dir "$STATE/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
    --initial-cluster "rota-local=http://127.0.0.1:$etcd_peer" --unsafe-no-fsync --log-level warn
  wait_for etcd "etcd to report healthy" curl -fsS "http://127.0.0.1:$etcd_port/health"

  log "starting kube-apiserver on $server"
  start kube-apiserver "$bin/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
    --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
    --client-ca-file "$PKI/ca.crt" --token-auth-file "$PKI/tokens.csv" \
    --authorization-mode Node,RBAC \
    --service-account-issuer https://kubernetes.default.svc \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --service-cluster-ip-range 10.0.0.0/24 --allow-privileged=true \
    --disable-admission-plugins ServiceAccount \
    --max-requests-inflight 1000 --max-mutating-requests-inflight 500 \
    --enable-priority-and-fairness=false \
    --requestheader-client-ca-file "$PKI/front-proxy-ca.crt" --requestheader-allowed-names front-proxy-client \
    --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
    --requestheader-extra-headers-prefix X-Remote-Extra- --requestheader-uid-headers X-Remote-Uid \
    --proxy-client-cert-file "$PKI/front-proxy-client.crt" --proxy-client-key-file "$PKI/front-proxy-client.key" \
    --enable-aggregator-routing=true
  wait_for kube-apiserver "kube-apiserver to be ready" \
    kubectl --kubeconfig "$KUBECONFIG_FILE" --request-timeout=5s get --raw /readyz

  log "starting kube-controller-manager and kube-scheduler"
  start kube-controller-manager "$bin/kube-controller-manager" \
    --kubeconfig "$KUBECONFIG_FILE" --leader-elect=false \
    --bind-address 127.0.0.1 --secure-port "$kcm_port" \
    --authorization-always-allow-paths /healthz,/readyz,/livez,/metrics \
    --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
    --use-service-account-credentials=false \
    --controllers '*,-cloud-node-lifecycle-controller,-service-lb-controller,-node-route-controller' \
    --node-monitor-grace-period 60s
  start kube-scheduler "$bin/kube-scheduler" \
    --kubeconfig "$KUBECONFIG_FILE" --leader-elect=false \
    --bind-address 127.0.0.1 --secure-port "$sched_port" \
    --authorization-always-allow-paths /healthz,/readyz,/livez,/metrics
  wait_for kube-controller-manager "kube-controller-manager to be healthy" \
    curl -fsSk "https://127.0.0.1:$kcm_port/healthz"
  wait_for kube-scheduler "kube-scheduler to be healthy" \
    curl -fsSk "https://127.0.0.1:$sched_port/healthz"

  log "starting kwok (fake nodes annotated kwok.x-k8s.io/node=fake)"
  start kwok "$bin/kwok" --kubeconfig "$KUBECONFIG_FILE" \
    --config "$REPO/hack/kwok-stages.yaml" \
    --manage-all-nodes=false --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
    --node-lease-duration-seconds 40 \
    --server-address "127.0.0.1:$kwok_port"
  wait_for kube-apiserver "the default namespace" \
    kubectl --kubeconfig "$KUBECONFIG_FILE" get namespace default

  mark_cluster

  log "creating the fake GPU nodes"
  kubectl --kubeconfig "$KUBECONFIG_FILE" apply -f "$REPO/hack/gpu-nodes.yaml" >/dev/null
  wait_for kwok "every fake node to be Ready" \
    kubectl --kubeconfig "$KUBECONFIG_FILE" wait --for=condition=Ready nodes --all --timeout=5s
  # New nodes carry node.kubernetes.io/not-ready until the node-lifecycle controller sees them
  # Ready; pods cannot schedule before that.
  wait_for kube-controller-manager "the not-ready taints to be lifted" no_node_taints
  # Pods need the namespace's default ServiceAccount only once the token controller runs.
  wait_for kube-controller-manager "the default ServiceAccount" \
    kubectl --kubeconfig "$KUBECONFIG_FILE" get serviceaccount default -n default

  log "ready in $((SECONDS - began))s: $(kubectl --kubeconfig "$KUBECONFIG_FILE" get nodes --no-headers | wc -l) nodes, apiserver $server"
  echo "export KUBECONFIG=$KUBECONFIG_FILE"
}

no_node_taints() {
  local tainted
  tainted=$(kubectl --kubeconfig "$KUBECONFIG_FILE" get nodes \
    -o jsonpath='{range .items[*]}{.spec.taints[*].key}{"\n"}{end}' | grep -c 'not-ready\|unreachable' || true)
  [[ $tainted == 0 ]]
}

cmd_down() {
  local i
  for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do stop_component "${COMPONENTS[$i]}"; done
  rm -rf "$STATE"
}

# Stops one component and starts it again with the same command line (tests use this to check
# that watches survive an apiserver restart).
cmd_restart() {
  local c=${1:-}
  [[ -f $PIDS/$c.cmd ]] || die "usage: $0 restart COMPONENT (one of: ${COMPONENTS[*]})"
  stop_component "$c"
  local cmd
  cmd=$(cat "$PIDS/$c.cmd")
  eval "start $c $cmd"
  if [[ $c == kube-apiserver ]]; then
    wait_for kube-apiserver "kube-apiserver to be ready again" \
      kubectl --kubeconfig "$KUBECONFIG_FILE" --request-timeout=5s get --raw /readyz
  fi
  log "restarted $c (pid $(pid_of "$c"))"
}

cmd_status() {
  if [[ ! -d $STATE ]]; then
    echo "no cluster (state dir $STATE does not exist)"
    return 1
  fi
  local c rc=0
  for c in "${COMPONENTS[@]}"; do
    if alive "$c"; then echo "$c: running (pid $(pid_of "$c"))"; else echo "$c: not running"; rc=1; fi
  done
  [[ -f $STATE/endpoints ]] && cat "$STATE/endpoints"
  return $rc
}

cmd_env() {
  healthy || die "no healthy cluster in $STATE; run: hack/cluster.sh up"
  echo "export KUBECONFIG=$KUBECONFIG_FILE"
}

case ${1:-} in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  env) cmd_env ;;
  restart) cmd_restart "${2:-}" ;;
  *) echo "usage: $0 up|down|status|env|restart COMPONENT" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# Registers rota's visibility API (Kueue's visibility.kueue.x-k8s.io, v1beta2 and v1beta1) with
# the local control plane as an aggregated API, served by a rota on this machine on PORT with the
# certificate hack/cluster.sh made ($ROTA_CLUSTER_DIR/pki/visibility/tls.{crt,key}); or removes
# it again. The apiserver reaches rota through the Service rota-system/rota-visibility, whose
# EndpointSlice names this machine's address (the apiserver runs with --enable-aggregator-routing,
# and an endpoint may not be a loopback address): rota must listen there, e.g. on ":PORT".
#
#   hack/visibility.sh register PORT
#   hack/visibility.sh unregister
#   hack/visibility.sh cert-dir          print the directory holding tls.crt and tls.key
#   hack/visibility.sh address           print the address the apiserver will call
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${ROTA_CLUSTER_DIR:-$REPO/.cluster}
PKI=$STATE/pki
die() { echo "[visibility] error: $*" >&2; exit 1; }
[[ -f $PKI/ca.crt ]] || die "no local control plane in $STATE (run hack/cluster.sh up first)"
[[ -f $PKI/visibility/tls.crt ]] || die "$STATE was made before aggregation was set up: hack/cluster.sh down, then up"
bin=$(sed -n 's/^bin=//p' "$STATE/endpoints")
export PATH=$bin:$PATH
export KUBECONFIG=${KUBECONFIG:-$STATE/kubeconfig}

# The first IPv4 address of this machine that is not a loopback one.
address() {
  local a
  for a in $(hostname -I 2>/dev/null); do
    [[ $a =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ && ! $a =~ ^127\. ]] && { echo "$a"; return; }
  done
  die "this machine has no IPv4 address besides loopback, which an EndpointSlice may not name"
}

register() {
  local port=$1 ip ca
  ip=$(address)
  ca=$(base64 -w0 "$PKI/ca.crt")
  kubectl create namespace rota-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  kubectl apply -f - >&2 <<YAML
apiVersion: v1
kind: Service
metadata: {name: rota-visibility, namespace: rota-system}
spec:
  ports: [{name: https, port: 443, targetPort: $port, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: rota-visibility-local
  namespace: rota-system
  labels: {kubernetes.io/service-name: rota-visibility, endpointslice.kubernetes.io/managed-by: rota-hack}
addressType: IPv4
ports: [{name: https, port: $port, protocol: TCP}]
endpoints: [{addresses: ["$ip"], conditions: {ready: true}}]
YAML
  local version priority
  for version in v1beta2:200 v1beta1:100; do
    priority=${version#*:} version=${version%:*}
    kubectl apply -f - >&2 <<YAML
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: $version.visibility.kueue.x-k8s.io}
spec:
  group: visibility.kueue.x-k8s.io
  version: $version
  groupPriorityMinimum: 100
  versionPriority: $priority
  service: {name: rota-visibility, namespace: rota-system, port: 443}
  caBundle: $ca
YAML
  done
}

case ${1:-} in
  register)
    [[ ${2:-} =~ ^[0-9]+$ ]] || die "usage: hack/visibility.sh register PORT"
    register "$2"
    ;;
  unregister)
    kubectl delete --ignore-not-found apiservice v1beta2.visibility.kueue.x-k8s.io v1beta1.visibility.kueue.x-k8s.io >&2
    kubectl delete --ignore-not-found -n rota-system service/rota-visibility endpointslice/rota-visibility-local >&2
    ;;
  cert-dir) echo "$PKI/visibility" ;;
  address) address ;;
  *) die "usage: hack/visibility.sh register PORT | unregister | cert-dir | address" ;;
esac

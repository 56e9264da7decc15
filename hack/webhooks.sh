#!/usr/bin/env bash
# Registers rota's admission webhooks (config/local) with the local control plane, pointing at a
# rota serving them on https://127.0.0.1:PORT with the certificate hack/cluster.sh made
# ($ROTA_CLUSTER_DIR/pki/webhook/tls.{crt,key}), or removes them again.
#
#   hack/webhooks.sh register PORT
#   hack/webhooks.sh unregister
#   hack/webhooks.sh cert-dir          print the directory holding tls.crt and tls.key
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${ROTA_CLUSTER_DIR:-$REPO/.cluster}
PKI=$STATE/pki
die() { echo "[webhooks] error: $*" >&2; exit 1; }
[[ -f $PKI/ca.crt ]] || die "no local control plane in $STATE (run hack/cluster.sh up first)"
bin=$(sed -n 's/^bin=//p' "$STATE/endpoints")
export PATH=$bin:$PATH
export KUBECONFIG=${KUBECONFIG:-$STATE/kubeconfig}

case ${1:-} in
  register)
    port=${2:-}
    [[ $port =~ ^[0-9]+$ ]] || die "usage: hack/webhooks.sh register PORT"
    ca=$(base64 -w0 "$PKI/ca.crt")
    kubectl kustomize "$REPO/config/local" |
      sed -e "s|ROTA_WEBHOOK_BASE|https://127.0.0.1:$port|" -e "s|ROTA_CA_BUNDLE|$ca|" |
      kubectl apply -f - >&2
    ;;
  unregister)
    kubectl delete --ignore-not-found mutatingwebhookconfiguration rota-mutating-webhook-configuration >&2
    kubectl delete --ignore-not-found validatingwebhookconfiguration rota-validating-webhook-configuration >&2
    ;;
  cert-dir) echo "$PKI/webhook" ;;
  *) die "usage: hack/webhooks.sh register PORT | unregister | cert-dir" ;;
esac

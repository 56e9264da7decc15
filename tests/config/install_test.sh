#!/usr/bin/env bash
# The install a platform admin runs: `kubectl apply -k config/default` (cert-manager) and
# `kubectl apply -k config/dev` (no cert-manager) pass the apiserver's dry run, then apply for
# real on the local control plane; the Deployment's pods are admitted in rota-system at the
# "restricted" Pod Security level and scheduled (on kwok's fake nodes, which run no container:
# tests/image/in_cluster.sh runs rota as such a pod would). config/prometheus (ServiceMonitor,
# PrometheusRule) passes the same with the Prometheus Operator's CRDs. cert-manager's and the
# operator's CRDs come from their Go modules (hack/module-crds.sh); their controllers are not
# needed to admit the objects.
#   tests/config/install_test.sh REPO    (KUBECONFIG: the local control plane)
set -euo pipefail
REPO=$1
work=$(mktemp -d)
fail() { echo "FAIL: $*" >&2; exit 1; }
# What a real apply leaves that would disturb other tests: the webhook configurations and the
# APIServices (no rota serves them here: an aggregated API nobody answers fails discovery for
# every client) and the workloads. The CRDs, RBAC and namespace stay, as other tests use them.
remove() {
  kubectl delete apiservice v1beta2.visibility.kueue.x-k8s.io v1beta1.visibility.kueue.x-k8s.io --ignore-not-found >/dev/null
  kubectl delete mutatingwebhookconfiguration rota-mutating-webhook-configuration --ignore-not-found >/dev/null
  kubectl delete validatingwebhookconfiguration rota-validating-webhook-configuration --ignore-not-found >/dev/null
  kubectl delete -n rota-system deployment/rota-controller pdb/rota-controller service/rota-webhook-service \
    service/rota-metrics-service service/rota-visibility --ignore-not-found --wait=true >/dev/null
  kubectl delete -n rota-system configmap -l '!kubernetes.io/metadata.name' --field-selector metadata.name!=kube-root-ca.crt \
    --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete -n rota-system issuer,certificate --all --ignore-not-found >/dev/null 2>&1 || true
}
trap 'remove; rm -rf "$work"' EXIT

kubectl get configmap rota-local-control-plane -n kube-system >/dev/null 2>&1 ||
  fail "refusing to run against a cluster that is not hack/cluster.sh's local control plane"
kubectl apply --server-side --force-conflicts -f "$("$REPO/hack/module-crds.sh" cert-manager)" >/dev/null
operator_crds=$("$REPO/hack/module-crds.sh" prometheus-operator)
kubectl apply --server-side --force-conflicts -f "$operator_crds/monitoring.coreos.com_prometheusrules.yaml" \
  -f "$operator_crds/monitoring.coreos.com_servicemonitors.yaml" >/dev/null
# (kubectl wait errs while a new CRD has no conditions yet: ask again.)
for ((i = 0; i < 60; i++)); do
  kubectl wait --for condition=established --timeout=10s crd/issuers.cert-manager.io \
    crd/certificates.cert-manager.io crd/prometheusrules.monitoring.coreos.com \
    crd/servicemonitors.monitoring.coreos.com >/dev/null 2>&1 && break
  sleep 1
done

# The restricted level is enforced here: a pod without the hardening is refused.
kubectl create namespace rota-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl label namespace rota-system pod-security.kubernetes.io/enforce=restricted --overwrite >/dev/null
if kubectl run -n rota-system psa-probe --image=busybox --dry-run=server -o name >/dev/null 2>&1; then
  fail "an unhardened pod was admitted in rota-system: Pod Security admission is not enforcing"
fi

check_overlay() {
  local overlay=$1 out
  kubectl kustomize "$REPO/config/$overlay" >"$work/$overlay.yaml"
  out=$(kubectl apply --dry-run=server -f "$work/$overlay.yaml" 2>&1) || fail "config/$overlay: server dry run: $out"
  out=$(kubectl apply -f "$work/$overlay.yaml" 2>&1) || fail "config/$overlay: apply: $out"
  # (Objects an earlier test applied server-side draw a last-applied warning; any other counts.)
  warned=$(grep -i 'warning' <<<"$out" | grep -v 'last-applied-configuration' || true)
  [[ -z $warned ]] || fail "config/$overlay: the apiserver warned: $warned"
  for ((i = 0; i < 120; i++)); do
    ready=$(kubectl get deployment -n rota-system rota-controller -o jsonpath='{.status.readyReplicas}')
    [[ $ready == 2 ]] && break
    sleep 0.5
  done
  refused=$(kubectl get events -n rota-system --field-selector reason=FailedCreate -o jsonpath='{.items[*].message}')
  [[ -z $refused ]] || fail "config/$overlay: pods refused: $refused"
  [[ $ready == 2 ]] || fail "config/$overlay: $ready of 2 replicas ready ($(kubectl get pods -n rota-system -o wide 2>&1))"
  nodes=$(kubectl get pods -n rota-system -l app.kubernetes.io/name=rota -o jsonpath='{.items[*].spec.nodeName}' |
    tr ' ' '\n' | sort -u | wc -l)
  [[ $nodes == 2 ]] || fail "config/$overlay: both replicas on one node"
  kubectl get pdb -n rota-system rota-controller >/dev/null || fail "config/$overlay: no PodDisruptionBudget"
  echo "ok: config/$overlay: dry run, apply, 2 replicas on 2 nodes at the restricted level"
  remove
  kubectl delete events -n rota-system --all >/dev/null
}
check_overlay default
check_overlay dev
out=$(kubectl apply --dry-run=server -k "$REPO/config/prometheus" 2>&1) || fail "config/prometheus: server dry run: $out"
out=$(kubectl apply -k "$REPO/config/prometheus" 2>&1) || fail "config/prometheus: apply: $out"
kubectl delete -k "$REPO/config/prometheus" >/dev/null
echo "ok: config/prometheus: dry run and apply of the ServiceMonitor and PrometheusRule"

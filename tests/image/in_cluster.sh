#!/usr/bin/env bash
# rota from its image, run against the local control plane exactly as its pod would be: the
# in-cluster environment (KUBERNETES_SERVICE_HOST/PORT), a token of config/rbac's ServiceAccount
# from the TokenRequest API, ca.crt and namespace at the standard path, the non-root user, the
# image's own root file system (chroot), mounted read-only as the Deployment's
# readOnlyRootFilesystem makes it, and nothing else. It must elect itself leader, admit
# Jobs, preempt one (asking its pods to checkpoint first), write status and Events, and never be
# refused (403): this test is the proof that config/rbac's rights are enough.
#   tests/image/in_cluster.sh BUILD_DIR REPO    (KUBECONFIG: the local control plane)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/unpack.sh"
source "$HERE/../support/kueue_objects.sh"
BUILD=$1 REPO=$2
NS=rota-image-test-$$  # (a fresh one: the last run's may still be terminating)
work=$(mktemp -d)
rota_pid=""
fail() {
  echo "FAIL: $*" >&2
  [[ -f $work/rota.log ]] && { echo "--- rota's log (last 40 lines)" >&2; tail -n 40 "$work/rota.log" >&2; }
  exit 1
}
webhooks_applied="" mounted=""
cleanup() {
  [[ -n $rota_pid ]] && kill "$rota_pid" 2>/dev/null && wait "$rota_pid" 2>/dev/null
  if [[ -n $webhooks_applied ]]; then
    kubectl delete mutatingwebhookconfiguration rota-mutating-webhook-configuration --ignore-not-found >/dev/null 2>&1
    kubectl delete validatingwebhookconfiguration rota-validating-webhook-configuration --ignore-not-found >/dev/null 2>&1
  fi
  delete_queue rota-image-test "$NS"
  kubectl delete clusterrolebinding rota-image-test-scraper --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete lease -n rota-system rota-controller --ignore-not-found >/dev/null 2>&1 || true
  [[ -n $mounted ]] && umount "$readonly_root"
  rm -rf "$work"
}
trap cleanup EXIT
# wait_for SECONDS WHAT COMMAND...: polls COMMAND until it succeeds.
wait_for() {
  local limit=$1 what=$2
  shift 2
  for ((i = 0; i < limit * 2; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    [[ -n $rota_pid ]] && ! kill -0 "$rota_pid" 2>/dev/null && fail "rota exited while waiting for $what"
    sleep 0.5
  done
  fail "$what did not happen within ${limit}s"
}

kubectl get configmap rota-local-control-plane -n kube-system >/dev/null 2>&1 ||
  fail "refusing to run against a cluster that is not hack/cluster.sh's local control plane"
install_crds "$REPO"
kubectl create namespace rota-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl apply -k "$REPO/config/rbac" >/dev/null
kubectl delete lease -n rota-system rota-controller --ignore-not-found >/dev/null

unpack_image "$BUILD/rota-image.tar" "$work"
root=$work/bundle/rootfs
user=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["process"]["user"]; print("%d:%d" % (p["uid"], p["gid"]))' \
  "$work/bundle/config.json")
sa=$root/var/run/secrets/kubernetes.io/serviceaccount
mkdir -p "$sa" "$root/etc/rota"
kubectl create token rota-controller -n rota-system --duration 1h >"$sa/token"
kubectl config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d >"$sa/ca.crt"
[[ -s $sa/ca.crt ]] || cp "$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.certificate-authority}')" "$sa/ca.crt"
echo -n rota-system >"$sa/namespace"
server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
hostport=${server#https://}
cat >"$root/etc/rota/rota.yaml" <<YAML
leaderElection: {enabled: true, leaseName: rota-controller, leaseNamespace: rota-system}
metrics: {bindAddress: "127.0.0.1:0", secureServing: true}
health: {bindAddress: "127.0.0.1:0"}
checkpoint: {defaultTimeout: 5m, maxTimeout: 30m}
YAML
chmod -R a+rX "$root/var/run" "$root/etc/rota"
# rota runs from a read-only view of the root file system (the files above stay writable here).
readonly_root=$work/readonly-root
mkdir -p "$readonly_root"
mount --bind "$root" "$readonly_root" && mount -o remount,ro,bind "$readonly_root" ||
  fail "cannot mount the image's root file system read-only (the test runs as root)"
mounted=1

env -i KUBERNETES_SERVICE_HOST="${hostport%:*}" KUBERNETES_SERVICE_PORT="${hostport##*:}" \
  "$(command -v chroot)" --userspec="$user" "$readonly_root" /usr/bin/rota run --config /etc/rota/rota.yaml \
  >"$work/rota.log" 2>&1 &
rota_pid=$!

make_queue rota-image-test "$NS" 1
job() { submit_job rota-image-test "$NS" "$1" "$2" 1; }  # job NAME PRIORITY
unsuspended() { [[ $(kubectl get job -n "$NS" "$1" -o jsonpath='{.spec.suspend}') == false ]]; }
has_pod() { [[ -n $(kubectl get pods -n "$NS" -l batch.kubernetes.io/job-name="$1" -o name) ]]; }
held() { [[ $(kubectl get lease -n rota-system rota-controller -o jsonpath='{.spec.holderIdentity}') != "" ]]; }
cq_admitted() { [[ $(kubectl get clusterqueue rota-image-test -o jsonpath='{.status.admittedWorkloads}') == "$1" ]]; }
suspended() { [[ $(kubectl get job -n "$NS" "$1" -o jsonpath='{.spec.suspend}') == true ]]; }
has_event() { kubectl get events -n "$NS" -o jsonpath='{.items[*].reason}' | grep -qw "$1"; }

wait_for 60 "rota taking the Lease" held
job low low
wait_for 60 "the low-priority Job's admission" unsuspended low
wait_for 60 "the low-priority Job's pod" has_pod low
wait_for 30 "ClusterQueue status showing 1 admitted workload" cq_admitted 1
job high high
wait_for 60 "the low-priority Job's suspension (checkpoint timeout, then preemption)" suspended low
wait_for 60 "the high-priority Job's admission" unsuspended high
wait_for 30 "a Preempted Event" has_event Preempted
wait_for 30 "a QuotaReserved Event" has_event QuotaReserved
reason=$(kubectl get workloads -n "$NS" -o jsonpath='{range .items[*]}{range .status.conditions[?(@.type=="Evicted")]}{.reason}{end}{end}')
[[ $reason == *Preempted* ]] || fail "the low-priority Workload's Evicted reason is '$reason', not Preempted"
requested=$(kubectl get events -n "$NS" -o jsonpath='{.items[*].reason}')
[[ $requested == *CheckpointRequested* ]] || fail "no CheckpointRequested Event (Events: $requested)"
# The probes the Deployment points at: live (the loop makes progress) and ready (caches synced).
health_port=$(sed -n 's/.*serving \/healthz and \/readyz on port \([0-9]*\).*/\1/p' "$work/rota.log")
for probe in healthz readyz; do
  answer=$(curl -s -w ' %{http_code}' "http://127.0.0.1:$health_port/$probe")
  [[ $answer == "ok"*" 200" ]] || fail "/$probe answered '$answer'"
done
# Secure metrics: only a token allowed `get` on /metrics (rota-metrics-reader) is answered.
port=$(sed -n 's/.*serving \/metrics over HTTPS on port \([0-9]*\).*/\1/p' "$work/rota.log")
[[ -n $port ]] || fail "rota did not log the port of its HTTPS /metrics"
kubectl create serviceaccount -n "$NS" scraper >/dev/null
kubectl create clusterrolebinding rota-image-test-scraper --clusterrole rota-metrics-reader \
  --serviceaccount "$NS:scraper" >/dev/null
scrape() {  # scrape TOKEN: prints the HTTP status, the body into $work/scrape
  curl -sk -o "$work/scrape" -w '%{http_code}' ${1:+-H "Authorization: Bearer $1"} "https://127.0.0.1:$port/metrics"
}
[[ $(scrape "") == 401 ]] || fail "/metrics without a token: $(cat "$work/scrape")"
[[ $(scrape "$(cat "$sa/token")") == 403 ]] || fail "/metrics for rota's own ServiceAccount: $(cat "$work/scrape")"
status=$(scrape "$(kubectl create token -n "$NS" scraper)")
[[ $status == 200 ]] || fail "/metrics for a token bound to rota-metrics-reader: $status $(cat "$work/scrape")"
grep -q '^kueue_admitted_workloads_total{cluster_queue="rota-image-test"' "$work/scrape" ||
  fail "/metrics over HTTPS has no kueue_admitted_workloads_total for the test's queue"
kill -0 "$rota_pid" || fail "rota exited"
# (A namespace being deleted refuses new objects with 403 too: that is not a missing right.)
if grep -E -i '\b403\b|forbidden' "$work/rota.log" | grep -v 'because it is being terminated' >&2; then
  fail "rota was refused by the apiserver with config/rbac's rights (lines above)"
fi
# internalCertManagement (config/dev): with only config/dev's extra rights, rota makes its webhook
# certificate, keeps it in the Secret, makes the webhook configurations trust its CA, and serves
# it. (No Job is created meanwhile: nothing routes the apiserver's webhook calls to this process.)
kill "$rota_pid"
wait "$rota_pid" || true
rota_pid=""
kubectl apply -f "$REPO/config/dev/cert-rbac.yaml" >/dev/null
kubectl delete secret -n rota-system rota-webhook-server-cert --ignore-not-found >/dev/null
kubectl kustomize "$REPO/config/dev" | python3 -c '
import sys, yaml
for d in yaml.safe_load_all(sys.stdin):
    if d and d["kind"].endswith("WebhookConfiguration"):
        print("---"); print(yaml.safe_dump(d))' | kubectl apply -f - >/dev/null
webhooks_applied=1
cat >"$root/etc/rota/rota.yaml" <<YAML
metrics: {bindAddress: "0"}
health: {bindAddress: "0"}
webhook: {bindAddress: "127.0.0.1:0"}
internalCertManagement: {enable: true}
YAML
webhook_port() { sed -n 's/.*admission webhooks over HTTPS on port \([0-9]*\).*/\1/p' "$work/rota.log" | grep .; }
secret_field() { kubectl get secret -n rota-system rota-webhook-server-cert -o jsonpath="{.data.${1//./\\.}}" | base64 -d; }
# serve_own_cert: starts rota, waits for its webhooks, and checks that the Secret's CA is what
# every webhook trusts and what the served certificate verifies against for the Service's name.
serve_own_cert() {
  env -i KUBERNETES_SERVICE_HOST="${hostport%:*}" KUBERNETES_SERVICE_PORT="${hostport##*:}" \
    "$(command -v chroot)" --userspec="$user" "$readonly_root" /usr/bin/rota run --config /etc/rota/rota.yaml \
    >"$work/rota.log" 2>&1 &
  rota_pid=$!
  wait_for 30 "the webhooks serving with rota's own certificate" webhook_port
  secret_field ca.crt >"$work/ca.crt"
  local bundles verdicts
  bundles=$(for kind in mutatingwebhookconfiguration/rota-mutating-webhook-configuration \
    validatingwebhookconfiguration/rota-validating-webhook-configuration; do
    kubectl get "$kind" -o jsonpath='{range .webhooks[*]}{.clientConfig.caBundle}{"\n"}{end}'
  done | sort -u)
  [[ $(wc -l <<<"$bundles") == 1 && $(base64 -d <<<"$bundles") == "$(cat "$work/ca.crt")" ]] ||
    fail "the webhooks do not all trust the Secret's CA"
  # (s_client prints a verdict per session, and a TLS 1.3 ticket may make a second one.)
  verdicts=$(openssl s_client -connect "127.0.0.1:$(webhook_port)" -CAfile "$work/ca.crt" \
    -verify_hostname rota-webhook-service.rota-system.svc -verify_return_error </dev/null 2>&1 |
    sed -n 's/.*Verify return code: //p' | sort -u)
  [[ $verdicts == "0 (ok)" ]] ||
    fail "the webhook server's certificate does not verify against the Secret's CA for the Service's name: $verdicts"
  kill "$rota_pid"
  wait "$rota_pid" || true
  rota_pid=""
}
serve_own_cert
# A serving certificate 10 days from expiry is renewed at start, signed by the same CA, so the
# webhook configurations and other replicas need no change.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 -subj /CN=test-ca \
  -addext basicConstraints=critical,CA:TRUE -keyout "$work/old-ca.key" -out "$work/old-ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=rota-webhook-service.rota-system.svc \
  -keyout "$work/old.key" -out "$work/old.csr" 2>/dev/null
printf 'subjectAltName=DNS:rota-webhook-service.rota-system.svc,DNS:rota-webhook-service.rota-system.svc.cluster.local\n' \
  >"$work/san.ext"
openssl x509 -req -in "$work/old.csr" -CA "$work/old-ca.crt" -CAkey "$work/old-ca.key" -CAcreateserial -days 10 \
  -extfile "$work/san.ext" -out "$work/old.crt" 2>/dev/null
kubectl delete secret -n rota-system rota-webhook-server-cert >/dev/null
kubectl create secret generic -n rota-system rota-webhook-server-cert --type kubernetes.io/tls \
  --from-file=ca.crt="$work/old-ca.crt" --from-file=ca.key="$work/old-ca.key" \
  --from-file=tls.crt="$work/old.crt" --from-file=tls.key="$work/old.key" >/dev/null
serve_own_cert
cmp -s "$work/ca.crt" "$work/old-ca.crt" || fail "renewing the serving certificate replaced the CA"
[[ $(secret_field tls.crt) != "$(cat "$work/old.crt")" ]] || fail "a certificate 10 days from expiry was not renewed"
echo "ok: internalCertManagement: Secret, caBundle and the served certificate agree; renewal keeps the CA"

echo "ok: rota from the image, as ServiceAccount rota-system/rota-controller, led, admitted, preempted, wrote status and Events, and served /metrics to an authorized token only, with no 403 of its own"

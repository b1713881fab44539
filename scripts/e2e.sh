#!/usr/bin/env bash
# End-to-end check of Foresight against the cluster KUBECONFIG points to (kind, k3d, minikube,
# or a real cluster where you may create a namespace, a CRD and cluster RBAC).
#
# It installs the CRD and the RBAC of deploy/, runs the controller on this machine as the
# controller's service account (so the RBAC is what is tested), creates a Deployment and an
# EffectiveHorizontalPodAutoscaler whose cron window is open now, and checks that
#   1. the Deployment's replicas follow the cron target,
#   2. the autoscaler's status and events are written,
#   3. the API server rejects an invalid autoscaler with the CRD's CEL message.
# Everything it created is removed on exit, whatever happened.
#
# Environment:
#   FORESIGHT_BIN            a prebuilt foresight binary (default: cargo build --release)
#   E2E_NAMESPACE            namespace for the test objects (default: foresight-e2e)
#   E2E_PORT                 local port of the controller's /readyz and /metrics (default 18080)
#   E2E_TIMEOUT              seconds to wait for each step (default 120)
#   E2E_AS_SERVICE_ACCOUNT   1 (default): run as the controller's service account; 0: as you
#   E2E_CONTROLLER_ARGS      extra arguments for `foresight controller`
#   E2E_LOG                  where the controller's log is kept, pass or fail
#                            (default: ./foresight-e2e-controller.log)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NS="${E2E_NAMESPACE:-foresight-e2e}"
PORT="${E2E_PORT:-18080}"
TIMEOUT="${E2E_TIMEOUT:-120}"
AS_SA="${E2E_AS_SERVICE_ACCOUNT:-1}"
SYSTEM_NS="foresight-system"
CRD="effectivehorizontalpodautoscalers.autoscaling.foresight.dev"
WORK="$(mktemp -d)"
LOG="${E2E_LOG:-$PWD/foresight-e2e-controller.log}"
CONTROLLER_PID=""
CREATED_CRD=0
CREATED_SYSTEM=0

log() { printf '%s e2e: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
fail() {
  log "FAIL: $*"
  exit 1
}

cleanup() {
  local status=$?
  if [[ -n "$CONTROLLER_PID" ]]; then
    kill "$CONTROLLER_PID" 2>/dev/null || true
    wait "$CONTROLLER_PID" 2>/dev/null || true
  fi
  if [[ $status -ne 0 && -f "$LOG" ]]; then
    log "controller log (last 40 lines):"
    tail -n 40 "$LOG" >&2 || true
  fi
  kubectl delete namespace "$NS" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  if [[ $CREATED_SYSTEM -eq 1 ]]; then
    kubectl delete -f "$ROOT/deploy/rbac.yaml" --ignore-not-found >/dev/null 2>&1 || true
    kubectl delete namespace "$SYSTEM_NS" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  fi
  if [[ $CREATED_CRD -eq 1 ]]; then
    kubectl delete crd "$CRD" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  fi
  rm -rf "$WORK"
  log "controller log kept at $LOG"
  if [[ $status -eq 0 ]]; then log "PASS"; fi
  exit "$status"
}
trap cleanup EXIT

# Polls `$@` until it prints `want`, or fails after TIMEOUT seconds.
wait_for_output() {
  local want="$1" what="$2"
  shift 2
  local deadline=$((SECONDS + TIMEOUT)) got=""
  while ((SECONDS < deadline)); do
    got="$("$@" 2>/dev/null || true)"
    if [[ "$got" == "$want" ]]; then
      log "$what: $got"
      return 0
    fi
    sleep 2
  done
  fail "$what: expected '$want', still '$got' after ${TIMEOUT}s"
}

for tool in kubectl curl base64 date; do
  command -v "$tool" >/dev/null || fail "$tool is required"
done
kubectl version >/dev/null || fail "no cluster reachable through KUBECONFIG"

if [[ -z "${FORESIGHT_BIN:-}" ]]; then
  log "building foresight (release)"
  cargo build --release --quiet --manifest-path "$ROOT/Cargo.toml" --bin foresight
  FORESIGHT_BIN="$ROOT/target/release/foresight"
fi
[[ -x "$FORESIGHT_BIN" ]] || fail "$FORESIGHT_BIN is not an executable"

# --- CRD and RBAC ---------------------------------------------------------------------------
if ! kubectl get crd "$CRD" >/dev/null 2>&1; then CREATED_CRD=1; fi
log "installing the CRD"
"$FORESIGHT_BIN" crd | kubectl apply --server-side --force-conflicts -f - >/dev/null
kubectl wait --for=condition=Established --timeout="${TIMEOUT}s" "crd/$CRD" >/dev/null

if ! kubectl get namespace "$SYSTEM_NS" >/dev/null 2>&1; then CREATED_SYSTEM=1; fi
log "installing the RBAC"
kubectl apply -f "$ROOT/deploy/namespace.yaml" -f "$ROOT/deploy/rbac.yaml" >/dev/null

# --- the controller, as its service account ---------------------------------------------------
CONTROLLER_KUBECONFIG="${KUBECONFIG:-$HOME/.kube/config}"
if [[ "$AS_SA" == "1" ]]; then
  log "running the controller as serviceaccount $SYSTEM_NS/foresight-controller"
  # The TokenRequest API directly: `kubectl create token` needs kubectl 1.24 or later.
  token="$(kubectl create --raw "/api/v1/namespaces/$SYSTEM_NS/serviceaccounts/foresight-controller/token" \
    -f - <<<'{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":3600}}' |
    sed -n 's/.*"token":"\([^"]*\)".*/\1/p')"
  [[ -n "$token" ]] || fail "could not get a token for the controller's service account"
  server="$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')"
  ca_data="$(kubectl config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')"
  ca_file="$(kubectl config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority}')"
  CONTROLLER_KUBECONFIG="$WORK/controller.kubeconfig"
  k() { kubectl config --kubeconfig="$CONTROLLER_KUBECONFIG" "$@" >/dev/null; }
  if [[ -n "$ca_data" ]]; then
    printf '%s' "$ca_data" | base64 -d >"$WORK/ca.crt"
    k set-cluster e2e --server="$server" --certificate-authority="$WORK/ca.crt" --embed-certs=true
  elif [[ -n "$ca_file" ]]; then
    k set-cluster e2e --server="$server" --certificate-authority="$ca_file" --embed-certs=true
  else
    k set-cluster e2e --server="$server"
  fi
  k set-credentials e2e --token="$token"
  k set-context e2e --cluster=e2e --user=e2e --namespace="$SYSTEM_NS"
  k use-context e2e
fi

read -r -a extra_args <<<"${E2E_CONTROLLER_ARGS:-}"
KUBECONFIG="$CONTROLLER_KUBECONFIG" "$FORESIGHT_BIN" controller \
  --log-format=human \
  --metrics-address="127.0.0.1:$PORT" \
  --leader-elect=true \
  --lease-namespace="$SYSTEM_NS" \
  --lease-name=foresight-controller \
  --identity="e2e-${HOSTNAME:-local}" \
  "${extra_args[@]}" >"$LOG" 2>&1 &
CONTROLLER_PID=$!
wait_for_output "200" "controller /readyz" \
  curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/readyz"

# --- a workload and an autoscaler whose cron window is open now -------------------------------
kubectl create namespace "$NS" >/dev/null
kubectl apply -n "$NS" -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: pause
          image: registry.k8s.io/pause:3.9
          resources: {requests: {cpu: 10m, memory: 16Mi}}
YAML

# The window opened two minutes ago and closes in thirty (UTC, daily; it may cross midnight).
start="$(date -u -d '-2 min' '+%-M %-H')"
end="$(date -u -d '+30 min' '+%-M %-H')"
log "cron window: start '$start * * *', end '$end * * *' (UTC)"
kubectl apply -n "$NS" -f - >/dev/null <<YAML
apiVersion: autoscaling.foresight.dev/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 5
  crons:
    - name: now
      timezone: UTC
      start: "$start * * *"
      end: "$end * * *"
      targetReplicas: 3
YAML

# 1. The Deployment follows the cron target.
wait_for_output "3" "deployment replicas" \
  kubectl get deployment web -n "$NS" -o jsonpath='{.spec.replicas}'

# 2. Status and events.
kubectl wait -n "$NS" --for=condition=Ready --timeout="${TIMEOUT}s" fhpa/web >/dev/null
kubectl wait -n "$NS" --for=condition=CronActive --timeout="${TIMEOUT}s" fhpa/web >/dev/null
wait_for_output "3" "status.desiredReplicas" \
  kubectl get fhpa web -n "$NS" -o jsonpath='{.status.desiredReplicas}'
wait_for_output "SuccessfulRescale" "rescale event" \
  kubectl get events -n "$NS" \
  --field-selector involvedObject.kind=EffectiveHorizontalPodAutoscaler,involvedObject.name=web,reason=SuccessfulRescale \
  -o jsonpath='{.items[0].reason}'

# 3. An invalid autoscaler is rejected by the API server with the CEL rule's message.
if output="$(kubectl apply -n "$NS" -f - 2>&1 <<'YAML'
apiVersion: autoscaling.foresight.dev/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata: {name: invalid}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 5
  maxReplicas: 2
YAML
)"; then
  fail "the API server accepted minReplicas > maxReplicas"
fi
grep -q "minReplicas must be less than or equal to maxReplicas" <<<"$output" ||
  fail "the rejection does not carry the CEL message: $output"
log "invalid autoscaler rejected: $(grep -o 'minReplicas must be[^"]*' <<<"$output" | head -n 1)"

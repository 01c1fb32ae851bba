#!/usr/bin/env bash
# The chart on a local kind cluster, end to end: build the two images, make a cluster, install
# the chart with --wait, drive sessions through a port-forward (create, step, close; one
# recorded; one from a warm pool), probe from an env pod that the API server, NATS and the
# metadata address cannot be reached, run `helm test`. On failure it dumps the cluster's events
# and the pods' logs; on exit it deletes the cluster.
#
# Usage: deploy/kind/e2e.sh            (from anywhere; run as a user who may use Docker)
# Needs: docker (an engine that answers), kind >= 0.24 (it enforces NetworkPolicy), helm,
# kubectl, python3, curl.
# Exit codes: 0 passed; 3 a tool is missing or too old, or the Docker engine does not answer
# (one line on stderr says which); any other non-zero: a step failed (the dump says where).
# Settings: E2E_KEEP_CLUSTER=1 keeps the cluster; E2E_PORT (18000) the port-forward's local port.
set -euo pipefail

readonly PREREQUISITE_EXIT=3
readonly KIND_MINIMUM=0.24.0

missing() {
  echo "e2e.sh: $*" >&2
  exit "$PREREQUISITE_EXIT"
}

# Prerequisites first, with shell builtins only (this runs before anything else is known to exist).
for tool in docker kind helm kubectl python3 curl; do
  command -v "$tool" >/dev/null 2>&1 || missing "$tool not found on PATH: install it (needs docker, kind >= $KIND_MINIMUM, helm, kubectl, python3, curl)"
done
docker info >/dev/null 2>&1 || missing "the Docker engine does not answer ('docker info' failed): start Docker or check your access to it"
kind_version_line="$(kind version 2>/dev/null || true)"
if [[ ! "$kind_version_line" =~ v([0-9]+)\.([0-9]+)\.([0-9]+) ]]; then
  missing "cannot read kind's version from 'kind version' (got: ${kind_version_line:-nothing}): kind >= $KIND_MINIMUM is needed"
fi
kind_major="${BASH_REMATCH[1]}" kind_minor="${BASH_REMATCH[2]}"
if (( kind_major == 0 && kind_minor < 24 )); then
  missing "kind ${BASH_REMATCH[0]} is older than $KIND_MINIMUM, which enforces NetworkPolicy: upgrade kind"
fi

script_dir="$(cd "${BASH_SOURCE[0]%/*}" && pwd)"
repo="$(cd "$script_dir/../.." && pwd)"
chart="$repo/deploy/helm/simulusion-platform"
session_check="$chart/files/session_check.py"
cluster="simulusion-e2e-${EPOCHSECONDS}-$$"
release=platform
namespace=platform
envs_namespace=platform-envs
tag=e2e
port="${E2E_PORT:-18000}"
gateway_url="http://127.0.0.1:$port"
port_forward_pid=""

log() { echo "e2e: $*"; }

dump_cluster() {
  log "--- events"
  kubectl get events --all-namespaces --sort-by=.lastTimestamp || true
  log "--- pods"
  kubectl get pods --all-namespaces -o wide || true
  for ns in "$namespace" "$envs_namespace"; do
    log "--- logs in $ns"
    kubectl logs --namespace "$ns" --selector app.kubernetes.io/name=simulusion-platform \
      --all-containers --prefix --tail=200 --ignore-errors || true
  done
}

finish() {
  local status=$?
  if [[ -n "$port_forward_pid" ]]; then
    kill "$port_forward_pid" 2>/dev/null || true
  fi
  if (( status != 0 )); then
    log "FAILED (exit $status): the cluster's state follows"
    dump_cluster
  fi
  if [[ "${E2E_KEEP_CLUSTER:-0}" == 1 ]]; then
    log "keeping cluster $cluster (kind delete cluster --name $cluster)"
  else
    kind delete cluster --name "$cluster" || true
  fi
  exit "$status"
}
trap finish EXIT

log "building the images"
docker build -f "$repo/deploy/docker/platform.Dockerfile" -t "simulusion-platform:$tag" "$repo"
docker build -f "$repo/deploy/docker/envs.Dockerfile" -t "simulusion-platform-envs:$tag" "$repo"

log "creating cluster $cluster"
kind create cluster --name "$cluster" --wait 180s
kind load docker-image --name "$cluster" "simulusion-platform:$tag" "simulusion-platform-envs:$tag"

log "installing the chart"
helm install "$release" "$chart" --namespace "$namespace" --create-namespace \
  --values "$script_dir/values-kind.yaml" --set image.tag="$tag" --wait --timeout 15m

log "port-forwarding the gateway to $gateway_url"
kubectl --namespace "$namespace" port-forward "service/$release-simulusion-platform-gateway" "$port:80" >/dev/null &
port_forward_pid=$!
for _ in $(seq 60); do
  curl -fsS "$gateway_url/healthz" >/dev/null 2>&1 && break
  sleep 1
done
curl -fsS "$gateway_url/healthz"
echo

log "a session: create, step, close"
python3 "$session_check" --url "$gateway_url" --steps 20
log "a recorded session"
python3 "$session_check" --url "$gateway_url" --steps 20 --record
log "a session from the warm pool (values-kind.yaml keeps one CartPole pod ready)"
python3 "$session_check" --url "$gateway_url" --steps 5

log "probing from an env pod: nothing but DNS is reachable"
session_id="$(curl -fsS -X POST "$gateway_url/v0/sessions" -H 'Content-Type: application/json' \
  -d '{"env_id": "cartpole"}' | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')"
env_pod="$(kubectl --namespace "$envs_namespace" get pods \
  --selector "simulusion.dev/session=$session_id" -o jsonpath='{.items[0].metadata.name}')"
log "session $session_id runs in pod $env_pod"
nats_host="$release-simulusion-platform-nats.$namespace.svc.cluster.local"
kubectl --namespace "$envs_namespace" exec "$env_pod" -- python -c "
import socket, sys
targets = [('the API server', 'kubernetes.default.svc.cluster.local', 443), ('NATS', '$nats_host', 4222),
           ('the metadata address', '169.254.169.254', 80)]
reached = []
for name, host, port in targets:
    address = socket.gethostbyname(host)  # DNS is allowed: a failure here is a failure of the test
    try:
        socket.create_connection((address, port), timeout=5).close()
        reached.append(name)
        print(f'reached {name} at {host}:{port}')
    except OSError as exc:
        print(f'blocked {name} at {host}:{port} ({exc})')
sys.exit(f'an env pod reached {reached}' if reached else 0)
"
curl -fsS -X DELETE "$gateway_url/v0/sessions/$session_id" >/dev/null

log "helm test"
helm test "$release" --namespace "$namespace" --logs

log "passed"

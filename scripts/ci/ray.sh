#!/usr/bin/env bash
# Start (or stop) a local two-node Ray cluster for the cluster tests (tests/cluster: a
# sharded sweep through hydra-ray-launcher connecting to it). Called by scripts/test.sh;
# safe to call by hand. Uses .venv-ray's `ray` (bash scripts/setup.sh --ray).
#
#   scripts/ci/ray.sh [start]   a head node (GCS on 127.0.0.1:6390, 1 CPU, no dashboard)
#                               and ONE worker node (1 CPU) joined to it; waits until
#                               `ray status` counts 2 nodes
#   scripts/ci/ray.sh stop      end the processes of that cluster (its `ray start`s' process
#                               groups; `ray stop --force` would end every Ray here)
#   scripts/ci/ray.sh status    say whether the cluster answers with 2 nodes
#
# The tests find the cluster at $REFLEXION_BENCH_RAY_ADDRESS (default 127.0.0.1:6390,
# exported by scripts/test.sh). Idempotent: `start` on a cluster that already answers
# with 2 nodes does nothing.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
RAY="${REFLEXION_BENCH_RAY_BIN:-$ROOT/.venv-ray/bin/ray}"
PORT="${REFLEXION_BENCH_RAY_PORT:-6390}"
ADDRESS="127.0.0.1:$PORT"
STATE_DIR="${REFLEXION_RAY_STATE:-/tmp/reflexion-bench-ray}"
WAIT_S=90
# Per node, in bytes: the tests' jobs pass nothing big through the object store, and the
# default (30% of the memory, each node) would claim /dev/shm for the whole test run.
OBJECT_STORE=200000000
export RAY_USAGE_STATS_ENABLED=0
export RAY_AUTH_MODE=token

log() { echo "[ray.sh] $*" >&2; }

# Alive nodes as `ray status` counts them (0 when no cluster answers).
# The port is probed first: `ray status` without a cluster retries for ~40 s.
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; }

nodes() {
  listening || { echo 0; return 0; }
  timeout -k 5 30 "$RAY" status --address="$ADDRESS" 2>/dev/null \
    | awk '/^Active:/ {on=1; next} /^(Pending|Recent failures):/ {on=0} on && /node_/ {n++} END {print n+0}'
}

# Each `ray start` runs in a session of its own (setsid): its daemons (GCS, raylet, ...)
# and the workers they spawn keep that process group, so `stop` ends exactly the
# processes of this cluster, never another Ray of this machine (a test's local one).
ray_start() {
  local name="$1"; shift
  setsid "$RAY" start "$@" >"$STATE_DIR/$name.log" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >>"$STATE_DIR/pgids"
  wait "$pid" || { log "ray start ($name) failed:"; tail -30 "$STATE_DIR/$name.log" >&2; return 1; }
}

start_cluster() {
  if [ ! -x "$RAY" ]; then log "no ray at $RAY: bash scripts/setup.sh --ray"; return 1; fi
  if [ "$(nodes)" -ge 2 ]; then log "a Ray cluster with 2 nodes answers on $ADDRESS: reusing it"; return 0; fi
  mkdir -p "$STATE_DIR"
  # Token authentication (Ray's own: ~/.ray/auth_token, made here if absent): the drivers
  # that connect find the same file; RAY_AUTH_MODE=token makes every node require it.
  "$RAY" get-auth-token --generate >/dev/null
  local started=$SECONDS
  if [ "$(nodes)" = 0 ]; then
    log "starting the head node on $ADDRESS"
    ray_start head --head --node-ip-address=127.0.0.1 --port="$PORT" --num-cpus=1 \
      --object-store-memory="$OBJECT_STORE" --include-dashboard=false --disable-usage-stats \
      || return 1
  fi
  log "starting a worker node"
  ray_start worker --address="$ADDRESS" --node-ip-address=127.0.0.1 --num-cpus=1 \
    --object-store-memory="$OBJECT_STORE" --disable-usage-stats || return 1
  for _ in $(seq 1 "$WAIT_S"); do
    if [ "$(nodes)" -ge 2 ]; then
      log "Ray cluster up in $((SECONDS - started)) s: 2 nodes on $ADDRESS"
      return 0
    fi
    sleep 1
  done
  log "the cluster does not count 2 nodes within $WAIT_S s:"
  timeout -k 5 30 "$RAY" status --address="$ADDRESS" >&2 || true
  tail -20 "$STATE_DIR/head.log" "$STATE_DIR/worker.log" >&2 || true
  return 1
}

stop_cluster() {
  if [ ! -f "$STATE_DIR/pgids" ]; then log "no Ray cluster started by this script"; return 0; fi
  local pgid left
  # `ray stop` would end every Ray process of the machine: only our process groups.
  for pgid in $(cat "$STATE_DIR/pgids"); do kill -TERM -- "-$pgid" 2>/dev/null || true; done
  for _ in $(seq 1 40); do
    left=""
    for pgid in $(cat "$STATE_DIR/pgids"); do
      if kill -0 -- "-$pgid" 2>/dev/null; then left=1; fi
    done
    [ -z "$left" ] && break
    sleep 0.25
  done
  for pgid in $(cat "$STATE_DIR/pgids"); do kill -KILL -- "-$pgid" 2>/dev/null || true; done
  rm -rf "$STATE_DIR"
  log "Ray stopped"
}

case "${1:-start}" in
  start) start_cluster ;;
  stop) stop_cluster ;;
  status)
    n="$(nodes)"
    if [ "$n" -ge 2 ]; then echo "$n Ray nodes on $ADDRESS"; else echo "no 2-node Ray cluster on $ADDRESS ($n nodes)"; exit 1; fi ;;
  *) echo "usage: $0 [start|stop|status]" >&2; exit 2 ;;
esac

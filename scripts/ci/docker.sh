#!/usr/bin/env bash
# Start (or stop) a throw-away Docker engine for the Docker sandbox's tests, and build
# the offline test images. Called by .ci/run; safe to call by hand.
#
#   scripts/ci/docker.sh [start]   install docker.io from Debian if dockerd is missing,
#                                  start dockerd (no firewall/bridge changes, data root in
#                                  a temp folder), wait until it answers, build test images
#   scripts/ci/docker.sh build     (re)build the offline test images only
#   scripts/ci/docker.sh stop      stop the dockerd we started and remove its data root
#   scripts/ci/docker.sh status    say whether an engine answers
#
# If an engine already answers on the socket (a user's own dockerd), it is reused and
# never stopped by `stop`. Needs root to install/start the engine.
#
# Why these dockerd flags: the sandbox containers run with network_mode=none, so the
# engine needs no bridge, NAT or forwarding; by default dockerd would rewrite the host's
# firewall (FORWARD policy DROP, NAT rules), create docker0 and turn IP forwarding on.
set -euo pipefail

STATE_DIR="${REFLEXION_DOCKER_STATE:-/tmp/reflexion-bench-dockerd}"
case "${DOCKER_HOST:-}" in
  unix://*) default_sock="${DOCKER_HOST#unix://}" ;;
  *) default_sock=/var/run/docker.sock ;;
esac
SOCK="${REFLEXION_DOCKER_SOCK:-$default_sock}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
export DOCKER_HOST="unix://$SOCK"

log() { echo "[docker.sh] $*" >&2; }

answers() { timeout 5 docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

install_engine() {
  if command -v dockerd >/dev/null 2>&1; then return 0; fi
  if [ "$(id -u)" != 0 ]; then
    log "dockerd is missing and we are not root: cannot install docker.io"; return 1
  fi
  log "installing docker.io from Debian's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq -o DPkg::Lock::Timeout=600 >/dev/null
  # The package's postinst would start a dockerd with DEFAULT flags (firewall rules,
  # docker0, IP forwarding) where init scripts run: forbid service starts meanwhile.
  local policy_added=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
    policy_added=1
  fi
  # --no-install-recommends: skips cgroupfs-mount, git, needrestart... not needed here.
  apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends \
    docker.io >/dev/null || { [ -n "$policy_added" ] && rm -f /usr/sbin/policy-rc.d; return 1; }
  if [ -n "$policy_added" ]; then rm -f /usr/sbin/policy-rc.d; fi
}

start_engine() {
  if answers; then log "an engine already answers on $SOCK: reusing it"; return 0; fi
  install_engine
  mkdir -p "$STATE_DIR"
  local data_root
  data_root="$(mktemp -d /tmp/reflexion-bench-docker-data.XXXXXX)"
  echo "$data_root" >"$STATE_DIR/data_root"
  log "starting dockerd (data root $data_root)"
  # setsid: the engine must survive the shell that started it (it is stopped by `stop`).
  setsid dockerd \
    --host "unix://$SOCK" \
    --data-root "$data_root" \
    --exec-root "$STATE_DIR/exec" \
    --pidfile "$STATE_DIR/dockerd.pid" \
    --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false \
    --bridge=none \
    >"$STATE_DIR/dockerd.log" 2>&1 </dev/null &
  echo $! >"$STATE_DIR/started.pid"
  for _ in $(seq 1 120); do
    if answers; then
      log "engine up: $(docker version --format '{{.Server.Version}}') ($(docker info --format '{{.Driver}}' 2>/dev/null))"
      return 0
    fi
    if ! kill -0 "$(cat "$STATE_DIR/started.pid")" 2>/dev/null; then
      log "dockerd exited; last log lines:"; tail -20 "$STATE_DIR/dockerd.log" >&2; return 1
    fi
    sleep 0.5
  done
  log "dockerd did not answer within 60 s; last log lines:"; tail -20 "$STATE_DIR/dockerd.log" >&2
  return 1
}

build_images() {
  # Offline test images: no registry is reachable here. See envs/test/build.sh.
  local started=$SECONDS
  bash "$ROOT/envs/test/build.sh"
  log "test images built in $((SECONDS - started)) s"
}

stop_engine() {
  if [ ! -f "$STATE_DIR/started.pid" ]; then log "no dockerd started by this script"; return 0; fi
  local pid
  pid="$(cat "$STATE_DIR/started.pid")"
  # Our sandbox containers first (the SDK also removes them at exit; this is the backstop).
  if answers; then
    docker ps -aq --filter label=reflexion_bench.sandbox | xargs -r docker rm -f >/dev/null 2>&1 || true
  fi
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" || true
  fi
  # dockerd's own containerd child normally exits with it; make sure.
  if [ -f "$STATE_DIR/exec/containerd/containerd.pid" ]; then
    kill -TERM "$(cat "$STATE_DIR/exec/containerd/containerd.pid")" 2>/dev/null || true
  fi
  local data_root
  data_root="$(cat "$STATE_DIR/data_root" 2>/dev/null || true)"
  if [ -n "$data_root" ] && [ -d "$data_root" ]; then
    # overlay mounts may linger under the data root: unmount before removing.
    grep -o " $data_root[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
    rm -rf "$data_root"
  fi
  grep -o " $STATE_DIR[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  rm -rf "$STATE_DIR"
  log "dockerd stopped, data root removed"
}

case "${1:-start}" in
  start) start_engine && build_images ;;
  build) build_images ;;
  stop) stop_engine ;;
  status) if answers; then echo "engine answers on $SOCK"; else echo "no engine on $SOCK"; exit 1; fi ;;
  *) echo "usage: $0 [start|build|stop|status]" >&2; exit 2 ;;
esac

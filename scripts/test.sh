#!/usr/bin/env bash
# The README's test command: set up everything the tests need, then run them.
#   bash scripts/test.sh [pytest args]
# As root (CI), it also installs Debian packages (bubblewrap, rustc, slurm-wlm, ...) and
# starts a throw-away Docker engine for the Docker sandbox tests and a single-node SLURM
# cluster for the cluster tests; a local two-node Ray cluster (no root needed) is started
# for them too. Without root those steps are skipped, and the tests that need them skip
# with the reason; under CI=true (.ci/run) a missing required component fails the run
# instead. Whatever was started is stopped when the script exits.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh --all --system --ray

# The services started here, stopped by one EXIT trap (in reverse order of start).
started=()
stop_started() {
  local i
  for ((i = ${#started[@]} - 1; i >= 0; i--)); do
    bash "scripts/ci/${started[i]}.sh" stop || true
  done
}
trap stop_started EXIT

if [ "$(id -u)" = 0 ]; then
  if bash scripts/ci/docker.sh start; then
    started+=(docker)
  else
    echo "WARNING: no Docker engine could be started: the docker sandbox tests will skip (see their reasons; under CI=true they fail)" >&2
  fi
  if bash scripts/ci/slurm.sh start; then
    started+=(slurm)
  else
    echo "WARNING: no SLURM cluster could be started: the SLURM cluster tests will skip (see their reasons; under CI=true they fail)" >&2
  fi
fi

export REFLEXION_BENCH_RAY_PYTHON="$PWD/.venv-ray/bin/python"
# The cluster tests' Ray cluster (scripts/ci/ray.sh: GCS on 127.0.0.1, port 6390 unless
# REFLEXION_BENCH_RAY_PORT says otherwise).
export REFLEXION_BENCH_RAY_ADDRESS="127.0.0.1:${REFLEXION_BENCH_RAY_PORT:-6390}"
if bash scripts/ci/ray.sh start; then
  started+=(ray)
else
  echo "WARNING: no Ray cluster could be started: the Ray cluster tests will skip (see their reasons; under CI=true they fail)" >&2
fi

# The required components (alfworld, docker, rust, bwrap, shared_data, chromium, inspect_ai,
# lm_eval, mkdocs, slurm, ray; tests/components.py):
# under CI=true a missing one FAILS its tests instead of skipping them. The run ends with
# a table (component -> tests, ran, skipped and why), from the same records as the skips.
components_json="$(mktemp "${TMPDIR:-/tmp}/reflexion-components.XXXXXX.json")"
rc=0
# The layering contract ([tool.importlinter] in pyproject.toml: commands on top, core at
# the bottom, no circle between sibling modules); a broken contract fails the run.
.venv/bin/lint-imports || rc=$?
prc=0
# Several workers (pytest-xdist): most of a test's time is spent waiting on a sandbox, a
# container, a game, a model server or a cluster, not on a core, so four workers on two
# cores finish in about half the time of one. Verdicts do not depend on load (CPU limits
# are charged per box; scripts/check_load_independence.py). `-n 0` among the arguments
# runs in one process (the last -n wins); REFLEXION_TEST_WORKERS sets the default.
workers=(-n "${REFLEXION_TEST_WORKERS:-4}" --dist worksteal)
REFLEXION_COMPONENTS_JSON="$components_json" .venv/bin/python -m pytest "${workers[@]}" "$@" \
  || prc=$?
[ "$prc" = 0 ] || rc=$prc
if [ -s "$components_json" ]; then
  .venv/bin/python -m tests.components "$components_json" || true
fi
rm -f "$components_json"
exit "$rc"

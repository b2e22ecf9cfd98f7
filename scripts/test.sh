#!/usr/bin/env bash
# The README's test command: set up everything the tests need, then run them.
#   bash scripts/test.sh [pytest args]
# As root (CI), it also installs Debian packages (bubblewrap, rustc, ...) and starts a
# throw-away Docker engine for the Docker sandbox tests. Without root those steps are
# skipped, and the tests that need them skip with the reason; under CI=true (.ci/run)
# a missing required component fails the run instead.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh --all --system --ray

if [ "$(id -u)" = 0 ]; then
  if bash scripts/ci/docker.sh start; then
    trap 'bash scripts/ci/docker.sh stop' EXIT
  else
    echo "WARNING: no Docker engine could be started: the docker sandbox tests will skip (see their reasons; under CI=true they fail)" >&2
  fi
fi

export REFLEXION_BENCH_RAY_PYTHON="$PWD/.venv-ray/bin/python"
# The required components (alfworld, docker, rust, bwrap, shared_data, chromium, inspect_ai,
# lm_eval, mkdocs; tests/components.py):
# under CI=true a missing one FAILS its tests instead of skipping them. The run ends with
# a table (component -> tests, ran, skipped and why), from the same records as the skips.
components_json="$(mktemp "${TMPDIR:-/tmp}/reflexion-components.XXXXXX.json")"
rc=0
REFLEXION_COMPONENTS_JSON="$components_json" .venv/bin/python -m pytest "$@" || rc=$?
if [ -s "$components_json" ]; then
  .venv/bin/python -m tests.components "$components_json" || true
fi
rm -f "$components_json"
exit "$rc"

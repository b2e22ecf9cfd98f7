#!/usr/bin/env bash
# The README's test command: set up everything the tests need, then run them.
#   bash scripts/test.sh [pytest args]
# As root (CI), it also installs Debian packages (bubblewrap, rustc, ...) and starts a
# throw-away Docker engine for the Docker sandbox tests. Without root those steps are
# skipped, and the tests that need them skip with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh --all --system --ray

if [ "$(id -u)" = 0 ]; then
  if bash scripts/ci/docker.sh start; then
    trap 'bash scripts/ci/docker.sh stop' EXIT
  else
    echo "WARNING: no Docker engine could be started: the docker sandbox tests will skip (see their reasons)" >&2
  fi
fi

export REFLEXION_BENCH_RAY_PYTHON="$PWD/.venv-ray/bin/python"
.venv/bin/python -m pytest "$@"

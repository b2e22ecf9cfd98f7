#!/usr/bin/env bash
# Refresh the locked environments in requirements/*.lock (hashed, pip-installable).
#
#   bash scripts/lock.sh            # re-resolve every lock from pyproject.toml
#
# Why uv's `pip compile` writing pip requirement files (not uv.lock + uv sync): the
# install side stays plain pip (`pip install --require-hashes --no-deps -r ...`), so a
# user needs nothing but Python 3.11 and the registries, and the machine's pip settings
# (find-links for the CPU torch wheel, extra indexes) keep applying; uv is only the
# resolver, ~10 s for the whole tree where pip-compile takes many minutes. The locks are
# for CPython 3.11 on x86_64 Linux (the machine kind this project runs on);
# `scripts/setup.sh --unlocked` resolves from pyproject.toml elsewhere.
#
# One resolution, several installs: every lock is constrained by the full resolution
# (all extras and alfworld), so a package has the same version in each of them. The Ray
# environment (.venv-ray) is resolved on its own: hydra-ray-launcher pins cloudpickle<3.
# After a refresh: rebuild the committed reports (`bash scripts/rebuild_reports.sh`): a
# new matplotlib or fontTools changes every PDF's embedded font subset.
set -euo pipefail
cd "$(dirname "$0")/.."

tools="$(mktemp -d "${TMPDIR:-/tmp}/reflexion-lock.XXXXXX")"
trap 'rm -rf "$tools"' EXIT
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
"$PY" -m venv "$tools/venv"
"$tools/venv/bin/python" -m pip install -q "uv==0.13.9"
uv="$tools/venv/bin/uv"

# pip reads PIP_FIND_LINKS / pip.conf; uv does not: pass the find-links folders on.
find_links=()
for dir in ${PIP_FIND_LINKS:-} $("$PY" -m pip config get global.find-links 2>/dev/null || true); do
  [ -d "$dir" ] && find_links+=(--find-links "$dir")
done

common=(--python-version 3.11 --python-platform x86_64-manylinux_2_28 --no-header
        "${find_links[@]}" -c requirements/constraints.txt)
all_extras=(--extra dev --extra memory --extra sweeps --extra inspect --extra lm-eval
            --extra docs)

# The full resolution, unhashed (committed: a readable list of every version), as the
# constraint every other lock shares.
"$uv" pip compile -q pyproject.toml "${common[@]}" "${all_extras[@]}" --extra alfworld \
  --extra notebooks --no-annotate -o requirements/pins.txt
pinned=("${common[@]}" -c requirements/pins.txt --generate-hashes)

"$uv" pip compile -q pyproject.toml "${pinned[@]}" -o requirements/base.lock
"$uv" pip compile -q pyproject.toml "${pinned[@]}" --extra dev -o requirements/dev.lock
"$uv" pip compile -q pyproject.toml "${pinned[@]}" "${all_extras[@]}" -o requirements/all.lock
"$uv" pip compile -q pyproject.toml "${pinned[@]}" "${all_extras[@]}" --extra alfworld \
  -o requirements/alfworld.lock
# Jupyter for the notebooks (`setup.sh --notebooks`), beside whatever else is installed.
"$uv" pip compile -q pyproject.toml "${pinned[@]}" --extra notebooks -o requirements/notebooks.lock
"$uv" pip compile -q requirements/tools.in "${common[@]}" --generate-hashes --no-deps \
  -o requirements/tools.lock
"$uv" pip compile -q requirements/embedded-1-5b.in "${common[@]}" --generate-hashes --no-deps \
  -o requirements/embedded-1-5b.lock
"$uv" pip compile -q pyproject.toml "${common[@]}" --generate-hashes --extra ray \
  -o requirements/ray.lock
echo "lock: $(grep -c '^[A-Za-z0-9]' requirements/all.lock) packages in all.lock; refreshed requirements/*.lock"

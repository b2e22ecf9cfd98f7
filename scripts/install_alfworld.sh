#!/usr/bin/env bash
# Install alfworld (the `[alfworld]` extra) into a venv: bash scripts/install_alfworld.sh [.venv]
#
# alfworld depends on fast-downward-textworld, which has no wheel: pip compiles it from
# source (cmake, g++; ~4 min on 2 cores), and its build step runs `python build.py`
# with whatever `python` PATH finds first. On machines with a version manager (pyenv's
# shims, asdf, ...) that is not the venv's interpreter, and the build dies with
# `ModuleNotFoundError: No module named 'glob'` (pip's build environment, meant for the
# venv's Python, is put on the path of another one). So the venv's bin goes first on
# PATH for the install, version-manager variables are cleared, and `python` is checked.
#
# When it cannot install: under CI=true it fails (exit 1) naming the cause; elsewhere it
# warns and returns 0, and the ALFWorld game tests skip with the reason.
set -uo pipefail
cd "$(dirname "$0")/.."
VENV="$(cd "${1:-.venv}" && pwd)"
LOG="${TMPDIR:-/tmp}/reflexion-bench-alfworld-install.$$.log"

fail() {
  if [ "${CI:-}" = true ] || [ "${CI:-}" = 1 ]; then
    echo "setup: ERROR: alfworld did not install: $*" >&2
    echo "setup: (CI=true: alfworld is required; the ALFWorld game tests cannot skip)" >&2
    exit 1
  fi
  echo "setup: WARNING: alfworld did not install: $*" >&2
  echo "setup: the ALFWorld game tests will skip with this reason" >&2
  exit 0
}

if "$VENV/bin/python" -c "import alfworld, fast_downward" 2>/dev/null; then
  exit 0
fi
missing=""
for tool in cmake g++ make; do
  command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
[ -z "$missing" ] || fail "the planner build (fast-downward-textworld) needs:$missing (apt-get install cmake g++ make, or run setup with --system as root)"

export PATH="$VENV/bin:$PATH" VIRTUAL_ENV="$VENV"
unset PYENV_VERSION PYTHONHOME PYTHONPATH
found="$(command -v python)"
[ "$found" = "$VENV/bin/python" ] || fail "\`python\` resolves to $found, not $VENV/bin/python"

start=$(date +%s)
echo "setup: installing alfworld (compiles fast-downward-textworld: a few minutes)" >&2
if [ "${REFLEXION_LOCKED:-1}" = 1 ]; then
  # The full lock (every extra and alfworld, by hash): what is not yet installed is
  # alfworld and what only it needs.
  install=(install -q --require-hashes --no-deps -r requirements/alfworld.lock)
else
  install=(install -q -e ".[alfworld]")
fi
if ! "$VENV/bin/python" -m pip "${install[@]}" >"$LOG" 2>&1; then
  tail -n 40 "$LOG" >&2
  cause="pip ${install[*]} failed (full log: $LOG)"
  grep -q "No module named" "$LOG" && cause="$cause; $(grep -m1 -o "No module named [^ ]*" "$LOG") in the planner build"
  fail "$cause"
fi
if ! err="$("$VENV/bin/python" -c "import alfworld, fast_downward" 2>&1)"; then
  fail "installed, but \`import alfworld, fast_downward\` fails: ${err##*$'\n'}"
fi
rm -f "$LOG"
echo "setup: alfworld installed in $(($(date +%s) - start)) s" >&2

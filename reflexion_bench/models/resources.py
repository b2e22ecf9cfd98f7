"""How much of the machine the embedded model uses: the one place ``auto`` is resolved.

``model.n_threads``, ``model.n_parallel``, ``model.n_ctx`` and ``model.max_connections``
of the embedded model, and the run's ``max_concurrent_tasks``, may be ``auto``:

- threads: the cores this process may run on (``os.sched_getaffinity``, not the
  machine's count: a container or ``taskset`` gives fewer); 1 under tests and CI
  (``$REFLEXION_BENCH_EMBEDDED_THREADS``, ``CI=true``) and when the 1-minute load
  average already fills every core, because llama.cpp with more threads than free cores
  collapses (~1 token/s) while 1 thread does not;
- slots: ``slots_per_core`` per core (at most 8; 2 unless the model's config says):
  with more requests decoding together, llama.cpp reads the weights once per batch
  instead of once per request. The 0.5B default sets 3, measured on 2 cores
  (``results/bench/server_options.json``: 6 slots served the quickstart 1.36x as fast as
  4, 8 slots only 1.18x);
- context: ``ctx_per_slot`` x slots (llama.cpp splits ``n_ctx`` between the slots);
- connections and concurrent tasks: one per slot, so every slot has work.

The resolved values are written into the run's config before it is saved, so
``config.yaml``, ``provenance.json`` and the response cache's key all see numbers.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass

from reflexion_bench.core.errors import ConfigError

log = logging.getLogger(__name__)

AUTO = "auto"
#: Threads of the embedded model whatever the machine (tests/conftest.py sets 1).
THREADS_ENV = "REFLEXION_BENCH_EMBEDDED_THREADS"
SLOTS_PER_CORE = 2
MAX_SLOTS = 8
CTX_PER_SLOT = 4096


def is_auto(value: object) -> bool:
    return isinstance(value, str) and value.strip().lower() == AUTO


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def auto_threads(
    cores: int, environ: Mapping[str, str] | None = None, load: float | None = None
) -> tuple[int, str]:
    """Threads for ``n_threads: auto`` and why."""
    env = os.environ if environ is None else environ
    forced = env.get(THREADS_ENV, "").strip()
    if forced:
        if not forced.isdigit() or int(forced) < 1:
            raise ConfigError(f"${THREADS_ENV}", forced, "an integer >= 1 (llama.cpp threads)")
        return int(forced), f"${THREADS_ENV}={forced}"
    if env.get("CI", "").strip().lower() == "true":
        return 1, "CI=true"
    load = _load() if load is None else load
    if cores > 1 and load >= cores:
        return 1, f"load average {load:.1f} >= {cores} cores (other work holds them)"
    return cores, f"{cores} core(s) available"


def auto_slots(cores: int, per_core: int = SLOTS_PER_CORE) -> int:
    return max(1, min(MAX_SLOTS, per_core * cores))


@dataclass(frozen=True)
class ServerSettings:
    """The embedded server's resolved settings, and where each came from."""

    n_threads: int
    n_parallel: int
    n_ctx: int
    max_connections: int
    why: str


def _int(key: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"model.{key}", value, "`auto` or an integer >= 1")
    return value


def resolve_server(
    n_threads: object = AUTO,
    n_parallel: object = AUTO,
    n_ctx: object = AUTO,
    max_connections: object = AUTO,
    ctx_per_slot: object = CTX_PER_SLOT,
    *,
    slots_per_core: object = SLOTS_PER_CORE,
    cores: int | None = None,
    environ: Mapping[str, str] | None = None,
    load: float | None = None,
) -> ServerSettings:
    """Every ``auto`` of the embedded server replaced by a number (explicit ones kept)."""
    cores = available_cores() if cores is None else cores
    why: list[str] = []
    if is_auto(n_threads):
        threads, reason = auto_threads(cores, environ, load)
        why.append(f"n_threads={threads} ({reason})")
    else:
        threads = _int("n_threads", n_threads)
    if is_auto(n_parallel):
        per_core = _int("slots_per_core", slots_per_core)
        slots = auto_slots(cores, per_core)
        why.append(f"n_parallel={slots} ({per_core} per core, at most {MAX_SLOTS})")
    else:
        slots = _int("n_parallel", n_parallel)
    per_slot = _int("ctx_per_slot", ctx_per_slot)
    if is_auto(n_ctx):
        ctx = per_slot * slots
        why.append(f"n_ctx={ctx} ({per_slot} per slot)")
    else:
        ctx = _int("n_ctx", n_ctx)
        if ctx // slots < per_slot:
            log.warning(
                "model.n_ctx=%d over %d slots leaves %d tokens per request (llama.cpp splits "
                "the context between slots); a Reflexion prompt may not fit: set "
                "model.n_ctx=auto (%d per slot)",
                ctx,
                slots,
                ctx // slots,
                per_slot,
            )
    conns = slots if is_auto(max_connections) else _int("max_connections", max_connections)
    return ServerSettings(threads, slots, ctx, conns, "; ".join(why))

"""A composite environment: the tasks of several benchmarks as one stream, in a fixed seeded order.

Lifelong memory is measured on a stream: reflections written on earlier tasks are
retrieved for later ones, so the order matters and must be reproducible. The
stream draws from each benchmark (optionally only its first ``per_env_limit``
tasks) and orders them by:

- ``shuffle``: one seeded shuffle of all tasks (default);
- ``interleave``: round robin over the benchmarks, each in its own order;
- ``concat``: benchmark after benchmark.

The benchmarks share the run's roles (actor, evaluator, scorer), so combine
benchmarks of one kind (HumanEval + MBPP: both Python code tasks). Each task keeps
its own ``benchmark`` (the lifelong store's ``task_type``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.types import Task
from reflexion_bench.environments.base import DatasetError, Environment, select_tasks

ORDERS = ("shuffle", "interleave", "concat")


class StreamEnvironment:
    """Args:
    envs: Benchmark name -> environment (built from config).
    order: One of ``ORDERS``.
    seed: Seed of the shuffle.
    per_env_limit: Tasks taken from each benchmark (their first N) before ordering.
    limit: Tasks of the stream kept (after ordering).
    task_ids: Explicit selection (ids of any benchmark), applied before ``limit``.
    name: Name in reports.
    """

    def __init__(
        self,
        envs: Mapping[str, Environment],
        order: str = "shuffle",
        seed: int = 0,
        per_env_limit: int | None = None,
        limit: int | None = None,
        task_ids: Sequence[str] | None = None,
        name: str = "stream",
    ) -> None:
        if not envs:
            raise ConfigError("env.envs", envs, "at least one benchmark environment")
        if order not in ORDERS:
            raise ConfigError("env.order", order, ORDERS)
        self.envs = dict(envs)
        self.order = order
        self.seed = seed
        self.per_env_limit = per_env_limit
        self.limit = limit
        self.task_ids = list(task_ids) if task_ids else None
        self.name = name
        windows = {int(getattr(e, "memory_window", 1)) for e in self.envs.values()}
        self.memory_window = min(windows)

    def load_tasks(self) -> list[Task]:
        per_env: list[list[Task]] = []
        seen: dict[str, str] = {}
        for label, env in self.envs.items():
            tasks = env.load_tasks()
            if self.per_env_limit is not None:
                tasks = tasks[: self.per_env_limit]
            for t in tasks:
                if t.id in seen:
                    raise DatasetError(
                        f"task id {t.id!r} is in both {seen[t.id]!r} and {label!r}: a stream "
                        "needs unique ids (give the environments distinct names)"
                    )
                seen[t.id] = label
            per_env.append(tasks)
        if self.order == "concat":
            stream = [t for tasks in per_env for t in tasks]
        elif self.order == "interleave":
            stream = []
            for i in range(max((len(t) for t in per_env), default=0)):
                stream.extend(tasks[i] for tasks in per_env if i < len(tasks))
        else:
            stream = [t for tasks in per_env for t in tasks]
            random.Random(f"stream:{self.seed}").shuffle(stream)
        return select_tasks(stream, self.limit, self.task_ids)

"""Errors that name what to fix."""

from __future__ import annotations

from collections.abc import Iterable


class ConfigError(ValueError):
    """A config key has a bad value. The message names the key and what is allowed."""

    def __init__(self, key: str, value: object, allowed: Iterable[object] | str) -> None:
        allowed_text = allowed if isinstance(allowed, str) else ", ".join(map(str, allowed))
        super().__init__(f"bad value for config key `{key}`: {value!r} (allowed: {allowed_text})")
        self.key = key


class TaskStopped(RuntimeError):
    """A role ended its task on purpose (e.g. a circuit breaker asking for human review).

    The loop records it in the trial's ``extra.stopped`` and ends the task; unlike an
    error, it does not count toward ``fail_on_error``.
    """


class StrategyStopped(TaskStopped):
    """A strategy decided the task is done (e.g. Self-Refine's critic found nothing to
    fix, LATS's oracle saw the hidden tests pass). ``reason`` becomes the last trial's
    ``extra.stop_reason``."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason

"""Errors that name what to fix."""

from __future__ import annotations

from collections.abc import Iterable


class ConfigError(ValueError):
    """A config key has a bad value. The message names the key and what is allowed."""

    def __init__(self, key: str, value: object, allowed: Iterable[object] | str) -> None:
        allowed_text = allowed if isinstance(allowed, str) else ", ".join(map(str, allowed))
        super().__init__(f"bad value for config key `{key}`: {value!r} (allowed: {allowed_text})")
        self.key = key

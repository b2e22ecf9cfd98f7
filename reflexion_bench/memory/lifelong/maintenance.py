"""Decay and promotion: an idempotent maintenance step over a store.

The salience state of a reflection is a function of its creation time, its
retrieval times and "now" (never of the previous state), which is what makes the
step idempotent: running it twice at the same instant changes nothing the second
time. Deprecation is by hand only and maintenance never touches it.

- archived: older than ``archive_after_days`` and not retrieved in the last
  ``archive_idle_days`` (an archived reflection can still be retrieved, at a
  reduced score, and becomes active again when it is);
- promoted: retrieved at least ``promote_min_retrievals`` times in the last
  ``promote_window_days`` days, the last time within ``promote_recent_days``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.memory.lifelong.record import Reflection
from reflexion_bench.memory.lifelong.store import ReflectionStore


@dataclass
class DecayPolicy:
    """Thresholds of decay and promotion (days and counts)."""

    archive_after_days: float = 90
    archive_idle_days: float = 30
    promote_min_retrievals: int = 5
    promote_window_days: float = 30
    promote_recent_days: float = 7

    def __post_init__(self) -> None:
        for name in ("archive_after_days", "archive_idle_days", "promote_window_days",
                     "promote_recent_days"):  # fmt: skip
            if float(getattr(self, name)) < 0:
                raise ConfigError(f"memory.decay.{name}", getattr(self, name), "a number >= 0")

    def state(self, ref: Reflection, now: datetime) -> tuple[bool, bool]:
        """(archived, promoted) of ``ref`` at ``now``."""
        times = [t for t in ref.retrieval_times() if t <= now]
        last = max(times) if times else None
        in_window = [t for t in times if now - t <= timedelta(days=self.promote_window_days)]
        promoted = (
            len(in_window) >= self.promote_min_retrievals
            and last is not None
            and now - last <= timedelta(days=self.promote_recent_days)
        )
        old = now - ref.created > timedelta(days=self.archive_after_days)
        idle = last is None or now - last > timedelta(days=self.archive_idle_days)
        archived = old and idle and not promoted
        return archived, promoted


@dataclass
class MaintenanceReport:
    now: str
    checked: int = 0
    archived: list[str] = field(default_factory=list)
    unarchived: list[str] = field(default_factory=list)
    promoted: list[str] = field(default_factory=list)
    demoted: list[str] = field(default_factory=list)

    @property
    def changed(self) -> int:
        return len(set(self.archived + self.unarchived + self.promoted + self.demoted))


def run_maintenance(
    store: ReflectionStore, policy: DecayPolicy | None = None, now: datetime | None = None
) -> MaintenanceReport:
    """Apply decay and promotion to every reflection of ``store`` at ``now``.

    Args:
        store: A writable store.
        policy: Thresholds (defaults: 90/30 days to archive, 5 in 30 days and one in
            the last 7 to promote).
        now: The instant to evaluate at (default: the store's clock).

    Returns:
        What changed (ids per kind of change).
    """
    policy = policy or DecayPolicy()
    now = now or store.clock()
    report = MaintenanceReport(now=now.isoformat(timespec="seconds"))
    changed: list[Reflection] = []
    for ref in store.all():
        report.checked += 1
        archived, promoted = policy.state(ref, now)
        if archived == ref.archived and promoted == ref.promoted:
            continue
        if archived and not ref.archived:
            report.archived.append(ref.id)
        if ref.archived and not archived:
            report.unarchived.append(ref.id)
        if promoted and not ref.promoted:
            report.promoted.append(ref.id)
        if ref.promoted and not promoted:
            report.demoted.append(ref.id)
        # Re-read from the file (the truth) before rewriting it.
        fresh = store.get(ref.id)
        fresh.archived, fresh.promoted = archived, promoted
        changed.append(fresh)
    store.update(changed)
    return report

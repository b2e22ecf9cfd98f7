"""One stored reflection and its Markdown file (YAML front matter + body).

The file is the truth: everything the index holds is derived from these files, so a
person can read, grep, diff or hand-edit a store with ordinary tools. The body has
the reflection text and, below it, the task it was written for (the retriever
indexes both, so a new task finds lessons written for similar tasks).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

OUTCOMES = ("success", "partial", "failure", "unknown")
"""``failure``: written after a failed trial of a task never solved; ``partial``: after
a failed trial of a task solved later; ``success``: written after a solved task;
``unknown``: no verdict on the task exists in the loop (no in-loop evaluator, e.g.
``strategy=simple`` or ``reflexion_no_tests``), so the reflector's own reading of the
attempt is stored, never a verdict taken from the answer key."""

_TASK_HEADING = "## Task"
_REFLECTION_HEADING = "## Reflection"
# Four backticks so that a task holding a ``` code block does not close the fence.
_FENCE = "````"
#: How many retrieval timestamps a file keeps (promotion looks at recent ones only).
MAX_RECENT_RETRIEVALS = 100


class StoreFormatError(ValueError):
    """A reflection file cannot be parsed; the message names the file and the problem."""


Clock = Callable[[], datetime]


def utcnow() -> datetime:
    return datetime.now(UTC)


def iso(ts: datetime) -> str:
    return ts.astimezone(UTC).isoformat(timespec="seconds")


def parse_ts(value: Any) -> datetime | None:
    if value in (None, ""):
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    ts = datetime.fromisoformat(str(value))
    return ts if ts.tzinfo else ts.replace(tzinfo=UTC)


@dataclass
class Reflection:
    """A reflection kept across tasks.

    Args:
        text: The reflection as the reflector wrote it.
        task_type: The benchmark / family of the task (``humaneval``, ``mbpp``...);
            gating counts reflections per type.
        task_id: The task it was written for.
        outcome: One of ``OUTCOMES``.
        created: When it was written.
        model: The model that wrote it.
        source_agent: The agent (store owner) that wrote it.
        failure_signature: Normalised cause of the failure (see ``signature.py``);
            empty after a success.
        trial: The trial after which it was written (0 for a post-task lesson).
        task_excerpt: The start of the task prompt (indexed beside the text).
        tags: Free labels.
        fields: The structured fields when a structured reflector wrote it.
        quality: The judge's rubric scores, when judged.
        retrieval_count: Times it was shown to an actor.
        last_retrieved: When it was last shown.
        recent_retrievals: The last ``MAX_RECENT_RETRIEVALS`` retrieval times (ISO).
        archived / promoted: Salience state set by maintenance.
        deprecated: ``{"reason": ..., "at": ...}`` when deprecated by hand, else None.
        id: Stable id (derived from the content when left empty).
    """

    text: str
    task_type: str
    task_id: str
    outcome: str
    created: datetime = field(default_factory=utcnow)
    model: str = ""
    source_agent: str = "default"
    failure_signature: str = ""
    trial: int = 0
    task_excerpt: str = ""
    tags: list[str] = field(default_factory=list)
    fields: dict[str, str] = field(default_factory=dict)
    quality: dict[str, float] | None = None
    retrieval_count: int = 0
    last_retrieved: datetime | None = None
    recent_retrievals: list[str] = field(default_factory=list)
    archived: bool = False
    promoted: bool = False
    deprecated: dict[str, str] | None = None
    id: str = ""

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise StoreFormatError(f"outcome must be one of {OUTCOMES}, got {self.outcome!r}")
        if self.created.tzinfo is None:
            self.created = self.created.replace(tzinfo=UTC)
        # Files keep seconds; dropping the rest keeps a re-read reflection equal.
        self.created = self.created.astimezone(UTC).replace(microsecond=0)
        if self.last_retrieved is not None:
            self.last_retrieved = self.last_retrieved.astimezone(UTC).replace(microsecond=0)
        if not self.id:
            digest = hashlib.sha1(
                "\x1f".join(
                    [self.source_agent, self.task_id, str(self.trial), self.text, iso(self.created)]
                ).encode()
            ).hexdigest()[:10]
            self.id = f"r{self.created:%Y%m%d}-{digest}"

    # ------------------------------------------------------------------ derived
    @property
    def active(self) -> bool:
        """Neither archived nor deprecated."""
        return not self.archived and self.deprecated is None

    @property
    def relpath(self) -> Path:
        """Where the file lives under the store's ``reflections/`` folder."""
        c = self.created.astimezone(UTC)
        return Path(f"{c:%Y}") / f"{c:%m}" / f"{c:%d}" / f"{self.id}.md"

    def index_text(self) -> str:
        """What retrieval matches a new task against: the lesson and its task."""
        return f"{self.text}\n{self.task_excerpt}".strip()

    def retrieval_times(self) -> list[datetime]:
        return [t for t in (parse_ts(v) for v in self.recent_retrievals) if t is not None]

    def mark_retrieved(self, when: datetime) -> None:
        when = when.astimezone(UTC).replace(microsecond=0)
        self.retrieval_count += 1
        self.last_retrieved = when
        self.recent_retrievals = [*self.recent_retrievals, iso(when)][-MAX_RECENT_RETRIEVALS:]

    # ------------------------------------------------------------------ files
    def front_matter(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("text", "task_excerpt"):
            data.pop(key)
        data["created"] = iso(self.created)
        data["last_retrieved"] = iso(self.last_retrieved) if self.last_retrieved else None
        # id first, then the fields a reader scans for, then the rest.
        order = [
            "id", "task_type", "task_id", "outcome", "created", "model", "source_agent",
            "retrieval_count", "last_retrieved", "archived", "promoted", "deprecated",
            "failure_signature", "trial", "tags",
        ]  # fmt: skip
        return {k: data[k] for k in order} | {k: v for k, v in data.items() if k not in order}

    def to_markdown(self) -> str:
        head = yaml.safe_dump(self.front_matter(), sort_keys=False, allow_unicode=True)
        body = f"{_REFLECTION_HEADING}\n\n{self.text.strip()}\n"
        if self.task_excerpt:
            body += f"\n{_TASK_HEADING}\n\n{_FENCE}\n{self.task_excerpt.strip()}\n{_FENCE}\n"
        return f"---\n{head}---\n\n{body}"

    @classmethod
    def from_markdown(cls, text: str, where: str = "<text>") -> Reflection:
        if not text.startswith("---\n"):
            raise StoreFormatError(f"{where}: no YAML front matter (the file must start with ---)")
        try:
            _, head, body = text.split("---\n", 2)
        except ValueError:
            raise StoreFormatError(f"{where}: front matter is not closed by a --- line") from None
        try:
            meta = yaml.load(head, Loader=_Loader)
        except yaml.YAMLError as exc:
            raise StoreFormatError(f"{where}: bad YAML front matter: {exc}") from None
        if not isinstance(meta, dict):
            raise StoreFormatError(f"{where}: front matter must be a mapping")
        reflection, excerpt = _split_body(body)
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(meta) - known)
        if unknown:
            raise StoreFormatError(f"{where}: unknown front matter keys {unknown}")
        for key in ("task_type", "task_id", "outcome", "created"):
            if meta.get(key) in (None, ""):
                raise StoreFormatError(f"{where}: front matter lacks `{key}`")
        meta = dict(meta)
        meta["created"] = parse_ts(meta["created"])
        meta["last_retrieved"] = parse_ts(meta.get("last_retrieved"))
        meta["task_id"] = str(meta["task_id"])
        meta["tags"] = list(meta.get("tags") or [])
        meta["fields"] = dict(meta.get("fields") or {})
        meta["recent_retrievals"] = [str(v) for v in meta.get("recent_retrievals") or []]
        return cls(text=reflection, task_excerpt=excerpt, **meta)


class _Loader(yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader):  # type: ignore[misc]
    """Safe loader that keeps timestamps as strings (we parse them ourselves, with zones)."""


_Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _split_body(body: str) -> tuple[str, str]:
    body = body.strip("\n")
    if body.startswith(_REFLECTION_HEADING):
        body = body[len(_REFLECTION_HEADING) :]
    excerpt = ""
    marker = f"\n{_TASK_HEADING}\n"
    if marker in body:
        body, task = body.rsplit(marker, 1)
        task = task.strip()
        if task.startswith(_FENCE) and task.endswith(_FENCE):
            task = task[len(_FENCE) : -len(_FENCE)]
        excerpt = task.strip("\n")
    return body.strip(), excerpt

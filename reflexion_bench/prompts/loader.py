"""Prompt packs: named text templates kept in files, not in code.

A *pack* is a set of named templates. It can be

- a directory: every ``*.txt`` / ``*.md`` / ``*.prompt`` / ``*.tmpl`` file is one template,
  named by its path relative to the directory without the suffix (``react/put_0``);
  ``README*`` and ``LICENSE*`` files and names starting with ``.`` or ``_`` are skipped;
- a JSON or YAML file holding one flat object ``{name: text}`` (a list of strings is
  joined with newlines, so long templates stay readable in JSON);
- a single text file: a pack of one template named by the file's stem;
- the name of a pack shipped with the package (``hotpotqa``: the folder
  ``reflexion_bench/prompts/hotpotqa/``).

Benchmarks ship their own default pack; a run may point ``prompts=`` at an external
pack (for example the paper's prompt files) and :func:`load_prompts` layers it over
the default, so that prompt sets are compared under the same harness and a partial
pack only replaces the templates it names.

Templates use ``{name}`` placeholders (identifiers only); any other brace is literal
text, and ``{{`` / ``}}`` give literal ``{name}``-looking text. A placeholder with no
value is an error naming the template and the value, never a silent gap.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

PACKS_DIR = Path(__file__).resolve().parent
TEMPLATE_SUFFIXES = (".txt", ".md", ".prompt", ".tmpl")
_SKIP_STEMS = ("readme", "license")
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


class PromptError(ValueError):
    """A prompt pack is missing, malformed, or lacks a template or value; says which."""


class PromptPack(Mapping[str, str]):
    """An immutable mapping of template name -> template text.

    Args:
        templates: The templates.
        source: Where they came from (shown in errors and recorded by callers).
    """

    def __init__(self, templates: Mapping[str, str], source: str = "<inline>") -> None:
        for name, text in templates.items():
            if not isinstance(text, str):
                raise PromptError(
                    f"prompt pack {source}: template {name!r} must be text, "
                    f"got {type(text).__name__}"
                )
        self._templates = dict(templates)
        self.source = source

    def __getitem__(self, name: str) -> str:
        try:
            return self._templates[name]
        except KeyError:
            raise PromptError(
                f"prompt pack {self.source} has no template {name!r} "
                f"(it has: {', '.join(sorted(self._templates)) or 'nothing'})"
            ) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._templates)

    def __len__(self) -> int:
        return len(self._templates)

    def __repr__(self) -> str:
        return f"PromptPack({self.source!r}, {sorted(self._templates)})"

    def render(self, name: str, /, **values: Any) -> str:
        """Fill template ``name`` with ``values`` (see the module doc for the syntax)."""
        return fill(self[name], values, where=f"template {name!r} of {self.source}")

    def placeholders(self, name: str) -> set[str]:
        """The value names template ``name`` uses."""
        return {m.group(1) for m in _PLACEHOLDER.finditer(self[name]) if m.group(1)}

    def require(self, names: Sequence[str]) -> None:
        """Fail now, naming the pack, if any of ``names`` is missing (call at build time)."""
        missing = [n for n in names if n not in self._templates]
        if missing:
            raise PromptError(
                f"prompt pack {self.source} lacks the template(s) {missing} "
                f"(it has: {', '.join(sorted(self._templates)) or 'nothing'})"
            )

    def layered(self, override: PromptPack) -> PromptPack:
        """This pack with ``override``'s templates replacing or adding to its own."""
        return PromptPack(
            {**self._templates, **override._templates}, f"{override.source} over {self.source}"
        )


def fill(template: str, values: Mapping[str, Any], where: str = "template") -> str:
    """Substitute ``{name}`` placeholders of ``template`` from ``values``."""

    def sub(m: re.Match[str]) -> str:
        token = m.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        key = m.group(1)
        if key not in values:
            raise PromptError(
                f"{where} needs a value for {{{key}}} (given: {', '.join(sorted(values))})"
            )
        return str(values[key])

    return _PLACEHOLDER.sub(sub, template)


def load_pack(source: str | Path | Mapping[str, Any]) -> PromptPack:
    """Load a pack from a directory, a JSON/YAML/text file, a built-in name, or a mapping."""
    if isinstance(source, Mapping):
        return PromptPack(_as_templates(source, "<inline>"), "<inline>")
    path = Path(str(source)).expanduser()
    if not path.exists():
        builtin = PACKS_DIR / str(source)
        if "/" not in str(source) and builtin.is_dir():
            path = builtin
        else:
            raise PromptError(
                f"prompt pack {str(source)!r} not found: give a directory, a .json/.yaml "
                f"file, a text file, or a built-in pack name ({', '.join(builtin_packs())})"
            )
    if path.is_dir():
        return _load_dir(path)
    suffix = path.suffix.lower()
    text = path.read_text(encoding="utf-8")
    if suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise PromptError(f"prompt pack {path}: invalid JSON ({exc})") from None
        return PromptPack(_as_templates(data, str(path)), str(path))
    if suffix in (".yaml", ".yml"):
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise PromptError(f"prompt pack {path}: invalid YAML ({exc})") from None
        return PromptPack(_as_templates(data, str(path)), str(path))
    return PromptPack({path.stem: text}, str(path))


def load_prompts(
    default: str | Path | Mapping[str, Any],
    override: str | Path | Mapping[str, Any] | None = None,
    required: Sequence[str] = (),
) -> PromptPack:
    """The default pack with ``override`` (the ``prompts=`` config) layered on top.

    Args:
        default: The benchmark's own pack (usually a built-in name such as ``hotpotqa``).
        override: An external pack; ``None`` or ``""`` means the default alone.
        required: Template names the caller will render; checked now so that a pack
            lacking one fails at start, not in the middle of a run.
    """
    pack = load_pack(default)
    if override not in (None, ""):
        assert override is not None
        pack = pack.layered(load_pack(override))
    pack.require(required)
    return pack


def builtin_packs() -> list[str]:
    """Names of the packs shipped with the package."""
    return sorted(p.name for p in PACKS_DIR.iterdir() if p.is_dir() and not p.name.startswith("_"))


def _load_dir(root: Path) -> PromptPack:
    templates: dict[str, str] = {}
    for f in sorted(root.rglob("*")):
        rel = f.relative_to(root)
        if not f.is_file() or f.suffix.lower() not in TEMPLATE_SUFFIXES:
            continue
        if any(part.startswith((".", "_")) for part in rel.parts):
            continue
        if f.stem.lower().startswith(_SKIP_STEMS):
            continue
        templates[rel.with_suffix("").as_posix()] = f.read_text(encoding="utf-8")
    if not templates:
        raise PromptError(
            f"prompt pack {root} holds no template files ({', '.join(TEMPLATE_SUFFIXES)})"
        )
    return PromptPack(templates, str(root))


def _as_templates(data: Any, source: str) -> dict[str, str]:
    if not isinstance(data, Mapping):
        raise PromptError(
            f"prompt pack {source} must be an object of name -> text, got {type(data).__name__}"
        )
    out: dict[str, str] = {}
    for name, value in data.items():
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = "\n".join(value)
        if not isinstance(value, str):
            raise PromptError(
                f"prompt pack {source}: template {name!r} must be text or a list of lines, "
                f"got {type(value).__name__}"
            )
        out[str(name)] = value
    return out

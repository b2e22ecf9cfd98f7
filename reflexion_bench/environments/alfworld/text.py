"""The game's text conventions, shared by the environment, actor, evaluator and analysis.

Pure functions over strings only (no game engine import), so the analysis can run on
run logs where ``alfworld`` is not installed.

The two text versions of the ALFWorld games differ in the put action and the arrival
message:

==========  ========================  ===============================================
version     put command               arrival after ``go to cabinet 1``
==========  ========================  ===============================================
``v2.1.1``  ``put X in/on Y``         ``You arrive at loc 12. On the cabinet 1, ...``
``v2.1.2``  ``move X to Y``           ``You arrive at cabinet 1. On the cabinet 1, ...``
==========  ========================  ===============================================
"""

from __future__ import annotations

import re
from collections.abc import Iterable

VERSIONS = ("v2.1.1", "v2.1.2")

#: ALFWorld task-type folder prefix -> the short key used in prompt names (``react_put_0``).
TASK_TYPES: dict[str, str] = {
    "pick_and_place_simple": "put",
    "pick_clean_then_place_in_recep": "clean",
    "pick_heat_then_place_in_recep": "heat",
    "pick_cool_then_place_in_recep": "cool",
    "look_at_obj_in_light": "examine",
    "pick_two_obj_and_place": "puttwo",
}
TYPE_KEYS = tuple(TASK_TYPES.values())

NOTHING = "Nothing happens."
THINK_OK = "OK."

_GRAMMAR_PUT = {
    "v2.1.1": 'template :: "put {o} in/on {r}"',
    "v2.1.2": 'template :: "move {o} to {r}"',
}
_PUT_ACTION = {
    "v2.1.1": re.compile(r"^put (.+?) in/on (.+)$"),
    "v2.1.2": re.compile(r"^move (.+?) to (.+)$"),
}
# Any put-like command, whichever version's syntax (and common free variants).
_ANY_PUT = re.compile(r"^(?:put|move|place) (.+?) (?:in/on|into|onto|in|on|to) (.+)$")
_ARRIVE_LOC = re.compile(r"^You arrive at loc \d+\. ")
_WELCOME = re.compile(r"^-= Welcome to TextWorld, ALFRED! =-\s*")


def task_type_of(game_path: str) -> str | None:
    """The ALFWorld task type of a game path (``pick_heat_then_place_in_recep-Egg-...``)."""
    for part in reversed(game_path.replace("\\", "/").split("/")):
        prefix = part.split("-", 1)[0]
        if prefix in TASK_TYPES:
            return prefix
    return None


def task_params_of(game_path: str) -> dict[str, str]:
    """Object / receptacle types from the task folder name, lower-cased as in the game text.

    ``pick_heat_then_place_in_recep-Egg-None-GarbageCan-10`` gives
    ``{"object": "egg", "receptacle": "garbagecan", "scene": "10"}``; for
    ``look_at_obj_in_light`` the "receptacle" is the lamp (``desklamp``).
    """
    for part in reversed(game_path.replace("\\", "/").split("/")):
        fields = part.split("-")
        if fields[0] in TASK_TYPES and len(fields) >= 5:
            out = {"object": fields[1].lower(), "receptacle": fields[3].lower(), "scene": fields[4]}
            if fields[2] != "None":
                out["movable"] = fields[2].lower()
            return out
    return {}


def grammar_version(grammar: str) -> str | None:
    """The text version a game's grammar (the ``grammar`` field of ``game.tw-pddl``) speaks."""
    for version, marker in _GRAMMAR_PUT.items():
        if marker in grammar:
            return version
    return None


def goal_of(text: str) -> str | None:
    """The goal sentence after ``Your task is to:`` (from an observation or a grammar)."""
    m = re.search(r"Your task is to: ([^\n\"]+)", text)
    return m.group(1).strip() if m else None


def clean_observation(text: str) -> str:
    """Normalise a game observation the way every prompt and log shows it.

    Drops the welcome banner, joins the paragraphs of the first observation into lines,
    and removes v2.1.1's uninformative ``You arrive at loc N.`` (the location number is
    internal), so that both versions read alike apart from the put action.
    """
    text = _WELCOME.sub("", text.strip())
    text = "\n".join(p.strip() for p in text.split("\n\n") if p.strip())
    return _ARRIVE_LOC.sub("", text)


def is_think(action: str) -> bool:
    return action.strip().lower().startswith("think:")


def put_syntax(action: str) -> str | None:
    """Which version's put syntax ``action`` uses (``v2.1.1``/``v2.1.2``), or None."""
    a = action.strip().lower()
    for version, pattern in _PUT_ACTION.items():
        if pattern.match(a):
            return version
    if _ANY_PUT.match(a) and a.startswith("put "):
        return "v2.1.1"  # `put X in Y` / `put X on Y`: the old style, never valid in v2.1.2
    return None


def put_target(action: str) -> tuple[str, str] | None:
    """``(object, receptacle)`` of a put-like command in either version's syntax."""
    m = _ANY_PUT.match(action.strip().lower())
    return (m.group(1).strip(), m.group(2).strip()) if m else None


def detect_text_version(texts: Iterable[str]) -> str | None:
    """The game version a prompt's demonstrations were written for, from their put actions.

    Returns None when no put action is shown (e.g. the examine demonstrations) or when the
    texts use both syntaxes (the caller reports that as a broken pack).
    """
    found: set[str] = set()
    for text in texts:
        for line in text.splitlines():
            line = line.strip()
            if line.startswith(">"):
                version = put_syntax(line.lstrip("> ").strip())
                if version:
                    found.add(version)
            elif line.startswith("You put the ") and " in/on the " in line:
                found.add("v2.1.1")
            elif line.startswith("You move the ") and " to the " in line:
                found.add("v2.1.2")
    return found.pop() if len(found) == 1 else None


def mixed_text_versions(texts: Iterable[str]) -> bool:
    """True when the texts show the put syntax of both versions."""
    versions = {detect_text_version([t]) for t in texts} - {None}
    return len(versions) > 1


def convert_demo(text: str, to_version: str) -> str:
    """Rewrite a v2.1.2 demonstration for v2.1.1 games (the only direction the project needs).

    The project's own demonstrations are written for v2.1.2; for v2.1.1 games the put
    action and its answer change, and the arrival sentence goes (v2.1.1's ``loc N`` is
    removed from observations by :func:`clean_observation`).
    """
    if to_version == "v2.1.2":
        return text
    if to_version != "v2.1.1":
        raise ValueError(f"unknown ALFWorld text version {to_version!r} (known: {VERSIONS})")
    out = []
    for line in text.splitlines():
        m = re.match(r"^> move (.+?) to (.+)$", line)
        if m:
            line = f"> put {m.group(1)} in/on {m.group(2)}"
        else:
            line = re.sub(
                r"^You move the (.+?) to the (.+?)\.$", r"You put the \1 in/on the \2.", line
            )
            line = re.sub(r"^You arrive at (?!loc )[^.]+\. ", "", line)
        out.append(line)
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def normalize_action(raw: str) -> str:
    """The command in a model's reply: its first non-empty line, without decoration.

    Chat models often echo the prompt's ``>`` marker, prefix ``Action:``, wrap the command
    in quotes or backticks, or end it with a full stop; the game's parser accepts none of
    these. A ``think:`` line is kept verbatim after its marker.
    """
    line = next((ln.strip() for ln in raw.splitlines() if ln.strip()), "")
    line = line.lstrip(">").strip()
    line = re.sub(r"^(?:action|next action|command)\s*[:：]\s*", "", line, flags=re.I)
    line = line.strip("`\"' ")
    if is_think(line):
        return "think:" + line.split(":", 1)[1].rstrip()
    line = re.sub(r"\s+", " ", line).strip().rstrip(".").strip()
    return line.lower()


def seen_objects(observation: str) -> set[str]:
    """The ``name N`` entities listed in an observation (``a mug 1, and a cd 2``)."""
    return set(re.findall(r"\b([a-z]+ \d+)\b", observation.lower()))

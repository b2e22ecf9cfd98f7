"""What every code benchmark shares: the language abstraction, code tasks, prompts.

A *code task* is a :class:`~reflexion_bench.core.types.Task` whose ``data`` holds:

- ``language``: the :class:`CodeLanguage` that knows how to extract, test and run
  programs of the task's language (built by the environment from its ``language:``
  config node, so Hydra's ``_target_`` stays the only registry);
- ``entry_point``: the name of the function to implement;
- ``test``: the hidden test code (never shown to the actor);
- ``test_call``: code appended after ``test`` that runs it (``check(f)`` for
  HumanEval, empty when the test file calls its checks itself, as MultiPL-E's do);
- optionally ``timeout_s`` (hidden-test timeout of this task), ``canonical_solution``.

Roles find the language with :func:`code_language`. A new language (Rust, ...) is a
new :class:`CodeLanguage` subclass: it says how to pull code out of a model reply,
how to parse generated tests, how to run them (compile step included) in the
sandbox, and which prompt folder it uses (``prompts/code/<name>/``).
"""

from __future__ import annotations

import abc
import gzip
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import GenerateConfig, Task
from reflexion_bench.environments.base import DatasetError
from reflexion_bench.prompts.loader import PACKS_DIR, PromptError, PromptPack, load_prompts
from reflexion_bench.sandbox.base import ExecResult, Sandbox

# --------------------------------------------------------------------------- results


@dataclass
class ExtractedCode:
    """A program pulled out of a model reply.

    ``kind`` says how it was found: ``fenced`` (a code block), ``raw`` (unfenced
    code), ``body`` (only a function body: the prompt's signature was prepended),
    ``none`` (no code at all: a stub that fails every test).
    """

    program: str
    kind: str
    notes: list[str] = field(default_factory=list)


@dataclass
class ParsedTests:
    """Unit tests parsed from a model reply, and how many candidate lines were dropped."""

    tests: list[str]
    dropped: int = 0
    dropped_examples: list[str] = field(default_factory=list)


@dataclass
class TestOutcome:
    """The verdict of one unit test. ``status`` is pass, fail or timeout (the
    program's), ``dropped`` (the judge refused to evaluate the assert or it exceeded the
    judge's limits: no verdict on the program) or error (a compiled language's harness);
    ``output`` is what the call returned (or the exception, or why), for the feedback."""

    __test__ = False  # not a pytest test class despite the name

    test: str
    status: str
    output: str = ""
    #: After a timeout: ``timeout_confirmed`` and ``timing`` (see judge.JudgeVerdict).
    timing: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    @property
    def dropped(self) -> bool:
        return self.status == "dropped"


@dataclass
class HiddenOutcome:
    """The verdict of the hidden tests on one program.

    ``status``: ``pass``; ``fail`` (an assertion or an exception while testing);
    ``timeout``; ``error`` (the program could not be loaded: syntax error, crash at
    import time, entry point missing, or the sandbox failed).
    """

    status: str
    detail: str = ""
    duration_s: float = 0.0
    #: How the time limit went, for the log: ``cpu_s`` (the candidate's CPU time),
    #: ``timeout_confirmed`` and ``timing`` after a timeout (see judge.JudgeVerdict).
    timing: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.status == "pass"


# --------------------------------------------------------------------------- language


class CodeLanguage(abc.ABC):
    """How one programming language is extracted, tested and run.

    Subclasses are built from config (``env.language._target_``) and are stateless,
    so one instance is shared by every task of an environment.
    """

    #: Short name; also the prompt sub-folder (``prompts/code/<name>/``).
    name: str = "unknown"
    #: Name shown in prompts.
    display_name: str = "unknown"
    #: The tag put on code fences in prompts (```python).
    fence: str = ""

    @abc.abstractmethod
    def extract_code(self, text: str, prompt: str, entry_point: str) -> ExtractedCode:
        """Turn a model reply into a complete program defining ``entry_point``.

        Never raises: unusable replies become a program that fails its tests.
        """

    @abc.abstractmethod
    def parse_tests(self, text: str, entry_point: str) -> ParsedTests:
        """Parse unit tests (one statement each) out of a model reply."""

    @abc.abstractmethod
    def complete_solution(self, source: str, prompt: str, entry_point: str) -> str:
        """A submitted solution as a complete program: ``source`` itself when it
        defines ``entry_point``, else ``source`` read as the body under ``prompt``."""

    @abc.abstractmethod
    async def run_tests(
        self,
        sandbox: Sandbox,
        program: str,
        tests: list[str],
        entry_point: str,
        timeout_s: float,
    ) -> list[TestOutcome]:
        """Run each test against ``program``; one test's failure or hang must not
        change another's verdict. ``timeout_s`` is per test."""

    @abc.abstractmethod
    async def run_hidden(
        self, sandbox: Sandbox, program: str, task: Task, timeout_s: float
    ) -> HiddenOutcome:
        """Run the task's hidden tests against ``program``."""

    def prompt_path(self, template: str) -> Path:
        """Where a prompt path template points for this language: ``{language}``
        becomes :attr:`name`, relative paths resolve under ``reflexion_bench/prompts/``.
        The code roles ask for their pack directory as ``code/{language}/``; a
        language may map that elsewhere by overriding this."""
        return resolve_prompt_path(template.replace("{language}", self.name))


# --------------------------------------------------------------------------- tasks


def code_language(task: Task) -> CodeLanguage:
    """The :class:`CodeLanguage` of a code task, or an error naming the fix."""
    lang = task.data.get("language")
    if not isinstance(lang, CodeLanguage):
        raise ConfigError(
            "env",
            task.benchmark,
            "a code benchmark (humaneval, mbpp, ...): the code actor/evaluator/scorer "
            "only work on tasks that carry a `language`",
        )
    return lang


def entry_point_of(task: Task) -> str:
    return str(task.data.get("entry_point", ""))


def read_jsonl(path: Path, key: str) -> Iterator[dict[str, Any]]:
    """Rows of a (optionally gzipped) JSONL file; a missing file or a bad line is a
    :class:`DatasetError` naming the config ``key`` and the path."""
    if not path.is_file():
        where = "" if path.is_absolute() else f", relative to {Path.cwd()}"
        raise DatasetError(
            f"dataset file not found: {path.resolve()} (`{key}` = {path}{where}; set "
            f"`{key}`, or `paths.data_dir` / $REFLEXION_BENCH_DATA for the shared data, "
            "to an existing JSONL file)"
        )
    opener = gzip.open if path.suffix == ".gz" else open
    lineno = 0
    try:
        with opener(path, "rb") as fh:
            for lineno, raw in enumerate(fh, 1):
                line = raw.decode("utf-8")
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DatasetError(
                        f"{path}:{lineno}: not valid JSON ({exc}); check `{key}`"
                    ) from None
                if not isinstance(row, dict):
                    raise DatasetError(f"{path}:{lineno}: expected a JSON object; check `{key}`")
                yield row
    except UnicodeDecodeError:
        raise DatasetError(
            f"{path}:{lineno}: not UTF-8 text (a binary file?); set `{key}` to a UTF-8 "
            "JSONL file (or .jsonl.gz)"
        ) from None
    except (OSError, EOFError) as exc:  # e.g. a .gz that is not gzip
        raise DatasetError(f"{path}: cannot be read ({exc}); check `{key}`") from None


_TOP_LEVEL_CALL = re.compile(r"^(?!def |class |\s|#)[^\n]*\b(?:check|test_check)\s*\(", re.M)


def with_timeout(tasks: list[Task], timeout_s: float | None) -> list[Task]:
    """Give every task the environment's hidden-test timeout unless it has its own."""
    if timeout_s is not None:
        for task in tasks:
            task.data.setdefault("timeout_s", timeout_s)
    return tasks


def needs_check_call(test: str) -> bool:
    """Whether a test file only *defines* ``check`` (HumanEval) rather than calling it
    (MultiPL-E files end with ``test_check()``)."""
    return "def check" in test and not _TOP_LEVEL_CALL.search(test)


def problem_to_task(
    row: Mapping[str, Any], benchmark: str, language: CodeLanguage, key: str
) -> Task:
    """A row in the HumanEval schema (``task_id``) or MultiPL-E's (``name``) -> Task."""
    task_id = row.get("task_id", row.get("name"))
    missing = [f for f in ("prompt", "entry_point", "test") if not isinstance(row.get(f), str)]
    if task_id is None or missing:
        what = ", ".join(missing + ([] if task_id is not None else ["task_id/name"]))
        raise DatasetError(
            f"problem {task_id!r} lacks required field(s) {what} (the HumanEval schema: "
            f"task_id, prompt, entry_point, test); check `{key}`"
        )
    entry_point = str(row["entry_point"])
    test = str(row["test"])
    data: dict[str, Any] = {
        "language": language,
        "entry_point": entry_point,
        "test": test,
        "test_call": f"check({entry_point})" if needs_check_call(test) else "",
    }
    for extra in ("canonical_solution", "timeout_s"):
        if extra in row:
            data[extra] = row[extra]
    return Task(id=str(task_id), prompt=str(row["prompt"]), benchmark=benchmark, data=data)


# --------------------------------------------------------------------------- prompts


def resolve_prompt_path(path: str) -> Path:
    """An absolute (or existing) path as is; a relative one under the package's prompts."""
    p = Path(path).expanduser()
    return p if p.is_absolute() or p.exists() else PACKS_DIR / p


class CodePrompts:
    """The prompt pack of one code role, per language.

    Args:
        pack: The default pack: a directory of templates; ``{language}`` becomes the
            task's language and a relative path resolves under
            ``reflexion_bench/prompts/`` (``code/{language}`` = the project's own).
        override: An external pack (directory, JSON/YAML file) layered over it, or None.
        required: Template names the role renders (checked when the pack loads).
        key: The config key named in errors (``actor.prompts``...).
    """

    def __init__(self, pack: str, override: str | None, required: Sequence[str], key: str) -> None:
        self.pack = pack
        self.override = override or None
        self.required = tuple(required)
        self.key = key
        self._cache: dict[str, PromptPack] = {}

    def for_language(self, language: CodeLanguage) -> PromptPack:
        if language.name not in self._cache:
            path = language.prompt_path(self.pack.rstrip("/") + "/")
            try:
                self._cache[language.name] = load_prompts(path, self.override, self.required)
            except PromptError as exc:
                raise ConfigError(self.key, self.override or str(path), str(exc)) from None
        return self._cache[language.name]

    def render(self, lang: CodeLanguage, name: str, /, **values: object) -> str:
        """Template ``name`` of ``lang``'s pack, filled with ``values``."""
        try:
            return self.for_language(lang).render(name, **values).strip()
        except PromptError as exc:
            raise ConfigError(self.key, name, str(exc)) from None


def base_values(task: Task) -> dict[str, object]:
    """The placeholder values every code prompt may use."""
    lang = code_language(task)
    return {
        "language": lang.display_name,
        "fence": lang.fence,
        "entry_point": entry_point_of(task),
        "prompt": task.prompt.strip("\n"),
    }


def role_config(state: TaskState, max_tokens: int | None) -> GenerateConfig:
    """The run's sampling defaults, with a role's own token budget if it sets one."""
    base = state.services.generate_config
    return base if max_tokens is None else base.replace(max_tokens=max_tokens)


# --------------------------------------------------------------------------- sandbox


def describe_exec_failure(result: ExecResult) -> str:
    """A one-line reason for an execution that did not finish normally."""
    if result.reason == "timeout":
        return f"timed out after {result.duration_s:.1f}s"
    if result.reason == "memory":
        return "memory limit exceeded"
    if result.reason == "output_limit":
        return "output limit exceeded"
    if result.reason == "signal":
        return f"killed by a signal {result.detail}".strip()
    if result.reason == "error":
        return f"sandbox error: {result.detail or result.stderr[-300:]}"
    return f"exit code {result.exit_code}"


def tail(text: str, limit: int = 1500) -> str:
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]

"""``reflexion-bench run <overrides> --estimate``: calls, tokens, dollars and time of a
run before it is run.

Nothing is run for real and no model is contacted. The estimate puts together:

- a *dry run* of the same configuration with the scripted mock model (``model=mock``)
  on its first :data:`SAMPLE_TASKS` tasks and at most :data:`SAMPLE_TRIALS` trials, in a
  temporary folder removed afterwards: the calls a task makes per trial, role by role,
  and the prompts the project really builds for them. The mock's replies fail, so every
  sampled task goes to the trial cap: the calls of a first and of a later trial are both
  measured. Tokens are counted as characters / 4 (:data:`CHARS_PER_TOKEN`), a rule of
  thumb for English and code with GPT-style tokenizers;
- the paper's own logs (``<paths.data_dir>/reflexion-original-repo``, the original
  repository's run folders, see ``/work/shared/data/README.md``): how many trials a task
  took (programming: 1 + its logged reflections; ALFWorld and HotpotQA: the share still
  unsolved before each trial) and, where the logs hold the text, the mean length of a
  reply (programming: the solutions and the reflections). Where the logs are absent or
  have no run of this benchmark x strategy, the estimate says so and uses the dry run's
  counts: every task to K trials;
- the project's committed runs (``results/<study>/.../log.jsonl``, see
  :mod:`reflexion_bench.runner.reference_logs`): a run of this very model, benchmark and
  strategy gives the trials per task and every role's mean reply length (its own
  tokenizer's counts); any run of the benchmark gives the mean length of a reply the
  paper's logs do not hold (the self-tests). Only a role no log has is counted at its
  ``max_tokens``, and the line says so;
- the price table (``configs/prices/default.yaml`` through ``model.prices``, with its
  ``model.prices_date``), for the model the experiment names.

Two totals are printed, each labelled: the *expected* one (the expected trials, each
reply at its logged mean length) and an *upper bound* (every task to K trials, every
reply at its ``max_tokens``; the prompts are the dry run's, which quote the mock's short
replies, so a later trial's prompt can be longer in a real run).

Time: for a local model, the completion tokens over the tokens/s measured for it on
this machine or committed for the project's machine (``results/bench/tokens_per_s.json``,
written by ``scripts/bench_models.py``; the line says which): all slots busy when
several tasks are in flight, one request otherwise. Prompt processing is not in that
figure. For an API model, :data:`SECONDS_PER_CALL` plus :data:`TOKENS_PER_SECOND` of
generation per call, ``max_concurrent_tasks`` tasks in flight: a stated guess.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import os
import platform
import re
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf, open_dict

from reflexion_bench.core.types import GenerateConfig, Message, ModelOutput
from reflexion_bench.models.mock import MockModel
from reflexion_bench.runner.provenance import cpu_model
from reflexion_bench.runner.reference_logs import LoggedFigures

FLAG = "--estimate"
#: Tasks of the dry run (its first ones) and its trial cap (trial 1 + two later trials).
SAMPLE_TASKS = 3
SAMPLE_TRIALS = 3
#: Tokens ~= characters / 4 (English prose and code, GPT-style BPE tokenizers).
CHARS_PER_TOKEN = 4
#: The time guess per call: a fixed overhead plus generation at this many tokens/s.
SECONDS_PER_CALL = 1.0
TOKENS_PER_SECOND = 40.0
#: Roles whose calls follow a failed trial (they belong to the next trial's cost).
AFTER_FAILURE_ROLES = ("reflector",)
PAPER_LOGS = "reflexion-original-repo"
#: The local models' measured generation speed (``scripts/bench_models.py --embedded``).
SPEED_FILE = Path("results") / "bench" / "tokens_per_s.json"


def tokens_of(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN)


class CountingMock(MockModel):
    """The mock model (its default replies), counting tokens as characters / 4 instead of
    words, so that the dry run's prompt sizes are in the estimate's unit."""

    async def generate(self, messages: Sequence[Message], config: GenerateConfig) -> ModelOutput:
        out = await super().generate(messages, config)
        out.prompt_tokens = tokens_of(sum(len(m.content) for m in messages))
        out.completion_tokens = tokens_of(len(out.text))
        return out


# --------------------------------------------------------------------------- the paper's logs


@dataclass
class PaperFigures:
    """What the paper's logs say about one benchmark x strategy."""

    source: str
    #: Share of tasks still unsolved before trial t (t = 1, 2, ...; the first is 1.0).
    unsolved_before: list[float]
    #: Mean completion tokens per call, by role, where the logs hold the text.
    completion: dict[str, float] = field(default_factory=dict)

    def expected_trials(self, k: int) -> float:
        """Mean trials per task with K = ``k`` (the log's last share carried forward)."""
        shares = self.unsolved_before or [1.0]
        return sum(shares[min(t, len(shares) - 1)] for t in range(k))


def _programming(root: Path, benchmark: str, strategy: str) -> PaperFigures | None:
    from reflexion_bench.analysis.imports import (
        ImportError_,
        detect_programming,
        read_programming_rows,
    )

    found = []
    for path in sorted((root / "programming_runs" / "root").glob("*/*.jsonl")):
        try:
            rows = read_programming_rows(path)
        except ImportError_:
            continue
        det = detect_programming(path, rows)
        if det.benchmark == benchmark and det.strategy == strategy:
            found.append((det.model != "gpt-4", path, rows))
    if not found:
        return None
    _, path, rows = min(found, key=lambda f: (f[0], str(f[1])))  # GPT-4's first
    trials = [1 + len(r.get("reflections") or []) for r in rows]
    top = max(trials)
    unsolved = [sum(t > i for t in trials) / len(trials) for i in range(top)]
    solutions = [len(str(r.get("solution") or "")) for r in rows]
    reflections = [len(str(x)) for r in rows for x in r.get("reflections") or []]
    completion = {"actor": tokens_of(sum(solutions)) / len(solutions)}
    if reflections:
        completion["reflector"] = tokens_of(sum(reflections)) / len(reflections)
    return PaperFigures(str(path.relative_to(root)), unsolved, completion)


def _alfworld(root: Path, strategy: str) -> PaperFigures | None:
    folder = {"reflexion": "reflexion_run_logs", "retry": "base_run_logs"}.get(strategy)
    if folder is None:
        return None
    base = root / "alfworld_runs" / "root" / folder
    files = sorted(
        base.glob("env_results_trial_*.json"), key=lambda p: int(p.stem.rsplit("_", 1)[1])
    )
    if not files:
        return None
    unsolved = [1.0]
    for f in files[:-1]:  # success is cumulative: the games still unsolved after trial t
        games = json.loads(f.read_text(encoding="utf-8"))
        unsolved.append(sum(not g.get("is_success") for g in games) / len(games))
    return PaperFigures(str(base.relative_to(root)), unsolved)


_HOTPOT_ACTORS = {"cot": "CoT/no_context", "cot_context": "CoT/context", "react": "ReAct"}
_HOTPOT_STRATEGIES = {
    "retry": "base",
    "reflexion": "reflexion",
    "last_attempt": "last_trial",
    "last_attempt_and_reflexion": "last_trial_and_reflexion",
}
_SUMMARY = re.compile(r"Trial summary: Correct: (\d+), Incorrect: (\d+)(?:, Halted: (\d+))?")


def _hotpotqa(root: Path, actor: str, strategy: str) -> PaperFigures | None:
    agent, folder = _HOTPOT_ACTORS.get(actor), _HOTPOT_STRATEGIES.get(strategy)
    if agent is None or folder is None:
        return None
    base = root / "hotpotqa_runs" / "root" / agent / folder
    for path in sorted(base.glob("100_questions_*trials.txt")):
        unsolved = [1.0]
        for m in _SUMMARY.finditer(path.read_text(encoding="utf-8", errors="replace")):
            correct, wrong, halted = (int(g or 0) for g in m.groups())
            unsolved.append((wrong + halted) / max(1, correct + wrong + halted))
        if len(unsolved) > 1:
            return PaperFigures(str(path.relative_to(root)), unsolved[:-1])
    return None


def paper_figures(
    cfg: DictConfig, benchmark: str, strategy: str
) -> tuple[PaperFigures | None, str]:
    """The paper's figures for this run's benchmark x strategy, or None and why not."""
    root = Path(str(cfg.paths.data_dir)) / PAPER_LOGS
    if not root.is_dir():
        return None, f"the paper's logs are not here ({root})"
    if benchmark.startswith("alfworld"):
        found = _alfworld(root, strategy)
    elif benchmark == "hotpotqa":
        actor = str(OmegaConf.select(cfg, "hydra.runtime.choices.actor", default="") or "")
        found = _hotpotqa(root, actor, strategy)
    else:
        found = _programming(root, benchmark, strategy)
    return found, "" if found else f"the paper's logs have no {benchmark} x {strategy} run"


# --------------------------------------------------------------------------- the dry run


@dataclass
class DryRun:
    """Per-task costs measured by the dry run (means over its tasks), by role."""

    tasks: int
    trials: float
    #: Calls and prompt tokens of trial 1 (without the calls after its failure).
    first_calls: dict[str, float]
    first_prompt: dict[str, float]
    #: Calls and prompt tokens of each later trial (the failure calls before it included).
    later_calls: dict[str, float]
    later_prompt: dict[str, float]
    notes: list[str] = field(default_factory=list)

    def at_steps(self, role: str, steps: int, prompt_tokens: int | None) -> None:
        """Count ``role`` at ``steps`` calls per trial, each with ``prompt_tokens`` (None:
        the dry run's mean): the mock ends an episode early (it repeats one action or
        answers at once), a real agent may take every step."""
        for calls, prompt in (
            (self.first_calls, self.first_prompt),
            (self.later_calls, self.later_prompt),
        ):
            n = calls.get(role, 0.0)
            if not n or n >= steps:
                continue
            per_call = prompt.get(role, 0.0) / n
            calls[role] = float(steps)
            prompt[role] = steps * float(prompt_tokens or per_call)


def measure(run_dir: Path) -> DryRun:
    """Read the dry run's log: trial 1's calls, and each later trial's."""
    from reflexion_bench.core.runlog import load_run_records

    by_task: dict[str, list[dict[str, Any]]] = {}
    for r in load_run_records(run_dir):
        by_task.setdefault(str(r["task_id"]), []).append(r)
    calls: dict[bool, dict[str, float]] = {True: {}, False: {}}
    prompt: dict[bool, dict[str, float]] = {True: {}, False: {}}
    later_trials = 0
    for records in by_task.values():
        later_trials += len(records) - 1
        for r in records:
            for call in r.get("model_calls") or []:
                role = str(call.get("role"))
                first = r["trial"] == 1 and role not in AFTER_FAILURE_ROLES
                calls[first][role] = calls[first].get(role, 0) + 1
                tokens = float(call.get("prompt_tokens") or 0)
                prompt[first][role] = prompt[first].get(role, 0) + tokens
    n = max(1, len(by_task))
    d = max(1, later_trials)
    return DryRun(
        tasks=len(by_task),
        trials=(len(by_task) + later_trials) / n,
        first_calls={k: v / n for k, v in calls[True].items()},
        first_prompt={k: v / n for k, v in prompt[True].items()},
        later_calls={k: v / d for k, v in calls[False].items()},
        later_prompt={k: v / d for k, v in prompt[False].items()},
    )


def _without_model(overrides: Sequence[str]) -> list[str]:
    # The dry run's model is the mock: options of the real model are not its options.
    drop = ("model", "+model", "++model", "~model", "role_models", "+role_models")
    return [o for o in overrides if o.split("=", 1)[0].split(".", 1)[0] not in drop]


def dry_run(overrides: Sequence[str], n_tasks: int, folder: Path) -> DryRun:
    from reflexion_bench.runner.run import run_experiment

    run_dir = folder / "run"
    cfg = compose_config(
        [
            *_without_model(overrides),
            "model=mock",
            f"model.client_target={CountingMock.__module__}.{CountingMock.__qualname__}",
            f"limit={min(n_tasks, SAMPLE_TASKS)}",
            "task_ids=null",
            f"max_trials_cap={SAMPLE_TRIALS}",
            "progress=false",
            "resume=false",
            f"run_dir={run_dir}",
            f"paths.results_dir={folder / 'results'}",
        ],
        folder,
    )
    asyncio.run(run_experiment(cfg, run_dir))
    return measure(run_dir)


# --------------------------------------------------------------------------- composing


def compose_config(overrides: Sequence[str], output_dir: Path) -> DictConfig:
    """The run's config as ``reflexion-bench run`` composes it (Hydra's compose API),
    with ``${hydra:...}`` resolvable and nothing written."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.hydra_config import HydraConfig

    from reflexion_bench.config import CONFIG_DIR

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose("config", overrides=list(overrides), return_hydra_config=True)
    with open_dict(cfg):
        cfg.hydra.runtime.output_dir = str(output_dir)
    HydraConfig.instance().set_config(cfg)
    return cfg


def sweep_jobs(overrides: Sequence[str], multirun: bool) -> list[list[str]]:
    """The jobs of ``overrides``: one, or with ``-m`` one per combination of values."""
    if not multirun:
        return [list(overrides)]
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parsed = OverridesParser.create().parse_overrides(list(overrides))
    choices: list[list[str]] = []
    for o in parsed:
        key = o.get_key_element()
        if o.is_sweep_override():
            choices.append([f"{key}={v}" for v in o.sweep_string_iterator()])
        else:
            choices.append([f"{key}={o.get_value_element_as_str()}"])
    return [list(c) for c in itertools.product(*choices)]


# --------------------------------------------------------------------------- the estimate


@dataclass
class Estimate:
    label: str
    model: str
    tasks: int
    k: int
    in_flight: int
    price: Any  # reflexion_bench.models.layer.Price | None
    prices_date: str | None
    dry: DryRun
    paper: PaperFigures | None
    completion: dict[str, tuple[float, str]]  # role -> (tokens per call, where from)
    expected_trials: float
    why_no_paper: str = ""
    #: Role -> its reply's ``max_tokens`` (the upper bound's reply length).
    caps: dict[str, float] = field(default_factory=dict)
    #: Where the expected trials come from (the paper's log, a committed run, the dry run).
    trials_source: str = ""
    #: A local model's generation speed (tokens/s, what it is); None: an API model.
    speed: tuple[float, str] | None = None

    def totals(self, trials: float, bound: bool = False) -> dict[str, float]:
        """Calls, prompt and completion tokens, dollars and hours of the whole run at
        ``trials`` trials per task; ``bound``: every reply at its ``max_tokens``."""
        later = max(0.0, trials - 1)
        calls = {
            role: self.tasks * (self.dry.first_calls.get(role, 0) + later * n)
            for role, n in self.dry.later_calls.items()
        }
        for role, n in self.dry.first_calls.items():
            calls.setdefault(role, self.tasks * n)
        prompt = self.tasks * (
            sum(self.dry.first_prompt.values()) + later * sum(self.dry.later_prompt.values())
        )
        per_call = {
            r: (self.caps.get(r, n) if bound else n) for r, (n, _) in self.completion.items()
        }
        completion = sum(n * per_call[r] for r, n in calls.items())
        n_calls = sum(calls.values())
        usd = None if self.price is None else self.price.cost(prompt, completion)
        if self.speed is not None:
            # A local model's slots share the machine: the measured speed is already that
            # of all tasks in flight together, so it is not divided again.
            hours = completion / self.speed[0] / 3600
        else:
            seconds = n_calls * SECONDS_PER_CALL + completion / TOKENS_PER_SECOND
            hours = seconds / max(1, self.in_flight) / 3600
        return {
            "calls": n_calls,
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "tokens": prompt + completion,
            "usd": math.nan if usd is None else usd,
            "hours": hours,
        }


def reply_caps(cfg: DictConfig, roles: Sequence[str]) -> dict[str, float]:
    """Each role's ``max_tokens`` (its node's, else ``generate.max_tokens``)."""
    gen_max = int(OmegaConf.select(cfg, "generate.max_tokens", default=512) or 512)
    nodes = {"actor": "actor", "self_test": "evaluator", "reflector": "reflector"}
    out: dict[str, float] = {}
    for role in roles:
        node = cfg.get(nodes.get(role, role))
        cap = None
        if isinstance(node, DictConfig):
            cap = node.get("max_tokens") or node.get("max_step_tokens")
        out[role] = float(cap or gen_max)
    return out


def _completion_tokens(
    caps: dict[str, float],
    paper: PaperFigures | None,
    own: LoggedFigures | None,
    others: LoggedFigures | None,
) -> dict[str, tuple[float, str]]:
    """Each role's expected reply length and where it comes from, best source first: a
    committed run of this model (its own tokenizer), the paper's logs (GPT-4, chars/4),
    a committed run of the benchmark by another model, and only then the cap."""
    out: dict[str, tuple[float, str]] = {}
    for role, cap in caps.items():
        if own is not None and role in own.completion:
            mean, n = own.completion[role]
            out[role] = (mean, f"logged mean of {n} calls of this model")
        elif paper is not None and role in paper.completion:
            out[role] = (paper.completion[role], "the paper's logs, chars/4")
        elif others is not None and role in others.completion:
            mean, n = others.completion[role]
            out[role] = (mean, f"logged mean of {n} calls of {'/'.join(others.models)}")
        else:
            out[role] = (cap, "no log has it: its max_tokens")
    return out


def _this_machine(recorded: dict[str, Any]) -> bool:
    """Whether a speed figure was measured on a machine like this one (CPU and cores)."""
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count() or 0
    here = {"cpu_model": cpu_model(), "usable_cores": usable, "machine": platform.machine()}
    return all(recorded.get(k) == v for k, v in here.items())


def local_speed(cfg: DictConfig, in_flight: int) -> tuple[float, str] | None:
    """Generation tokens/s of the run's local model and what the figure is (None: not a
    local model, or no figure for it in ``results/bench/tokens_per_s.json``)."""
    from reflexion_bench.config import PROJECT_ROOT
    from reflexion_bench.runner.auto import _is_embedded

    if not _is_embedded(cfg.get("model")):
        return None
    choice = str(OmegaConf.select(cfg, "hydra.runtime.choices.model", default="") or "")
    path = PROJECT_ROOT / SPEED_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        models = data["results"]["tokens_per_s"]["models"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    figures = models.get(choice)
    if not isinstance(figures, dict):
        return None
    model = cfg.model
    old = str(model.get("n_threads")) == "1" and str(model.get("n_parallel")) == "1"
    setting = (
        "old" if old else "defaults_every_slot_busy" if in_flight > 1 else "defaults_one_request"
    )
    figure = figures.get(setting) or {}
    rate = figure.get("tokens_per_s")
    if not isinstance(rate, int | float) or rate <= 0:
        return None
    host = data.get("machine") or {}
    date = str(data.get("date", ""))[:10]
    where = (
        f"measured on this machine {date}"
        if _this_machine(host)
        else f"committed, measured {date} on {host.get('usable_cores', '?')} cores of "
        f"{host.get('cpu_model', 'another CPU')}, not this machine: run "
        "`python scripts/bench_models.py --embedded --skip-layer --parts 3` for yours"
    )
    return float(
        rate
    ), f"{rate:g} tokens/s ({figure.get('setting', setting)}; {SPEED_FILE}, {where})"


def estimate_job(overrides: Sequence[str]) -> Estimate:
    from reflexion_bench.config import build
    from reflexion_bench.models.layer import lookup_price, parse_prices
    from reflexion_bench.runner.auto import resolve_auto
    from reflexion_bench.runner.reference_logs import REFERENCE_DIR, logged_figures

    with tempfile.TemporaryDirectory(prefix="reflexion-bench-estimate-") as tmp:
        folder = Path(tmp)
        cfg = compose_config(overrides, folder / "config")
        model = cfg.model
        name = str(model.get("name"))
        price = lookup_price(parse_prices(model.get("prices")), name)
        env = build(cfg.env, "env")
        tasks = len(env.load_tasks())
        benchmark = str(getattr(env, "name", "unknown"))
        k = int(cfg.strategy.get("max_trials", 1))
        if cfg.get("max_trials_cap") is not None:
            k = min(k, int(cfg.max_trials_cap))
        strategy = str(cfg.strategy.get("name", "?"))
        # `auto` as a run would resolve it here (slots, threads): the speed depends on it.
        resolve_auto(cfg)
        in_flight = cfg.get("max_concurrent_tasks")
        in_flight = int(in_flight) if str(in_flight).isdigit() else 1
        paper, why_not = paper_figures(cfg, benchmark, strategy)
        dry = dry_run(overrides, tasks, folder / "dry")
        steps = OmegaConf.select(cfg, "actor.max_steps") or OmegaConf.select(cfg, "env.max_steps")
        if steps:
            cap = OmegaConf.select(cfg, "actor.max_prompt_tokens")
            dry.at_steps("actor", int(steps), None if cap is None else int(cap))
            dry.notes.append(
                f"an episode counted at its {int(steps)} steps"
                + (f", each prompt at actor.max_prompt_tokens={int(cap)}" if cap else "")
                + " (upper bounds: the mock's episodes end early; the paper's logs hold no steps)"
            )
    roles = sorted({*dry.first_calls, *dry.later_calls})
    own = logged_figures(REFERENCE_DIR, benchmark, name, strategy)
    others = logged_figures(REFERENCE_DIR, benchmark)
    if own is not None and own.unsolved_before:
        # This model's own runs say more about its trials than GPT-4's in the paper.
        logged = PaperFigures(own.label(), own.unsolved_before)
        expected = logged.expected_trials(k)
        trials_source = f"{expected:.2f} expected (logged runs of this model: {own.label()})"
    elif paper is not None:
        expected = paper.expected_trials(k)
        trials_source = f"{expected:.2f} expected (the paper's log {paper.source})"
    else:
        expected = float(k)
        trials_source = f"{k:g} ({why_not}: the dry run's count, every task to K)"
    if strategy == "simple" or k == 1:
        expected, trials_source = 1.0, "1 (one trial by design)"
    caps = reply_caps(cfg, roles)
    in_flight = min(in_flight, tasks) or 1
    return Estimate(
        label=" ".join(overrides) or "(defaults)",
        model=name,
        tasks=tasks,
        k=k,
        in_flight=in_flight,
        price=price,
        prices_date=model.get("prices_date"),
        dry=dry,
        paper=paper,
        completion=_completion_tokens(caps, paper, own, others),
        expected_trials=expected,
        why_no_paper=why_not,
        caps=caps,
        trials_source=trials_source,
        speed=local_speed(cfg, in_flight),
    )


def _money(usd: float) -> str:
    return "cost unknown (no price)" if math.isnan(usd) else f"${usd:,.2f}"


def _line(t: dict[str, float]) -> str:
    return (
        f"{t['calls']:,.0f} calls, {t['tokens']:,.0f} tokens ({t['prompt_tokens']:,.0f} prompt"
        f" + {t['completion_tokens']:,.0f} completion), {_money(t['usd'])}, ~{t['hours']:.1f} h"
    )


def render(e: Estimate) -> str:
    expected, most = e.totals(e.expected_trials), e.totals(float(e.k), bound=True)
    if e.price is None:
        price = f"no price for {e.model!r} in model.prices: dollars unknown"
    else:
        price = (
            f"${e.price.input:g} / ${e.price.output:g} per 1M prompt / completion tokens"
            f" (prices of {e.prices_date or 'an undated table'}, model.prices)"
        )
    trials = e.trials_source
    completion = ", ".join(f"{r} {n:,.0f} ({src})" for r, (n, src) in e.completion.items())
    caps = ", ".join(f"{r} {n:,.0f}" for r, n in e.caps.items())
    if e.speed is not None:
        time = f"generation at {e.speed[1]}; prompt processing not counted"
    else:
        time = (
            f"a guess: {SECONDS_PER_CALL:g} s + {TOKENS_PER_SECOND:g} tokens/s per call,"
            f" {e.in_flight} tasks in flight"
        )
    first = ", ".join(f"{r} {n:g}" for r, n in sorted(e.dry.first_calls.items()))
    later = ", ".join(f"{r} {n:g}" for r, n in sorted(e.dry.later_calls.items()))
    first_prompt, later_prompt = sum(e.dry.first_prompt.values()), sum(e.dry.later_prompt.values())
    lines = [
        f"estimate for: reflexion-bench run {e.label}",
        f"  model {e.model}: {price}",
        f"  {e.tasks} tasks, K={e.k} trials, {e.in_flight} tasks in flight",
        f"  dry run (model=mock, {e.dry.tasks} tasks, <= {SAMPLE_TRIALS} trials): calls per task"
        f" in trial 1: {first or 'none'} ({first_prompt:,.0f} prompt tokens);"
        f" per later trial: {later or 'none'} ({later_prompt:,.0f} prompt tokens)"
        + "".join(f"; {n}" for n in e.dry.notes),
        f"  trials per task: {trials}",
        f"  completion tokens per call, expected: {completion or 'no calls'}",
        f"  completion tokens per call, at most (max_tokens): {caps or 'no calls'}",
        f"  time: {time}",
        f"  expected (expected trials, replies at their logged mean): {_line(expected)}",
        f"  at most (upper bound, every task to K={e.k}, every reply at its max_tokens):"
        f" {_line(most)}",
    ]
    return "\n".join(lines)


NOTE = (
    "tokens = characters / 4 of the prompts the project builds (a rule of thumb; the mock's"
    " short replies make later prompts shorter than a real model's, in the upper bound"
    " too). Nothing was run and no model was contacted."
)


def main(argv: Sequence[str]) -> int:
    """``reflexion-bench run <argv> --estimate`` (``--estimate`` already removed)."""
    from reflexion_bench.config import redact_override, redact_text

    multirun = any(a in ("-m", "--multirun") for a in argv)
    overrides = [a for a in argv if a not in ("-m", "--multirun")]
    flags = [a for a in overrides if a.startswith("-")]
    if flags:
        print(f"error: --estimate takes overrides only, not {' '.join(flags)}", file=sys.stderr)
        return 2
    totals: list[dict[str, float]] = []
    for job in sweep_jobs(overrides, multirun):
        try:
            est = estimate_job(job)
        except Exception as exc:  # a config or data error: one line, as `run` gives it
            shown = " ".join(redact_override(o) for o in job)
            print(f"error: estimate of `{shown}`: {redact_text(str(exc))}", file=sys.stderr)
            return 2
        est.label = " ".join(redact_override(o) for o in job)
        print(render(est), flush=True)
        totals.append(est.totals(est.expected_trials))
    if len(totals) > 1:
        usd = sum(t["usd"] for t in totals)
        calls = sum(t["calls"] for t in totals)
        tokens = sum(t["tokens"] for t in totals)
        print(
            f"all {len(totals)} jobs, expected: {calls:,.0f} calls, {tokens:,.0f} tokens, {_money(usd)}"
        )
    print(NOTE)
    return 0

"""``reflexion-bench plan``: what a paired comparison can detect, before anything runs.

    reflexion-bench plan --tasks N --discordance PSI [--effect D] [--seeds S]
                         [--seed-correlation RHO] [--alpha 0.05] [--power 0.8] [--holm M]
    reflexion-bench plan --pilot RUN_A RUN_B [--tasks N] [--effect D] ...
    reflexion-bench plan --paper humaneval-py [--audit results/paper-audit/claims.json] ...
    reflexion-bench plan --budget-from RUN_DIR [--verdict-trial 2] [--round-to 500]

``--discordance`` is the share of discordant tasks (p01 + p10: exactly one of the two
strategies solves it) and ``--effect`` the paired difference of pass@1 (p10 - p01),
both fractions of tasks. The discordance can instead come from an earlier pair of runs
(``--pilot``: each run's final verdict per shared task) or from the paper's own logs
(``--paper ID``: a paired row of the committed paper audit, by its id; ``--scoring``
picks the logged verdicts or the audit's re-scored ones). With ``--effect`` (or a
pilot's observed effect) the command prints ``<N> tasks needed``; with ``--tasks`` it
prints the detectable difference as ``<x> points``. With one seed these are the figures
of the exact McNemar test the tables run (its power enumerated exactly), Connor's normal
approximation printed beside them in brackets; with several seeds, Connor's with the
seeds' design effect. ``--holm M`` plans one test of a Holm family of M at ``alpha / M``
(Holm's first step). Formulas: :mod:`reflexion_bench.analysis.power`.

``--budget-from`` plans the other half of an equal-budget study, its per-task token
budget, from a logged run of the strategy whose retries the budget must pay for
(Reflexion): the median, over the tasks that reached trial ``--verdict-trial``, of the
tokens that trial's verdict needed, rounded up to ``--round-to``
(:func:`reflexion_bench.analysis.equal_budget.budget_rule`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from reflexion_bench.analysis import power as pw

DEFAULT_AUDIT = Path("results/paper-audit/claims.json")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="reflexion-bench plan",
        description="Power of a paired comparison of two strategies on the same tasks: the "
        "smallest detectable difference for N tasks, or the tasks needed for an effect.",
    )
    p.add_argument("--tasks", type=int, default=None, help="tasks in the comparison (N)")
    p.add_argument(
        "--discordance",
        type=float,
        default=None,
        help="share of discordant tasks, p01 + p10 (a fraction, e.g. 0.2)",
    )
    p.add_argument(
        "--effect", type=float, default=None, help="paired difference p10 - p01 (a fraction)"
    )
    p.add_argument("--seeds", type=int, default=1, help="seeds per task and strategy (S)")
    p.add_argument(
        "--seed-correlation",
        type=float,
        default=None,
        help="intra-task correlation of the seeds' outcomes, 0-1 (default: from a pilot "
        "with several seeds, else 1: seeds assumed to add nothing)",
    )
    p.add_argument("--alpha", type=float, default=pw.ALPHA, help="two-sided level (0.05)")
    p.add_argument("--power", type=float, default=pw.POWER, help="target power (0.8)")
    p.add_argument(
        "--holm",
        type=int,
        default=1,
        metavar="M",
        help="the comparison is one of a Holm family of M tests: plan at alpha / M, the "
        "level of Holm's first step (1: no family)",
    )
    p.add_argument(
        "--pilot", nargs=2, type=Path, metavar=("RUN_A", "RUN_B"), help="two run folders"
    )
    p.add_argument("--paper", default=None, help="a paired row id of the paper audit")
    p.add_argument(
        "--audit",
        type=Path,
        default=DEFAULT_AUDIT,
        help=f"the audit's claims.json ({DEFAULT_AUDIT})",
    )
    p.add_argument(
        "--scoring",
        choices=("logged", "rescored", "rescored_plus"),
        default="logged",
        help="which verdicts of the paper's pair (default: logged, as published)",
    )
    p.add_argument(
        "--budget-from",
        type=Path,
        default=None,
        metavar="RUN_DIR",
        help="plan a per-task token budget from this run's log instead (see above)",
    )
    p.add_argument(
        "--verdict-trial",
        type=int,
        default=2,
        help="--budget-from: the trial whose verdict the budget pays for (2)",
    )
    p.add_argument("--round-to", type=float, default=500.0, help="--budget-from: round up to (500)")
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    return p


def budget_plan(args: argparse.Namespace) -> dict[str, Any]:
    from reflexion_bench.analysis.equal_budget import budget_rule
    from reflexion_bench.analysis.runs import load_run

    path = args.budget_from
    if not path.is_dir() or not (path / "log.jsonl").is_file():
        raise ValueError(f"--budget-from: {path} is not a run folder (no log.jsonl)")
    out = budget_rule(load_run(path).records, trial=args.verdict_trial, round_to=args.round_to)
    out["source"] = str(path)
    return out


def render_budget(p: dict[str, Any]) -> str:
    lines = [f"token budget per task from {p['source']} ({p['tasks']} tasks):"]
    for role, m in p["role_medians"].items():
        lines.append(f"  {role:<22} {m['calls']:>5} calls, median {m['median']:.0f} tokens")
    q1, q3 = p["quartiles"]
    lines.append(
        f"trial {p['trial']}'s verdict needs a median {p['median']:.0f} tokens "
        f"(quartiles {q1:.0f}-{q3:.0f}) on the {p['tasks_reaching_trial']} tasks that reached it"
    )
    lines.append(f"budget (rounded up to {p['round_to']:g}): {p['budget']:.0f} tokens per task")
    return "\n".join(lines)


def _fail(msg: str) -> int:
    print(f"reflexion-bench plan: {msg}", file=sys.stderr)
    return 2


def _from_paper(path: Path, pair_id: str, scoring: str) -> tuple[pw.Pilot, str]:
    if not path.is_file():
        raise ValueError(
            f"{path} not found: --paper reads the committed paper audit (run from the "
            "project folder, or pass --audit PATH to its claims.json)"
        )
    pairs = {p["id"]: p for p in json.loads(path.read_text(encoding="utf-8")).get("pairs", [])}
    if pair_id not in pairs:
        raise ValueError(f"no paired row {pair_id!r} in {path}; ids: {', '.join(sorted(pairs))}")
    row = pairs[pair_id].get(scoring)
    if not row or not row.get("n"):
        raise ValueError(f"paired row {pair_id!r} has no {scoring} verdicts in {path}")
    n = int(row["n"])
    src = f"the paper's {pair_id} ({pairs[pair_id]['a']} vs {pairs[pair_id]['b']}, {scoring})"
    return pw.Pilot(n, row["only_b"] / n, row["only_a"] / n, 1, None), src


def _from_runs(a: Path, b: Path) -> tuple[pw.Pilot, str]:
    from reflexion_bench.analysis.metrics import hidden_verdict
    from reflexion_bench.analysis.runs import load_run

    def finals(path: Path) -> dict[str, bool]:
        if not path.is_dir():
            raise ValueError(f"--pilot: {path} is not a run folder")
        run = load_run(path)
        last: dict[str, dict[str, Any]] = {}
        for r in run.records:
            tid = str(r["task_id"])
            if tid not in last or int(r["trial"]) >= int(last[tid]["trial"]):
                last[tid] = r
        out = {t: hidden_verdict(r) for t, r in last.items()}
        return {t: bool(v) for t, v in out.items() if v is not None}

    fa, fb = finals(a), finals(b)
    shared = sorted(set(fa) & set(fb))
    if not shared:
        raise ValueError(f"--pilot: {a} and {b} share no judged task")
    pilot = pw.pilot([[fa[t]] for t in shared], [[fb[t]] for t in shared])
    return pilot, f"the pilot {a} vs {b} ({len(shared)} shared tasks)"


def plan(args: argparse.Namespace) -> dict[str, Any]:
    """The plan as a dict (what ``--json`` prints); raises ValueError on bad input."""
    if args.pilot and args.paper:
        raise ValueError("give --pilot or --paper, not both")
    pilot: pw.Pilot | None = None
    source = "given"
    if args.pilot:
        pilot, source = _from_runs(*args.pilot)
    elif args.paper:
        pilot, source = _from_paper(args.audit, args.paper, args.scoring)
    psi = args.discordance if args.discordance is not None else (pilot and pilot.discordance)
    if not psi:
        raise ValueError(
            "the discordance is needed: --discordance P (p01 + p10, e.g. 0.2), or "
            "--pilot RUN_A RUN_B, or --paper ID"
            + (" (the pilot has no discordant task: nothing to plan from)" if pilot else "")
        )
    n = args.tasks if args.tasks is not None else (pilot.n if pilot else None)
    effect = args.effect
    if effect is None and pilot is not None and pilot.effect != 0:
        effect = pilot.effect
    if n is None and effect is None:
        raise ValueError("give --tasks N (detectable difference) or --effect D (tasks needed)")
    rho = args.seed_correlation
    rho_source = "given"
    if rho is None:
        if pilot is not None and pilot.rho is not None:
            rho, rho_source = pilot.rho, "from the pilot"
        else:
            rho, rho_source = 1.0, "assumed (seeds add nothing unless they differ)"
    if args.holm < 1:
        raise ValueError(
            f"--holm M: M is the number of tests in the family (>= 1), got {args.holm}"
        )
    # Holm's first step tests the smallest p-value at alpha / M: plan for that.
    level = args.alpha / args.holm
    common = {"alpha": level, "seeds": args.seeds, "rho": rho}
    # The exact test's figures where the exact test is the one run (one seed); with
    # several seeds the test is the sign-flip test on per-task means, planned by Connor's
    # approximation with the seeds' design effect.
    exact = args.seeds == 1
    out: dict[str, Any] = {
        "discordance": psi,
        "discordance_source": source,
        "alpha": args.alpha,
        "holm": args.holm,
        "alpha_test": level,
        "method": "exact McNemar test (enumeration)"
        if exact
        else "Connor's normal approximation x the seeds' design effect",
        "power_target": args.power,
        "seeds": args.seeds,
        "seed_correlation": rho,
        "seed_correlation_source": rho_source,
        "design_effect": pw.design_effect(args.seeds, rho),
        "pilot": pilot.to_dict() if pilot else None,
    }
    if n is not None:
        out["tasks"] = n
        connor = pw.detectable_difference(n, psi, power=args.power, **common)
        out["detectable_difference_connor"] = connor
        out["detectable_difference"] = (
            pw.exact_detectable_difference(n, psi, alpha=level, power=args.power)
            if exact
            # Connor's solver returns the discordance itself when nothing is detectable.
            else (None if connor >= psi else connor)
        )
    if effect is not None:
        out["effect"] = effect
        connor_n = pw.tasks_needed(psi, effect, power=args.power, **common)
        out["tasks_needed_connor"] = connor_n
        out["tasks_needed"] = (
            pw.exact_tasks_needed(psi, effect, alpha=level, power=args.power) if exact else connor_n
        )
        if n is not None:
            out["power_at_tasks_connor"] = pw.power(n, psi, effect, **common)
            d = abs(effect)
            out["power_at_tasks"] = (
                pw.exact_power(n, (psi - d) / 2, (psi + d) / 2, alpha=level)
                if exact
                else out["power_at_tasks_connor"]
            )
    return out


def render(p: dict[str, Any]) -> str:
    seeds = p["seeds"]
    exact = seeds == 1
    level = f"alpha {p['alpha']} two-sided"
    if p["holm"] > 1:
        level += f", Holm over {p['holm']} tests: first step at {p['alpha_test']:.4g}"
    lines = [
        f"paired comparison: {level}, power {p['power_target']}, "
        f"discordance {p['discordance']:.3f} ({p['discordance_source']})",
        f"figures of the {p['method']}"
        + ("; Connor's normal approximation in brackets" if exact else ""),
    ]
    if (
        seeds > 1
        or p["seed_correlation_source"] != "assumed (seeds add nothing unless they differ)"
    ):
        lines.append(
            f"seeds: {seeds}, seed correlation {p['seed_correlation']:.2f} "
            f"({p['seed_correlation_source']}): design effect {p['design_effect']:.2f}"
        )
    if "detectable_difference" in p:
        dd = p["detectable_difference"]
        connor = p["detectable_difference_connor"]
        approx = f" [Connor: {100 * connor:.1f}]" if exact and connor < p["discordance"] else ""
        if dd is None:
            lines.append(
                f"detectable difference at {p['tasks']} tasks: none: at discordance "
                f"{p['discordance']:.3f} even a {100 * p['discordance']:.1f}-point difference "
                "(every discordant task on one side) stays below the target power"
            )
        else:
            lines.append(
                f"detectable difference at {p['tasks']} tasks: {100 * dd:.1f} points{approx}"
            )
    if "tasks_needed" in p:
        need = p["tasks_needed"]
        approx = f" [Connor: {p['tasks_needed_connor']}]" if exact else ""
        count = (
            f"more than {pw.MAX_EXACT_TASKS:,} tasks needed"
            if need is None
            else f"{need} tasks needed"
        )
        lines.append(f"effect {100 * abs(p['effect']):.1f} points: {count}{approx}")
        if "power_at_tasks" in p:
            approx = f" [Connor: {p['power_at_tasks_connor']:.2f}]" if exact else ""
            lines.append(f"power at {p['tasks']} tasks: {p['power_at_tasks']:.2f}{approx}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.budget_from is not None:
        try:
            budget = budget_plan(args)
        except ValueError as exc:
            return _fail(str(exc))
        print(json.dumps(budget, indent=2) if args.json else render_budget(budget))
        return 0
    try:
        result = plan(args)
    except ValueError as exc:
        return _fail(str(exc))
    print(json.dumps(result, indent=2) if args.json else render(result))
    return 0

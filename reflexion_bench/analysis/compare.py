"""The paired comparison of two runs, whatever produced them: ``reflexion-bench compare A B``.

A and B are each one configuration: a run folder, or a folder of the seeds of one
configuration (runs whose config differs only in ``seed``, as an Inspect log with several
epochs is imported). Runs of ours, the paper's imported logs, Inspect and lm-eval
imports are all run folders, so they compare alike.

The statistics are the report's, on the same task verdicts (the submitted trial's hidden
verdict, :func:`~reflexion_bench.analysis.seeds.task_verdicts`), over the tasks both
sides finished with a known verdict:

- one seed each: exact McNemar (the viewer's compare page computes the same table from
  the same verdicts) and the interval of the difference the report's tables print
  (Newcombe's paired score interval);
- several seeds: per-task mean verdicts over seeds, the exact sign-flip test (McNemar's
  generalisation, :func:`~reflexion_bench.analysis.stats.sign_flip_exact`) and the
  bootstrap over tasks;
- both: the TOST equivalence verdict against ``±margin`` and the detectable difference
  (:func:`~reflexion_bench.analysis.power.assess`), and the tasks where they differ.

Unlike the report's ``paired`` table (pairs of strategies within one benchmark x model)
this pairs any two runs on their common task ids: two models, two harnesses. Degenerate
cases (no common task, no discordant task, one task) are reported as such, never as an
error: the exit code says only whether both runs could be read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from reflexion_bench.analysis.power import DEFAULT_MARGIN, assess
from reflexion_bench.analysis.runs import Group, SeedSet, find_run_dirs, group_runs, load_run
from reflexion_bench.analysis.seeds import task_verdicts
from reflexion_bench.analysis.stats import (
    mcnemar_exact,
    paired_difference_interval,
    sign_flip_exact,
)

#: The manifest an importer writes beside (or above) the run folders it made.
MANIFEST = "import.json"


class CompareError(ValueError):
    """A side cannot be read as one configuration; the message names the folder."""


@dataclass
class Side:
    """One side of the comparison: its configuration and where it came from."""

    label: str
    path: Path
    seeds: SeedSet

    @property
    def members(self) -> list[Group]:
        return self.seeds.members


def _source(path: Path, run_dirs: list[Path]) -> str:
    """``ours``, or the importer's kind (inspect, lm-eval, programming...) from import.json."""
    import json

    for folder in [path, *run_dirs]:
        manifest = folder / MANIFEST
        if manifest.is_file():
            try:
                data = json.loads(manifest.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return "imported (unreadable import.json)"
            if isinstance(data, dict):
                if data.get("source_format"):
                    return str(data["source_format"])
                # The paper's logs (import-reflexion-logs): the repository and the kind.
                return (
                    " ".join(str(data[k]) for k in ("source", "kind") if data.get(k)) or "imported"
                )
    return "ours"


def load_side(path: Path, label: str) -> Side:
    """The one configuration under ``path`` (its seeds together)."""
    from reflexion_bench.analysis.runs import seed_sets

    try:
        run_dirs = find_run_dirs([path])
    except FileNotFoundError as exc:
        raise CompareError(f"{label}: {exc}") from None
    runs = [load_run(d) for d in run_dirs]
    groups = group_runs(runs)
    if not groups:
        raise CompareError(f"{label}: {path} has no finished task (nothing to compare)")
    sets = seed_sets(groups)
    if len(sets) != 1:
        names = ", ".join(f"{s.benchmark}/{s.name}/{s.model}" for s in sets[:4])
        raise CompareError(
            f"{label}: {path} holds {len(sets)} configurations ({names}"
            f"{', ...' if len(sets) > 4 else ''}); give one run folder, or the folder of "
            "one configuration's seeds"
        )
    return Side(label=label, path=path, seeds=sets[0])


def _per_seed(side: Side) -> list[dict[str, tuple[bool | None, bool | None, str | None]]]:
    return [task_verdicts(g) for g in side.members]


def _side_info(side: Side, source: str) -> dict[str, Any]:
    members = side.members
    summaries = [g.summary for g in members]

    def mean(key: str) -> float | None:
        vals = [float(v) for s in summaries if (v := s.get(key)) is not None]
        return float(np.mean(vals)) if vals else None

    keys = [(s.get("answer_key") or {}).get("label") for s in summaries if s.get("answer_key")]
    uses = sum(int((s.get("answer_key") or {}).get("uses") or 0) for s in summaries)
    return {
        "path": str(side.path),
        "source": source,
        "benchmark": side.seeds.benchmark,
        "strategy": side.seeds.strategy,
        "model": side.seeds.model,
        "n_seeds": side.seeds.n_seeds,
        "seeds": side.seeds.seeds,
        "n_tasks": len({t for g in members for t in (str(r["task_id"]) for r in g.records)}),
        "first_try": mean("first_try"),
        "final": mean("final"),
        "fixes": sum(int(s.get("fixes") or 0) for s in summaries),
        "breaks": sum(int(s.get("breaks") or 0) for s in summaries),
        "answer_key": keys[0] if len(set(keys)) == 1 else ("mixed" if keys else None),
        "answer_key_uses": uses,
        # A sharded experiment with a shard missing or unfinished is not a complete run.
        "incomplete": [
            p
            for g in members
            for r in g.runs
            for p in (r.summary.get("shards") or {}).get("problems", [])
        ],
    }


def compare_sides(
    a: Side,
    b: Side,
    *,
    margin: float = DEFAULT_MARGIN,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> dict[str, Any]:
    """The paired comparison of two configurations (see the module docstring)."""
    pa, pb = _per_seed(a), _per_seed(b)
    finals_a = [{t: v[1] for t, v in p.items()} for p in pa]
    finals_b = [{t: v[1] for t, v in p.items()} for p in pb]
    order = list(dict.fromkeys(t for p in finals_a for t in p))
    in_b = {t for p in finals_b for t in p}
    known_a = {t for t in order if all(p.get(t) is not None for p in finals_a)}
    known_b = {t for t in in_b if all(p.get(t) is not None for p in finals_b)}
    common = [t for t in order if t in known_a and t in known_b]
    out: dict[str, Any] = {
        "a": _side_info(a, _source(a.path, [r.path for g in a.members for r in g.runs])),
        "b": _side_info(b, _source(b.path, [r.path for g in b.members for r in g.runs])),
        "n_common": len(common),
        "only_in_a": [t for t in order if t not in in_b],
        "only_in_b": sorted(t for t in in_b if t not in set(order)),
        "unknown": [t for t in order if t in in_b and t not in common],
        "test": None,
        "mcnemar": None,
        "diff": None,
        "assessment": None,
        "differ": [],
        "notes": [],
        "settings": {"margin": margin, "n_resamples": n_resamples, "seed": seed, "level": 0.95},
    }
    ka, kb = out["a"]["answer_key"], out["b"]["answer_key"]
    if ka != kb:
        out["notes"].append(
            f"the answer key differs: A is {ka}, B is {kb}; a loop told whether it was right "
            "is an upper bound, not comparable with one that judged itself"
        )
    if not common:
        out["notes"].append(
            f"the {len(out['unknown'])} tasks both have lack a known verdict on one side "
            "(an import without re-scoring?): nothing to pair"
            if out["unknown"]
            else "no task in common: nothing to pair (do the two runs use the same task ids?)"
        )
        return out
    xa = np.array([[float(bool(p[t])) for p in finals_a] for t in common])
    xb = np.array([[float(bool(p[t])) for p in finals_b] for t in common])
    ma, mb = xa.mean(axis=1), xb.mean(axis=1)
    out["final_a"] = float(ma.mean())
    out["final_b"] = float(mb.mean())
    # The report's interval: Newcombe's for 0/1 verdicts (one seed each), the paired
    # bootstrap over tasks for per-task means over seeds.
    out["diff"] = paired_difference_interval(ma, mb, n_resamples=n_resamples, seed=seed).to_dict()
    if xa.shape[1] == xb.shape[1] == 1:
        mc = mcnemar_exact([bool(v) for v in xa[:, 0]], [bool(v) for v in xb[:, 0]])
        out["mcnemar"] = mc.to_dict()
        out["test"] = {
            "name": "mcnemar_exact",
            "p_value": mc.p_value,
            "favour_a": mc.only_a,
            "favour_b": mc.only_b,
        }
        discordant = mc.only_a + mc.only_b
    else:
        sf = sign_flip_exact(xa, xb)
        out["test"] = {
            "name": "sign_flip_exact",
            "p_value": sf.p_value,
            "favour_a": int((ma > mb).sum()),
            "favour_b": int((ma < mb).sum()),
            "seeds": sf.seeds,
        }
        discordant = sf.nonzero
    # assess pairs seeds by position for the discordance: with unequal seed counts, on the
    # seeds both sides have (TOST always runs on the per-task means).
    k = min(xa.shape[1], xb.shape[1])
    if xa.shape[1] != xb.shape[1]:
        out["notes"].append(
            f"A has {xa.shape[1]} seeds and B {xb.shape[1]}: the discordance and detectable "
            f"difference use the first {k} of each, the test and interval all of them"
        )
    assessment = assess(xa[:, :k], xb[:, :k], p_value=out["test"]["p_value"], margin=margin)
    if xa.shape[1] != xb.shape[1]:
        from reflexion_bench.analysis.stats import comparison_verdict, tost_paired

        if len(common) >= 2:
            eq = tost_paired(ma, mb, margin)
            assessment["equivalence"] = eq.to_dict()
            assessment["verdict"] = comparison_verdict(eq, out["test"]["p_value"] < 0.05)
    out["assessment"] = assessment
    if discordant == 0:
        out["notes"].append(
            "no discordant task: the two agree on every common task, so the difference "
            "test has nothing to test (p = 1); the equivalence verdict says what that shows"
        )
    if len(common) < 2:
        out["notes"].append("one common task: no equivalence test (it needs two)")
    first_a = {t: v[0] for t, v in pa[0].items()}
    first_b = {t: v[0] for t, v in pb[0].items()}
    for i, t in enumerate(common):
        if ma[i] != mb[i]:
            row: dict[str, Any] = {"id": t, "a": float(ma[i]), "b": float(mb[i])}
            if xa.shape[1] == xb.shape[1] == 1:
                row.update(
                    a=bool(xa[i, 0]), b=bool(xb[i, 0]), a_first=first_a[t], b_first=first_b[t]
                )
            out["differ"].append(row)
    return out


def compare_paths(
    a: Path,
    b: Path,
    *,
    margin: float = DEFAULT_MARGIN,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> dict[str, Any]:
    """:func:`compare_sides` of the configurations under two paths."""
    return compare_sides(
        load_side(a, "A"), load_side(b, "B"), margin=margin, n_resamples=n_resamples, seed=seed
    )


# --------------------------------------------------------------------------- rendering


def _pct(v: Any) -> str:
    return "n/a" if v is None else f"{100 * float(v):.1f}"


def _interval(d: dict[str, Any] | None) -> str:
    if not d:
        return "n/a"
    return f"{100 * d['estimate']:+.1f} [{100 * d['low']:+.1f}, {100 * d['high']:+.1f}]"


def _sides_rows(result: dict[str, Any]) -> list[list[str]]:
    rows = []
    for key in ("a", "b"):
        s = result[key]
        rows.append(
            [
                key.upper(),
                str(s["path"]),
                str(s["source"]),
                str(s["model"]),
                str(s["strategy"]),
                str(s["n_seeds"]),
                str(s["n_tasks"]),
                _pct(s["first_try"]),
                _pct(s["final"]),
                f"{s['fixes']}/{s['breaks']}",
                str(s["answer_key"])
                + (f" ({s['answer_key_uses']} uses)" if s["answer_key_uses"] else "")
                + (f"; INCOMPLETE: {'; '.join(s['incomplete'])}" if s.get("incomplete") else ""),
            ]
        )
    return rows


#: The sides' numbers are the run's own (the study's headline); the paired ones are on
#: the common tasks only: two quantities, two names (docs/reports.md, "Metrics").
METRICS_NOTE = (
    "Metrics: final (pass@1) is each run's own, over all its tasks (an errored task "
    "failed; the mean over seeds with several), as `report` prints it; final on common "
    "tasks is over the tasks paired here, so it differs when the two runs' tasks do; "
    "fixes/breaks are between trials. Definitions: docs/reports.md#metrics"
)

SIDE_HEADERS = [
    "run",
    "path",
    "from",
    "model",
    "strategy",
    "seeds",
    "tasks",
    "first try %",
    "final (pass@1) %",
    "fixes/breaks",
    "answer key",
]


def _result_rows(result: dict[str, Any]) -> list[list[str]]:
    test = result.get("test") or {}
    mc = result.get("mcnemar")
    ass = result.get("assessment") or {}
    eq = ass.get("equivalence")
    detect = ass.get("detectable_difference")
    rows = [
        ["common tasks", str(result["n_common"])],
        [
            "final on common tasks A / B %",
            f"{_pct(result.get('final_a'))} / {_pct(result.get('final_b'))}",
        ],
        ["difference A - B, points [95% CI]", _interval(result.get("diff"))],
    ]
    if mc:
        rows.append(
            [
                "McNemar table (both / only A / only B / neither)",
                f"{mc['both']} / {mc['only_a']} / {mc['only_b']} / {mc['neither']}",
            ]
        )
    if test:
        rows.append(
            [
                f"{'exact McNemar' if test['name'] == 'mcnemar_exact' else 'exact sign-flip'} p",
                f"{test['p_value']:.4g} (favour A {test['favour_a']}, favour B {test['favour_b']})",
            ]
        )
    if ass:
        rows.append(["verdict", str(ass.get("verdict"))])
        rows.append(
            [
                f"equivalence (TOST, ±{100 * float(ass.get('margin') or 0):g} points) p",
                "n/a" if not eq else f"{eq['p_value']:.4g}",
            ]
        )
        rows.append(
            [
                "detectable difference (80% power), points",
                f"{100 * detect:.1f}"
                if detect is not None
                else f"n/a ({ass.get('detectable_reason')})",
            ]
        )
    return rows


def _differ_rows(result: dict[str, Any]) -> list[list[str]]:
    def show(v: Any) -> str:
        if isinstance(v, bool):
            return "pass" if v else "fail"
        return "n/a" if v is None else f"{float(v):.2f}"

    rows = []
    for d in result["differ"]:
        row = [str(d["id"]), show(d["a"]), show(d["b"])]
        if "a_first" in d:
            row += [show(d["a_first"]), show(d["b_first"])]
        rows.append(row)
    return rows


def _md_table(headers: list[str], rows: list[list[str]]) -> str:
    if not rows:
        return "(none)"
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _differ_headers(result: dict[str, Any]) -> list[str]:
    one = result["differ"] and "a_first" in result["differ"][0]
    return (
        ["task", "A", "B", "A first try", "B first try"]
        if one
        else ["task", "A (mean over seeds)", "B (mean over seeds)"]
    )


def render(result: dict[str, Any], fmt: str = "md") -> str:
    """The comparison as ``md``, ``json`` or ``latex``."""
    import json

    from reflexion_bench.core.types import clean_json

    if fmt == "json":
        return json.dumps(clean_json(result), indent=2, default=str) + "\n"
    sides = _sides_rows(result)
    stats = _result_rows(result)
    differ = _differ_rows(result)
    if fmt == "md":
        parts = [
            "### Runs\n\n" + _md_table(SIDE_HEADERS, sides),
            "### Paired comparison\n\n" + _md_table(["", "value"], stats),
            f"### Tasks where they differ ({len(differ)})\n\n"
            + _md_table(_differ_headers(result), differ),
        ]
        if result["only_in_a"] or result["only_in_b"] or result["unknown"]:
            parts.append(
                f"Not paired: {len(result['only_in_a'])} tasks only in A, "
                f"{len(result['only_in_b'])} only in B, {len(result['unknown'])} without a "
                "known verdict on one side."
            )
        parts += [f"Note: {n}" for n in result["notes"]]
        parts.append(METRICS_NOTE)
        return "\n\n".join(parts) + "\n"
    if fmt == "latex":
        import pandas as pd

        from reflexion_bench.analysis.tables import to_latex

        parts = [
            to_latex(pd.DataFrame(sides, columns=SIDE_HEADERS), "Runs compared"),
            to_latex(pd.DataFrame(stats, columns=["", "value"]), "Paired comparison"),
            to_latex(
                pd.DataFrame(differ, columns=_differ_headers(result)),
                "Tasks where they differ",
            ),
        ]
        parts += [f"% Note: {n}" for n in result["notes"]]
        parts.append(f"% {METRICS_NOTE}")
        return "\n\n".join(parts) + "\n"
    raise ValueError(f"unknown format {fmt!r} (allowed: md, json, latex)")

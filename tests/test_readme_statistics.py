"""The docs' worked statistics example is recomputed from the committed paper audit.

Every number of *Worked example: HumanEval-py, Reflexion vs simple* (on the documentation
site's statistics page, ``docs/statistics.md``, since the README moved into the site) is
derived here from ``results/paper-audit/claims.json`` with the project's own functions,
and must appear on the page as printed; a change to the audit or to an estimator fails
this test rather than leaving the page stale.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from reflexion_bench.analysis import power as pw
from reflexion_bench.analysis.stats import tost_paired, wilson_interval

ROOT = Path(__file__).resolve().parents[1]


def _section() -> str:
    text = (ROOT / "docs" / "statistics.md").read_text(encoding="utf-8")
    start = text.index("**Worked example: HumanEval-py")
    return " ".join(text[start : text.index("tests/test_readme_statistics.py", start)].split())


def test_worked_example_matches_the_audit() -> None:
    pairs = json.loads((ROOT / "results/paper-audit/claims.json").read_text(encoding="utf-8"))
    row = {p["id"]: p for p in pairs["pairs"]}["humaneval-py"]["logged"]
    n, a, b = row["n"], row["only_a"], row["only_b"]
    both = row["a_count"] - a
    x = np.array([1] * a + [0] * b + [1] * both + [0] * (n - both - a - b), dtype=float)
    y = np.array([0] * a + [1] * b + [1] * both + [0] * (n - both - a - b), dtype=float)
    assert x.sum() == row["a_count"] and y.sum() == row["b_count"]
    text = _section()

    def pct(v: float) -> str:
        return f"{100 * v:.1f}"

    wa, wb = wilson_interval(row["a_count"], n), wilson_interval(row["b_count"], n)
    eq5 = tost_paired(x, y, 0.05)
    eq10 = tost_paired(x, y, 0.10)
    psi, effect = (a + b) / n, (a - b) / n
    expected = [
        f"n = {n}",
        f"Reflexion solves {row['a_count']} and simple {row['b_count']}",
        f"{a} tasks only Reflexion solves, {b} only simple",
        f"Reflexion {pct(wa.estimate)}% [{pct(wa.low)}, {pct(wa.high)}]",
        f"simple {pct(wb.estimate)}% [{pct(wb.low)}, {pct(wb.high)}]",
        f"+{pct(row['diff']['estimate'])} points, bootstrap 95% CI "
        f"[+{pct(row['diff']['low'])}, +{pct(row['diff']['high'])}]",
        f"p = {row['p_value']:.3g}",
        f"p = {row['p_holm']:.3g}",
        f"[+{pct(eq5.low)}, +{pct(eq5.high)}]",
        f"{a + b}/{n} = {psi:.3f}",
        f"{n} tasks detect {pct(pw.detectable_difference(n, psi))} points",
        f"needs {pw.tasks_needed(psi, effect)} tasks",
    ]
    missing = [e for e in expected if e not in text]
    assert not missing, f"docs/statistics.md's worked example disagrees with the audit: {missing}"
    # The verdicts the example states.
    assert row["p_holm"] >= 0.05 and not eq5.equivalent and eq10.equivalent
    assert "**inconclusive**" in text
    assert re.search(r"10 of 11 discordant", text) and (a, b) == (10, 1)

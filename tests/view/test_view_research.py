"""The viewer's navigation for research (issue 33) in a real browser: compare only with
runs of the same benchmark, trial curves drawn as steps, an overlay of chosen runs'
curves (12 runs, 12 distinguishable series), a trial strip for many trials with two
chosen trials side by side, diffs that ignore whitespace on request, and unknown
imported values shown as n/a.

Same driver and helpers as ``test_view_browser.py`` / ``test_view_task_page.py``
(Debian's headless Chromium over the DevTools protocol). The runs are toy runs made
here with scripted replies (``tests/strategies/toyrun.py``); every expected value is
read from the run folders' files (log.jsonl, summary.json), not from the viewer's code."""

from __future__ import annotations

import asyncio
import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.strategies.base import Strategy
from reflexion_bench.testing.chromium import Browser
from reflexion_bench.view.data import Catalog
from reflexion_bench.view.server import ViewServer
from tests.strategies.toyrun import run_toy
from tests.view.test_view_browser import _shot, artifacts  # noqa: F401 (fixture)
from tests.view.test_view_task_page import _open

pytestmark = pytest.mark.requires("chromium")

N_OVERLAY = 12
N_OTHER = 3
# Trial 2 differs from trial 1 only in indentation and trailing spaces; trial 3 is right.
WS_1 = "def f(x):\n    y = x + 1\n    return y"
WS_2 = "def f(x):\n  y = x  +  1   \n\n  return y"
PAPER_LOG = (
    "reflexion-original-repo/programming_runs/root/simple_human_eval_py_logging/"
    "humaneval-py..gz_simple_1_gpt-4_pass_at_k_1_py.jsonl"
)


def _records(run: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run / "log.jsonl").read_text().splitlines() if x.strip()]


def _trials(run: Path, task_id: str) -> list[dict[str, Any]]:
    out = [r for r in _records(run) if r.get("type") == "trial" and r["task_id"] == task_id]
    return sorted(out, key=lambda r: int(r["trial"]))


def _summary(run: Path) -> dict[str, Any]:
    return json.loads((run / "summary.json").read_text())


def _benchmark(run: Path) -> str:
    (bench,) = {r["benchmark"] for r in _records(run) if r.get("type") == "trial"}
    return str(bench)


def _curve(run: Path) -> list[float]:
    """success@trial from the log: each task's hidden verdict at trial min(k, its last)."""
    tasks: dict[str, list[dict[str, Any]]] = {}
    for r in _records(run):
        if r.get("type") == "trial":
            tasks.setdefault(r["task_id"], []).append(r)
    for v in tasks.values():
        v.sort(key=lambda r: int(r["trial"]))
    k = max(len(v) for v in tasks.values())
    return [
        sum(bool((v[min(t, len(v)) - 1].get("hidden") or {}).get("passed")) for v in tasks.values())
        / len(tasks)
        for t in range(1, k + 1)
    ]


@pytest.fixture(scope="module")
def toy_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("research-runs")

    async def make() -> dict[str, Any]:
        same = []
        for k in range(N_OVERLAY):
            # Different trial counts, so the curves differ run to run.
            run = root / f"toy{k:02d}"
            await run_toy(run, Strategy(name="reflexion", max_trials=1 + k % 4))
            same.append(run)
        other = []
        for k in range(N_OTHER):
            run = root / f"other{k}"
            await run_toy(run, Strategy(name="reflexion", max_trials=2), benchmark="toy_other")
            other.append(run)
        long = root / "long"
        await run_toy(
            long,
            Strategy(name="reflexion", max_trials=10),
            words=["beta"],
            scripts={"beta": [f"wrong{n}" for n in range(1, 11)]},
        )
        ws = root / "ws"
        await run_toy(
            # No reflector (the toy reflector reads one-word candidates only).
            ws, Strategy(name="retry", max_trials=3, memory_content="none"), words=["alpha"],
            scripts={"alpha": [WS_1, WS_2, "alpha"]},
        )  # fmt: skip
        return {"same": same, "other": other, "long": long, "ws": ws}

    return asyncio.run(make())


def _axis_aligned(points: str) -> list[tuple[float, float]]:
    xy = [tuple(float(v) for v in p.split(",")) for p in points.split()]
    for (x1, y1), (x2, y2) in pairwise(xy):
        assert x1 == x2 or y1 == y2, f"a sloped segment {(x1, y1)} -> {(x2, y2)}"
    return xy  # type: ignore[return-value]


def test_compare_with_offers_only_runs_of_the_same_benchmark(
    toy_runs: dict[str, Any],
    artifacts: Path,  # noqa: F811
) -> None:
    runs = toy_runs["same"] + toy_runs["other"]
    here = runs[0]
    bench = _benchmark(here)
    offered = [r.name for r in runs[1:] if _benchmark(r) == bench]
    not_offered = [r for r in runs[1:] if _benchmark(r) != bench]
    assert len(offered) == N_OVERLAY - 1 and len(not_offered) == N_OTHER
    with ViewServer(Catalog(runs, n_resamples=50)) as server, Browser() as b:
        _open(b, server.url + f"#/run/{here.name}", ready="run")
        b.wait_for("document.querySelector('#rb-others').textContent.length > 0")
        assert b.texts("#rb-compare-with a") == offered
        note = " ".join(b.text("#rb-compare-skipped").split())
        assert note == (
            f"{N_OTHER} runs of other benchmarks are not offered: "
            "a paired comparison needs the same tasks."
        )
        # A run of the other benchmark is offered only its own kind.
        _open(b, server.url + f"#/run/{not_offered[0].name}", ready="run")
        b.wait_for("document.querySelector('#rb-others').textContent.length > 0")
        assert b.texts("#rb-compare-with a") == [r.name for r in not_offered[1:]]
        assert b.text("#rb-compare-skipped").strip().startswith(f"{N_OVERLAY} runs of other")
        _shot(b, artifacts, "research_compare_with")


def test_run_curve_is_drawn_as_steps(toy_runs: dict[str, Any]) -> None:
    run = toy_runs["ws"]
    curve = _curve(run)
    assert len(curve) == 3 and curve[0] == 0 and curve[-1] == 1  # fixed at trial 3
    with ViewServer(Catalog([run], n_resamples=50)) as server, Browser() as b:
        _open(b, server.url + "#/run/ws", ready="run")
        b.wait_for("document.body.dataset.rbIntervals === '1'")
        pts = b.evaluate("document.querySelector('#rb-curve polyline.sub').getAttribute('points')")
        xy = _axis_aligned(pts)
        # One point per trial plus one corner between each two: 2k - 1.
        assert len(xy) == 2 * len(curve) - 1
        # The value holds flat to the next trial and rises there (a vertical segment).
        circles = b.evaluate(
            "[...document.querySelectorAll('#rb-curve circle.sub')]"
            ".map(c => [Number(c.getAttribute('cx')), Number(c.getAttribute('cy'))])"
        )
        assert len(circles) == len(curve)
        (_, y2), (x3, y3) = circles[1], circles[2]
        assert [x3, y2] in [list(p) for p in xy] and y3 < y2  # corner at trial 3, then up
        for sel in ("#rb-curve polyline.solved", "#rb-curve polygon.band"):
            got = b.evaluate(f"(document.querySelector('{sel}') || {{}}).getAttribute && "
                             f"document.querySelector('{sel}').getAttribute('points')")  # fmt: skip
            if got:
                _axis_aligned(got)


def test_overlay_of_12_runs_has_12_distinguishable_series(
    toy_runs: dict[str, Any],
    artifacts: Path,  # noqa: F811
) -> None:
    from reflexion_bench.analysis.plots import MARKERS, PALETTE

    runs = toy_runs["same"]
    assert len(runs) == N_OVERLAY
    with ViewServer(Catalog(runs, n_resamples=50)) as server, Browser(width=1400) as b:
        _open(b, server.url, ready="sweep")
        assert len(b.texts("#rb-overlay-runs input[type=checkbox]")) == N_OVERLAY
        series = b.evaluate(
            "[...document.querySelectorAll('#rb-overlay g.series')].map(g => ({"
            " run: g.dataset.run,"
            " line: g.querySelector('polyline').getAttribute('stroke'),"
            " points: g.querySelector('polyline').getAttribute('points'),"
            " markers: [...g.querySelectorAll('.marker')].map(m => [m.dataset.marker, m.getAttribute('fill'), m.tagName])}))"
        )
        assert len(series) == N_OVERLAY
        pairs = set()
        for s, run in zip(series, runs, strict=True):
            # One marker per trial of the run's curve (read from its summary.json).
            assert len(s["markers"]) == len(_curve(run))
            kinds = {(m[0], m[1]) for m in s["markers"]}
            assert len(kinds) == 1, kinds
            marker, colour = next(iter(kinds))
            assert colour == s["line"]
            pairs.add((colour.lower(), marker))
            _axis_aligned(s["points"])
        assert len(pairs) == N_OVERLAY  # every colour+marker pair distinct
        assert {c for c, _ in pairs} == {c.lower() for c in PALETTE[:N_OVERLAY]}
        assert {m for _, m in pairs} == set(MARKERS[:N_OVERLAY])
        # The legend lies outside the plotting area (to its right), one entry per run.
        geo = b.evaluate(
            "(() => { const svg = document.getElementById('rb-overlay');"
            " const s = [...svg.querySelectorAll('g.series')].map(g => g.getBoundingClientRect());"
            " const l = svg.querySelector('g.legend').getBoundingClientRect();"
            " return {right: Math.max(...s.map(r => r.right)), legend: l.left,"
            " items: svg.querySelectorAll('g.legend-item').length,"
            " names: [...svg.querySelectorAll('g.legend-item text')].map(t => t.textContent)}; })()"
        )
        assert geo["legend"] > geo["right"] and geo["items"] == N_OVERLAY
        assert geo["names"] == [r.name for r in runs]
        _shot(b, artifacts, "research_overlay_12")
        # Unchoosing a run removes its series.
        b.click(f'#rb-overlay-runs input[data-run="{N_OVERLAY - 1}"]')
        assert (
            b.evaluate("document.querySelectorAll('#rb-overlay g.series').length") == N_OVERLAY - 1
        )


def _first_task(run: Path) -> tuple[list[dict[str, Any]], str]:
    """The trials of the run's first logged task and its page's URL fragment."""
    from urllib.parse import quote

    task_id = _records(run)[0]["task_id"]
    return _trials(run, task_id), f"#/run/{run.name}/task/{quote(task_id, safe='')}"


def test_trial_strip_shows_two_chosen_trials_side_by_side(
    toy_runs: dict[str, Any],
    artifacts: Path,  # noqa: F811
) -> None:
    run = toy_runs["long"]
    trials, url = _first_task(run)
    assert len(trials) >= 8
    expected = [
        ("✓" if (t.get("hidden") or {}).get("passed") else "✗") + str(t["trial"]) for t in trials
    ]
    with ViewServer(Catalog([run], n_resamples=50)) as server, Browser(width=1280) as b:
        _open(b, server.url + url, ready="task")
        cells = [x.replace(" ", "") for x in b.texts("#rb-strip button.cell")]
        assert cells == expected
        visible = "[...document.querySelectorAll('.trial')].filter(e => e.offsetParent !== null).map(e => e.dataset.trial)"
        fits = (
            "document.documentElement.scrollWidth <= document.documentElement.clientWidth && "
            "document.querySelector('.trials').scrollWidth <= document.querySelector('.trials').clientWidth"
        )
        # Many trials: the last two side by side at first, no horizontal scrolling.
        last = [str(t["trial"]) for t in trials[-2:]]
        assert b.evaluate(visible) == last and b.evaluate(fits)
        b.click("#rb-show-all")
        assert len(b.evaluate(visible)) == len(trials)
        b.click('#rb-strip button[data-trial="3"]')
        assert len(b.evaluate(visible)) == len(trials)  # one chosen: still all
        b.click('#rb-strip button[data-trial="7"]')
        assert b.evaluate(visible) == ["3", "7"]
        assert b.evaluate(fits)
        assert "showing trials 3 and 7 side by side" in b.text("#rb-strip-note")
        headings = b.evaluate(
            "[...document.querySelectorAll('.trial')].filter(e => e.offsetParent !== null)"
            ".map(e => e.querySelector('h2').textContent)"
        )
        assert [h.split()[:2] for h in headings] == [["Trial", "3"], ["Trial", "7"]]
        _shot(b, artifacts, "research_trial_strip")
        b.click("#rb-show-all")
        assert len(b.evaluate(visible)) == len(trials)


FITS = (
    "document.documentElement.scrollWidth <= document.documentElement.clientWidth && "
    "document.querySelector('.trials').scrollWidth <= document.querySelector('.trials').clientWidth"
)
VISIBLE = (
    "[...document.querySelectorAll('.trial')].filter(e => e.offsetParent !== null)"
    ".map(e => e.dataset.trial)"
)


@pytest.mark.parametrize("width", [1280, 1024])
def test_every_trial_fits_the_page_without_sideways_scrolling(
    toy_runs: dict[str, Any],
    artifacts: Path,  # noqa: F811
    width: int,
) -> None:
    """Three trials in columns of 560px scrolled sideways at a laptop's width (issue
    49): three (shown all at once) and ten (all shown on request) fit the page."""
    few, few_url = _first_task(toy_runs["ws"])
    many, many_url = _first_task(toy_runs["long"])
    assert len(few) == 3 and len(many) == 10
    with (
        ViewServer(Catalog([toy_runs["ws"], toy_runs["long"]], n_resamples=50)) as server,
        Browser(width=width) as b,
    ):
        _open(b, server.url + few_url, ready="task")
        assert b.evaluate(VISIBLE) == [str(t["trial"]) for t in few]  # all, by default
        assert b.evaluate(FITS)
        _shot(b, artifacts, f"trials_3_at_{width}")
        _open(b, server.url + many_url, ready="task")
        b.click("#rb-show-all")
        assert b.evaluate(VISIBLE) == [str(t["trial"]) for t in many]
        assert b.evaluate(FITS)
        # Side by side still: the first row holds more than one trial.
        tops = b.evaluate(
            "[...document.querySelectorAll('.trial')].map(e => e.getBoundingClientRect().top)"
        )
        assert sum(1 for t in tops if t == tops[0]) >= 2
        _shot(b, artifacts, f"trials_10_at_{width}")


def test_diffs_ignore_whitespace_on_request(
    toy_runs: dict[str, Any],
    artifacts: Path,  # noqa: F811
) -> None:
    run = toy_runs["ws"]
    trials, url = _first_task(run)
    cands = [t["candidate"] for t in trials]
    assert len(cands) == 3 and cands[0] != cands[1]
    assert [" ".join(x.split()) for x in cands[0].splitlines()] == [
        " ".join(x.split()) for x in cands[1].splitlines() if x.strip()
    ]  # trial 2 differs from trial 1 only in whitespace
    with ViewServer(Catalog([run], n_resamples=50)) as server, Browser() as b:
        _open(b, server.url + url, ready="task")
        changed = 'document.querySelectorAll(\'.trial[data-trial="%s"] .diff .add, .trial[data-trial="%s"] .diff .del\').length'
        assert b.evaluate(changed % (2, 2)) > 0  # whitespace counts by default
        assert b.evaluate(changed % (3, 3)) > 0
        b.click("#rb-ignore-ws")
        assert b.evaluate("document.getElementById('rb-ignore-ws').checked") is True
        assert b.evaluate(changed % (2, 2)) == 0
        assert b.text('.trial[data-trial="2"] .no-change') == "no change but whitespace"
        assert "whitespace ignored" in b.text('.trial[data-trial="2"] .diff-section h3')
        assert b.evaluate(changed % (3, 3)) > 0  # a real change still shows
        added = " ".join(b.texts('.trial[data-trial="3"] .diff .add'))
        assert cands[2] in added
        _shot(b, artifacts, "research_whitespace")
        b.click("#rb-ignore-ws")
        assert b.evaluate(changed % (2, 2)) > 0


def test_imported_unknown_self_tests_are_na_not_zeros(
    shared_data: Path,
    tmp_path: Path,
    artifacts: Path,  # noqa: F811
) -> None:
    """The paper's simple HumanEval log has no self-tests: TP/FP/FN/TN are unknown."""
    from reflexion_bench.cli import main as cli_main

    src = tmp_path / "paper_head.jsonl"
    src.write_text("".join((shared_data / PAPER_LOG).read_text().splitlines(True)[:4]))
    run = tmp_path / "paper_simple"
    assert (
        cli_main(["import-reflexion-logs", "--kind", "programming", str(src), "--out", str(run)])
        == 0
    )
    recs = [r for r in _records(run) if r.get("type") == "trial"]
    assert recs and all(r.get("self_test") is None for r in recs)
    zeros = _summary(run)["self_test_confusion"]
    assert (zeros["tp"], zeros["fp"], zeros["fn"], zeros["tn"]) == (0, 0, 0, 0)  # not known
    with ViewServer(Catalog([run], n_resamples=50)) as server, Browser() as b:
        _open(b, server.url + "#/run/paper_simple", ready="run")
        row = b.evaluate(
            "[...document.querySelectorAll('#rb-summary tr')].map(r => r.textContent)"
            ".find(t => t.startsWith('self-test TP'))"
        )
        assert "n/a / n/a / n/a / n/a" in row and "0 / 0" not in row
        _shot(b, artifacts, "research_imported_na")

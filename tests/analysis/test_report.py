"""The multi-run report: grouping, tables, paired tests, formats, figures, CLI."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from pathlib import Path

import pytest

from reflexion_bench.analysis.metrics import summarize
from reflexion_bench.analysis.report import build_comparison
from reflexion_bench.analysis.runs import find_run_dirs, load_groups
from reflexion_bench.analysis.stats import mcnemar_exact
from reflexion_bench.analysis.tables import render, tables
from reflexion_bench.commands import report as report_cmd
from reflexion_bench.strategies import (
    FrozenFirstAttemptActor,
    FrozenFirstFeedbackEvaluator,
    IrrelevantTextStrategy,
    Strategy,
    WrongReflectionStrategy,
)
from tests.strategies.toyrun import run_toy
from tests.toy import ToyActor, ToyEvaluator

WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta"]
# reflexion fixes alpha at trial 2 and delta at trial 3; beta, eps never; gamma, zeta at once.
SCRIPTS = {
    "alpha": ["wrongA", "alpha"],
    "beta": ["wrongB"],
    "gamma": ["gamma"],
    "delta": ["wrongD", "wrongD2", "delta"],
    "eps": ["wrongE"],
    "zeta": ["zeta"],
}


def make_sweep(root: Path) -> Path:
    """A sweep folder: a reflexion source run and frozen controls, plus a simple run."""

    async def go() -> None:
        src = root / "sweep" / "strategy=reflexion"
        await run_toy(src, Strategy(name="reflexion"), words=WORDS, scripts=SCRIPTS)
        controls = {
            "retry": Strategy(name="retry", memory_content="none"),
            "wrong_reflection": WrongReflectionStrategy(source_run=str(src)),
            "irrelevant_text": IrrelevantTextStrategy(),
        }
        # Under the controls only alpha is fixed (its script answers right at trial 2
        # whatever it is shown); nothing else changes.
        later = {w: s[1:] or s for w, s in SCRIPTS.items()}
        later["delta"] = ["wrongD2"]
        for name, strategy in controls.items():
            await run_toy(
                root / "sweep" / f"strategy={name}",
                strategy,
                words=WORDS,
                scripts=later,
                actor=FrozenFirstAttemptActor(ToyActor(), src),
                evaluator=FrozenFirstFeedbackEvaluator(ToyEvaluator(), src),
            )
        await run_toy(
            root / "sweep" / "strategy=simple",
            Strategy(name="simple", max_trials=1, self_test=False, memory_content="none"),
            words=WORDS,
            scripts=SCRIPTS,
        )

    asyncio.run(go())
    return root / "sweep"


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_sweep(tmp_path_factory.mktemp("report"))


def test_sweep_folder_is_searched_recursively(sweep: Path) -> None:
    dirs = find_run_dirs([sweep])
    assert {d.name for d in dirs} == {
        "strategy=reflexion",
        "strategy=retry",
        "strategy=wrong_reflection",
        "strategy=irrelevant_text",
        "strategy=simple",
    }
    # A run folder given twice (directly and via its sweep) is read once.
    assert len(find_run_dirs([sweep, sweep / "strategy=retry"])) == 5
    with pytest.raises(FileNotFoundError, match="not a run folder"):
        find_run_dirs([sweep / "nope"])


def test_report_numbers_come_from_the_logs(sweep: Path) -> None:
    report = build_comparison([sweep], n_resamples=2000)
    groups = {g["strategy"]: g for g in report["groups"]}
    assert set(groups) == {"reflexion", "retry", "wrong_reflection", "irrelevant_text", "simple"}
    refl = groups["reflexion"]
    assert refl["n_tasks"] == 6
    assert refl["first_try"]["estimate"] == pytest.approx(2 / 6)
    assert refl["final"]["estimate"] == pytest.approx(4 / 6)
    assert [p["estimate"] for p in refl["success_at_trial"]] == pytest.approx(
        [2 / 6, 3 / 6, 4 / 6, 4 / 6, 4 / 6]
    )
    assert refl["first_to_final"] == {"fixed": 2, "broken": 0, "unknown": 0}
    for name in ("retry", "wrong_reflection", "irrelevant_text"):
        assert groups[name]["first_to_final"]["fixed"] == 1
        # Frozen protocol: trial 1 identical to the reference (reflexion) on every task.
        assert groups[name]["trial1_identity"] == {
            "reference": "reflexion",
            "same": 6,
            "common": 6,
        }
    # Intervals contain their estimate.
    for g in report["groups"]:
        for p in g["success_at_trial"]:
            assert p["low"] <= p["estimate"] <= p["high"]

    # Paired test reflexion vs retry, by hand: delta is solved only by reflexion.
    pair = next(p for p in report["paired"] if {p["a"], p["b"]} == {"reflexion", "retry"})
    assert pair["n_common"] == 6
    a_is_refl = pair["a"] == "reflexion"
    assert (pair["mcnemar"]["only_a"], pair["mcnemar"]["only_b"]) == (
        (1, 0) if a_is_refl else (0, 1)
    )
    assert pair["mcnemar"]["p_value"] == pytest.approx(1.0)  # 1 discordant task: p = 1
    groups_objs = {g.strategy: g for g in load_groups([sweep])}
    finals = {
        s: {r["task_id"]: r["hidden"]["passed"] for r in g.records if r["final"]}
        for s, g in groups_objs.items()
    }
    tids = sorted(finals["reflexion"])
    expect = mcnemar_exact(
        [finals[pair["a"]][t] for t in tids], [finals[pair["b"]][t] for t in tids]
    )
    assert pair["mcnemar"] == expect.to_dict()


def test_budget_axis_and_best_of_n(sweep: Path) -> None:
    report = build_comparison([sweep], n_resamples=500, axis="calls")
    rows = {r["strategy"]: r for r in report["budget"]}
    # simple makes 1 call per task: it is the cheapest, and the common budget.
    assert rows["simple"]["budget"] == pytest.approx(1.0)
    assert all(r["budget"] == pytest.approx(1.0) for r in rows.values())
    assert rows["simple"]["success_at_budget"] == pytest.approx(2 / 6)
    # retry's first trial was replayed (a cached call is still a call): at one call
    # per task it has exactly its trial-1 success.
    assert rows["retry"]["success_at_budget"] == pytest.approx(2 / 6)
    refl = next(g for g in report["groups"] if g["strategy"] == "reflexion")
    bon = refl["best_of_n_equal_tokens"]
    assert bon["max_trials"] == 5 and bon["tasks_using_all_trials"] == 2
    expected = round(
        (bon["worst_case_tokens_per_task"] - bon["self_test_tokens_per_task"])
        / bon["tokens_per_sample"]
    )
    assert bon["n"] == max(1, expected)
    with pytest.raises(ValueError, match="budget axis"):
        build_comparison([sweep], axis="bananas")


def test_replayed_calls_are_flagged_where_time_enters_a_per_hour_figure(sweep: Path) -> None:
    report = build_comparison([sweep], n_resamples=200)
    groups = {g["strategy"]: g for g in report["groups"]}
    retry = groups["retry"]["replayed_calls"]
    # retry's first trial is a replay of reflexion's (one call per task, 6 tasks).
    assert retry["replayed"] == 6 and retry["calls"] > 6
    assert groups["reflexion"]["replayed_calls"]["replayed"] == 0
    md = render(report, "md", ["elapsed"])
    assert "calls replayed from the cache %" in md and "not its live speed" in md
    frame = tables(report)["elapsed"]
    shares = dict(zip(frame["strategy"], frame["replayed_share"], strict=True))
    assert shares["retry"] == pytest.approx(6 / retry["calls"])
    assert shares["reflexion"] is None or shares["reflexion"] != shares["reflexion"]  # NaN


def test_an_empty_success_at_budget_cell_says_why(sweep: Path) -> None:
    # Half a call per task: below every strategy's first trial (>= 1 call).
    report = build_comparison([sweep], n_resamples=200, axis="calls", budget=0.5)
    for row in report["budget"]:
        assert row["success_at_budget"] is None
        assert row["why_blank"].startswith("the budget (0.5) is below this strategy's mean spend")
    md = render(report, "md", ["budget"])
    assert "| why blank |" in md and "no trial of it fits" in md
    # With a value in every row the column is not shown.
    full = build_comparison([sweep], n_resamples=200, axis="calls", budget=100.0)
    assert all(r["why_blank"] is None for r in full["budget"])
    assert "why blank" not in render(full, "md", ["budget"])


def test_formats(sweep: Path) -> None:
    report = build_comparison([sweep], n_resamples=500, paper=True)
    md = render(report, "md")
    assert "### Success (first try, final)" in md
    # The paper has no figure for the toy benchmark: no rows of other benchmarks, a note.
    assert "published: Shinn et al." not in md
    assert "No published figure for toy" in md
    assert "| toy | reflexion | mock | 6 | 33.3 [" in md
    tex = render(report, "latex", ["main"])
    assert r"\begin{tabular}" in tex and r"\%" in tex
    rows = list(csv.DictReader(io.StringIO(render(report, "csv", ["main"]))))
    refl = next(r for r in rows if r["strategy"] == "reflexion" and r["source"] == "this run")
    assert float(refl["final"]) == pytest.approx(4 / 6)
    assert float(refl["final_low"]) <= float(refl["final"]) <= float(refl["final_high"])
    assert not [r for r in rows if r["source"].startswith("published")]
    data = json.loads(render(report, "json"))
    assert data["published"] == [] and data["published_missing"] == {"toy": "no published figure"}
    frames = tables(report)
    assert set(frames["controls"]["strategy"]) >= {"retry", "wrong_reflection"}
    st = frames["self_tests"]
    st = st[st["source"] == "this run"].set_index("strategy")
    # Self-tests equal the hidden check in the toy benchmark: no false positives.
    assert st.loc["reflexion", "fp"] == 0 and st.loc["reflexion", "tp_rate"] == 1.0


def test_cli(sweep: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = sweep / "strategy=reflexion"
    assert report_cmd.main([str(run), "--json"]) == 0
    single = json.loads(capsys.readouterr().out)
    assert single["final"] == pytest.approx(4 / 6) and single["strategy"] == "reflexion"
    assert (run / "summary.json").exists() and (run / "curve.png").exists()

    out = tmp_path / "out"
    assert (
        report_cmd.main([str(sweep), "--format", "csv", "--out", str(out), "--resamples", "300"])
        == 0
    )
    printed = capsys.readouterr().out
    assert printed.startswith("benchmark,strategy,model,n,first_try")
    for name in ("report.md", "report.tex", "report.json", "table_main.csv", "table_paired.csv"):
        assert (out / name).stat().st_size > 0
    png = out / "figures" / "curve_toy_mock.png"
    pdf = out / "figures" / "curve_toy_mock.pdf"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert pdf.read_bytes()[:5] == b"%PDF-"
    for stem in ("fix_break_toy_mock", "budget_tokens_toy_mock", "self_tests_toy_reflexion_mock"):
        assert (out / "figures" / f"{stem}.png").exists(), stem
    assert report_cmd.main([str(tmp_path / "missing")]) == 2


def test_paired_table_is_one_holm_family(sweep: Path) -> None:
    from reflexion_bench.analysis.equal_budget import holm

    report = build_comparison([sweep], n_resamples=300)
    pairs = report["paired"]
    assert len(pairs) == 10  # 5 strategies of one benchmark x model: every pair
    raw = [r["mcnemar"]["p_value"] for r in pairs]
    # The strategies table's Holm function, over the family of all 10 pairs.
    assert [r["holm"]["p"] for r in pairs] == pytest.approx(holm(raw))
    assert {(r["holm"]["family"], r["holm"]["m"]) for r in pairs} == {
        ("every pair of this table", 10)
    }
    assert all(r["holm"]["p"] >= r["mcnemar"]["p_value"] for r in pairs)
    frame = tables(report)["paired"]
    assert list(frame.columns[-5:]) == [
        "mcnemar_p",
        "mcnemar_p_holm",
        "holm_m",
        "verdict",
        "detectable",
    ]
    md = render(report, "md", ["paired"])
    assert "| McNemar p | Holm p | Holm family size | verdict |" in md
    assert "one family, the 10 pairs of this table; verdict:" in md
    assert "the 10 pairs of this table; verdict:" in render(report, "latex", ["paired"])


def test_every_comparison_has_a_verdict_and_a_detectable_difference(sweep: Path) -> None:
    """Issue 29: each paired row says different / equivalent / inconclusive at the margin,
    and what its tasks could detect; a wider margin can only turn inconclusive into
    equivalent; the text never calls an inconclusive comparison "no difference"."""
    from reflexion_bench.analysis import power as pw

    narrow = build_comparison([sweep], n_resamples=300, equivalence_margin=0.05)
    wide = build_comparison([sweep], n_resamples=300, equivalence_margin=0.9)
    for a, b in zip(narrow["paired"], wide["paired"], strict=True):
        va, vb = a["assessment"]["verdict"], b["assessment"]["verdict"]
        assert va in ("different", "equivalent", "inconclusive")
        if va == "different":
            assert a["holm"]["p"] < 0.05 and vb == "different"
        if va == "equivalent":
            assert vb == "equivalent"
        m = a["mcnemar"]
        psi = (m["only_a"] + m["only_b"]) / m["n"]
        assert a["assessment"]["discordance"] == pytest.approx(psi)
        if psi and pw.power(m["n"], psi, psi) >= 0.8:
            assert a["assessment"]["detectable_difference"] == pytest.approx(
                pw.detectable_difference(m["n"], psi)
            )
        else:
            # No discordant task, or too few for even all of them on one side to be
            # detected with 80% power: nothing is detectable, never "psi is".
            assert a["assessment"]["detectable_difference"] is None
            assert a["assessment"]["detectable_reason"]
    assert any(r["assessment"]["verdict"] == "equivalent" for r in wide["paired"])
    md = render(narrow, "md", ["paired", "strategies"])
    assert "±5 points" in md and "no difference" not in md.replace(
        "not evidence of no difference", ""
    )
    assert narrow["settings"]["equivalence_margin"] == 0.05


def test_report_equivalence_margin_flag(sweep: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        report_cmd.main(
            [str(sweep), "--table", "paired", "--equivalence-margin", "20", "--no-write"]
        )
        == 0
    )
    assert "±20 points" in capsys.readouterr().out
    assert report_cmd.main([str(sweep), "--equivalence-margin", "0", "--no-write"]) == 2
    assert "points of pass@1" in capsys.readouterr().err


def test_study_readme_blocks_are_written_by_the_report(
    sweep: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A study's README quotes the report through generated blocks, never by hand."""
    study = _copy_sweep(sweep, tmp_path)
    readme = study / "README.md"
    readme.write_text(
        "# Study\n\nProse.\n\n"
        "<!-- report:paired columns=a,b,diff,verdict -->\nstale 99.9\n<!-- /report -->\n\nEnd.\n"
    )
    assert report_cmd.main([str(study), "--out", str(study / "report"), "--resamples", "300"]) == 0
    text = readme.read_text()
    assert (
        "stale 99.9" not in text
        and text.startswith("# Study\n\nProse.")
        and text.endswith("End.\n")
    )
    report = build_comparison([study], n_resamples=300)
    first = report["paired"][0]
    row = f"| {first['a']} | {first['b']} | {100 * first['diff']['estimate']:.1f} ["
    assert row in text and first["assessment"]["verdict"] in text
    # Rebuilt again: the same bytes (the committed-reports test relies on it).
    before = readme.read_bytes()
    assert report_cmd.main([str(study), "--out", str(study / "report"), "--resamples", "300"]) == 0
    assert readme.read_bytes() == before
    # A column the table leaves out while it is empty (plus verdicts not yet judged) may
    # be named; a misspelt one may not.
    readme.write_text(
        "<!-- report:strategies columns=strategy,pass_at_budget,pass_at_budget_plus -->\n"
        "<!-- /report -->\n"
    )
    assert report_cmd.main([str(study), "--out", str(study / "report"), "--resamples", "300"]) == 0
    assert "pass@1 at budget" in readme.read_text()
    assert "(plus)" not in readme.read_text()
    readme.write_text(
        "<!-- report:strategies columns=strategy,pass_at_budget_plsu -->\n<!-- /report -->\n"
    )
    assert report_cmd.main([str(study), "--out", str(study / "report"), "--resamples", "300"]) == 2
    assert "pass_at_budget_plsu" in capsys.readouterr().err
    readme.write_text("<!-- report:nosuch -->\n<!-- /report -->\n")
    assert report_cmd.main([str(study), "--out", str(study / "report"), "--resamples", "300"]) == 2
    assert "unknown table 'nosuch'" in capsys.readouterr().err


def _copy_sweep(sweep: Path, dest: Path) -> Path:
    import shutil

    shutil.copytree(sweep, dest / "sweep")
    return dest / "sweep"


def test_out_folder_holds_exactly_what_the_command_writes(
    sweep: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from reflexion_bench.analysis.report import MANIFEST_NAME

    src = _copy_sweep(sweep, tmp_path)
    out = tmp_path / "report"
    args = [str(src), "--out", str(out), "--resamples", "200", "--no-write"]
    assert report_cmd.main(args) == 0
    capsys.readouterr()
    listed = [
        line
        for line in (out / MANIFEST_NAME).read_text().splitlines()
        if line and not line.startswith("#")
    ]
    on_disk = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert listed == sorted(listed) and sorted([*listed, MANIFEST_NAME]) == on_disk
    assert "report.json" in listed and "figures/curve_toy_mock.pdf" in listed

    # A file the report wrote last time and no longer writes goes (with its emptied
    # folder); a file it never wrote stays and is named; a manifest never reaches out.
    (out / "figures" / "old").mkdir()
    (out / "figures" / "old" / "gone.png").write_bytes(b"stale")
    (out / "notes.md").write_text("mine")
    outside = tmp_path / "outside.txt"
    outside.write_text("not the report's")
    with (out / MANIFEST_NAME).open("a") as fh:
        fh.write("figures/old/gone.png\n../outside.txt\n" + str(outside) + "\n")
    assert report_cmd.main(args) == 0
    err = capsys.readouterr().err
    assert not (out / "figures" / "old").exists()
    assert (out / "notes.md").read_text() == "mine" and outside.read_text() == "not the report's"
    assert "notes.md was not written by this command" in err
    assert "outside" not in (out / MANIFEST_NAME).read_text()

    # A folder written before manifests existed: the report's own names are its own.
    (out / MANIFEST_NAME).unlink()
    (out / "table_renamed.csv").write_text("a,b\n")
    (out / "figures" / "curve_removed_run.pdf").write_bytes(b"%PDF-")
    assert report_cmd.main(args) == 0
    assert not (out / "table_renamed.csv").exists()
    assert not (out / "figures" / "curve_removed_run.pdf").exists()
    assert (out / "notes.md").exists() and (out / MANIFEST_NAME).is_file()


def test_rebuild_is_byte_identical_anywhere(
    sweep: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two copies of a study built from different folders, one with absolute paths and a
    user's matplotlib style in force, give the same bytes (PDF and PNG included) and no
    file names the folder it was built in."""
    import matplotlib

    builds = {}
    for name, style in (("a", {}), ("b", {"lines.linewidth": 7.0, "font.size": 3.0})):
        root = tmp_path / name
        src = _copy_sweep(sweep, root)
        if name == "a":
            monkeypatch.chdir(root)
            args = ["sweep", "--out", "report"]
        else:
            monkeypatch.chdir(tmp_path)
            args = [str(src), "--out", str(root / "report")]
        with matplotlib.rc_context(style):
            assert report_cmd.main([*args, "--resamples", "200"]) == 0
        builds[name] = {
            p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()
        }
    assert sorted(builds["a"]) == sorted(builds["b"])
    differ = [n for n in builds["a"] if builds["a"][n] != builds["b"][n]]
    assert not differ
    for name, data in builds["b"].items():
        assert str(tmp_path).encode() not in data, name
    runs = json.loads(builds["b"]["report/report.json"])["groups"][0]["runs"]
    assert runs[0].startswith("../sweep/")
    pdf = builds["b"]["report/figures/curve_toy_mock.pdf"]
    assert b"CreationDate" not in pdf and b"Matplotlib" not in pdf
    assert b"Software" not in builds["b"]["report/figures/curve_toy_mock.png"]


def test_missing_values_are_not_guessed() -> None:
    """An imported-style log: earlier trials without verdict or tokens."""

    def rec(
        task: str, trial: int, passed: bool | None, final: bool, logged: bool | None = None
    ) -> dict:  # type: ignore[type-arg]
        return {
            "task_id": task,
            "trial": trial,
            "final": final,
            "benchmark": "b",
            "strategy": "s",
            "model": "m",
            "hidden": None if passed is None else {"passed": passed},
            "model_calls": None,
            "wall_time_s": None,
            "extra": {
                **({} if logged is None else {"logged_hidden_passed": logged}),
                **({"missing": ["hidden"]} if passed is None else {}),
            },
        }

    s = summarize(
        [
            rec("A", 1, None, False),
            rec("A", 2, True, True, logged=True),
            rec("B", 1, False, True, logged=True),  # the re-scoring disagrees with the log
            rec("C", 1, True, True, logged=True),
        ]
    )
    assert s["first_try"] is None
    assert s["final"] == pytest.approx(2 / 3)
    assert s["success_at_trial"] == [None, pytest.approx(2 / 3)]
    assert s["solved_by_trial"] == [None, pytest.approx(2 / 3)]
    assert s["first_to_final"] == {"fixed": 0, "broken": 0, "unknown": 1}
    assert s["totals"]["tokens"] is None and s["per_task_mean"]["tokens"] is None
    assert s["missing"]["tasks_with_unknown_first_try"] == 1
    assert s["logged"]["final"] == pytest.approx(1.0)
    assert s["logged"]["rescored_agreement"] == pytest.approx(2 / 3)
    assert s["logged"]["disagreeing_tasks"] == ["B"]


def test_a_live_trial_without_verdict_is_a_failure() -> None:
    """The actor errored before scoring: not "unknown" (only imports mark that)."""
    errored = {
        "task_id": "A",
        "trial": 1,
        "final": True,
        "hidden": None,
        "error": "ModelError: boom",
        "model_calls": [],
        "wall_time_s": 0.1,
    }
    ok = {**errored, "task_id": "B", "hidden": {"passed": True}, "error": None}
    s = summarize([errored, ok])
    assert s["final"] == pytest.approx(0.5) and s["first_try"] == pytest.approx(0.5)
    assert s["errored_tasks"] == 1 and "missing" not in s


def test_alfworld_failure_types_plotted(tmp_path: Path) -> None:
    """ALFWorld runs that logged their episodes get the failure-causes figure."""
    from reflexion_bench.analysis.report import write_comparison
    from reflexion_bench.runner.runlog import RunLogWriter

    steps = [["go to shelf 1", "On the shelf 1, you see nothing."]] * 6
    records = []
    for tid, wins in (("g0", [False, True]), ("g1", [False, False]), ("g2", [True])):
        for k, won in enumerate(wins, 1):
            records.append(
                {
                    "type": "trial",
                    "attempt_id": "a",
                    "task_id": tid,
                    "trial": k,
                    "final": k == len(wins),
                    "benchmark": "alfworld",
                    "strategy": "reflexion",
                    "model": "m",
                    "hidden": {"passed": won},
                    "model_calls": [],
                    "wall_time_s": 1.0,
                    "extra": {"alfworld": {"won": won, "steps": steps, "type_key": "put"}},
                }
            )
    writer = RunLogWriter(tmp_path / "run" / "log.jsonl")
    for r in records:
        writer.write(r)
    writer.close()
    report = build_comparison([tmp_path / "run"], n_resamples=200)
    (g,) = report["groups"]
    failures = g["failure_types_by_trial"]
    # Unsolved games per trial: g0, g1 at trial 1; g1 at trial 2.
    assert sum(failures[1].values()) == 2 and sum(failures[2].values()) == 1
    written = write_comparison(report, tmp_path / "out")
    assert tmp_path / "out" / "figures" / "failure_types_alfworld_reflexion_m.png" in written


def test_an_empty_table_says_why(tmp_path: Path) -> None:
    async def go() -> None:
        await run_toy(tmp_path / "one", Strategy(name="reflexion"), words=WORDS, scripts=SCRIPTS)

    asyncio.run(go())
    report = build_comparison([tmp_path / "one"], n_resamples=200)
    md = render(report, "md", ["paired", "seeds", "pooled"])
    assert "(none)" not in md
    assert (
        "(none: no two rows share a benchmark and a model, which a paired comparison needs "
        "(the same tasks under one model): toy / mock: reflexion)" in md
    )
    assert "(none: no configuration was run under more than one seed" in md
    assert "% Paired comparisons on common tasks (final success): (none: no two rows" in render(
        report, "latex", ["paired"]
    )


def test_tables_name_fixes_and_tasks_fixed_apart_and_point_to_the_glossary(sweep: Path) -> None:
    from reflexion_bench.analysis.tables import render

    report = build_comparison([sweep], n_resamples=200)
    md = render(report, "md", None)
    controls = md.split("### Memory-content controls", 1)[1].split("\n### ", 1)[0]
    header = next(line for line in controls.splitlines() if line.startswith("| benchmark"))
    assert "| fixed from trial 1 | broken from trial 1 |" in header
    assert "| fixed |" not in header and "| broken |" not in header
    main = md.split("\n### ", 1)[0]
    assert "| fixes | breaks | fixed from trial 1 | broken from trial 1 |" in main
    # Each of these tables' notes points to the glossary, and the glossary has the names.
    for section in (main, controls):
        assert "metric names: docs/reports.md#metrics" in section
    docs = (Path(__file__).resolve().parents[2] / "docs" / "reports.md").read_text()
    glossary = docs.split("\n## Metrics\n", 1)[1].split("\n## ", 1)[0]
    assert "**fixes / breaks**" in glossary and "**fixed / broken from trial 1**" in glossary

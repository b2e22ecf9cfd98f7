"""Shards of one run (``shard=I/N``): the split, the folders, and readers that take the
shards of an experiment as one run only when every shard is there and finished."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.analysis.runs import find_run_dirs, load_run
from reflexion_bench.core.errors import ConfigError
from reflexion_bench.runner.shards import parse_shard, shard_status, split, sweep_subdir

ROOT = Path(__file__).resolve().parents[2]
SEARCH = f"hydra.searchpath=[file://{ROOT / 'tests' / 'configs'}]"
WORDS = "env.words=[" + ",".join(f"w{i:02d}" for i in range(9)) + ",zeta]"
TOY = ["env=toy", "model=toy", "sandbox=none", WORDS, "progress=false"]


def reflexion_bench(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reflexion_bench.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def verdicts(run_dir: Path) -> dict[str, list[tuple[int, Any, Any]]]:
    """Per task, every trial's number, hidden verdict and candidate."""
    out: dict[str, list[tuple[int, Any, Any]]] = {}
    for r in load_run(run_dir).records:
        trial = (int(r["trial"]), (r.get("hidden") or {}).get("passed"), r.get("candidate"))
        out.setdefault(str(r["task_id"]), []).append(trial)
    return {k: sorted(v) for k, v in out.items()}


# --------------------------------------------------------------------------- the split


@pytest.mark.parametrize(
    ("text", "expected"), [("0/1", (0, 1)), ("3/4", (3, 4)), (" 1 / 2 ", (1, 2))]
)
def test_parse_shard_reads_i_of_n(text: str, expected: tuple[int, int]) -> None:
    assert parse_shard(text) == expected


@pytest.mark.parametrize("text", ["2/2", "0/0", "-1/2", "1", "a/b", "1/2/3"])
def test_parse_shard_refuses_what_is_not_a_shard(text: str) -> None:
    with pytest.raises(ConfigError, match="shard"):
        parse_shard(text)


@pytest.mark.parametrize("n_items", [0, 1, 7, 8, 23])
@pytest.mark.parametrize("count", [1, 2, 3, 8])
def test_the_shards_of_a_selection_are_disjoint_and_cover_it(n_items: int, count: int) -> None:
    items = [f"t{i}" for i in range(n_items)]
    parts = [split(items, i, count) for i in range(count)]
    assert sorted(x for p in parts for x in p) == sorted(items)
    assert sum(len(p) for p in parts) == n_items  # no item twice
    # Balanced: round-robin sizes differ by at most one.
    assert max(map(len, parts)) - min(map(len, parts)) <= 1


def test_a_sweep_job_folder_nests_its_shard_inside_the_experiment_folder() -> None:
    assert sweep_subdir("limit=8,shard=0/2") == "limit=8/shard-0-of-2"
    assert sweep_subdir("shard=3/4") == "shard-3-of-4"
    assert sweep_subdir("limit=8,strategy=retry") == "limit=8,strategy=retry"


# --------------------------------------------------------------------------- end to end


@pytest.fixture(scope="module")
def sharded_and_whole(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``-m shard=0/2,1/2 limit=7`` and the unsharded ``limit=7``."""
    root = tmp_path_factory.mktemp("shards")
    out = reflexion_bench(
        "run", "-m", SEARCH, *TOY, "shard=0/2,1/2", "limit=7", f"paths.results_dir={root}"
    )
    assert out.returncode == 0, out.stderr[-3000:]
    whole = root / "whole"
    out = reflexion_bench("run", SEARCH, *TOY, "limit=7", f"run_dir={whole}")
    assert out.returncode == 0, out.stderr[-3000:]
    return root / "sweeps" / "default", whole


def test_a_two_shard_sweep_runs_exactly_the_selection_in_two_folders(
    sharded_and_whole: tuple[Path, Path],
) -> None:
    sweep, whole = sharded_and_whole
    (experiment,) = find_run_dirs([sweep])
    assert experiment.parent == sweep and "limit=7" in experiment.name
    assert "shard" not in experiment.name
    shards = sorted(p.name for p in experiment.iterdir() if p.is_dir())
    assert shards == ["shard-0-of-2", "shard-1-of-2"]
    ids = [set(verdicts(experiment / s)) for s in shards]
    assert not ids[0] & ids[1]
    assert ids[0] | ids[1] == set(verdicts(whole))
    assert (len(ids[0]), len(ids[1])) == (4, 3)
    info = json.loads((experiment / "shard-1-of-2" / "shard.json").read_text())
    assert (info["index"], info["count"], info["n_selected"]) == (1, 2, 7)


def test_report_reads_the_shards_as_one_run_equal_to_the_unsharded_one(
    sharded_and_whole: tuple[Path, Path],
) -> None:
    sweep, whole = sharded_and_whole
    out = reflexion_bench("report", str(sweep), "--format", "json", "--no-write")
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout)
    assert len(report["groups"]) == 1
    group = report["groups"][0]
    assert group["n_tasks"] == 7 and group["complete"] is True
    assert len(group["runs"]) == 1  # the experiment folder, not two shard rows
    (experiment,) = find_run_dirs([sweep])
    assert verdicts(experiment) == verdicts(whole)
    single = json.loads(
        reflexion_bench("report", str(whole), "--format", "json", "--no-write").stdout
    )["groups"][0]
    for key in ("first_try", "final", "success_at_trial", "fixes", "breaks"):
        assert group[key] == single[key], key


def test_compare_and_the_viewer_take_the_experiment_as_one_run(
    sharded_and_whole: tuple[Path, Path],
) -> None:
    from reflexion_bench.view.data import Catalog

    sweep, whole = sharded_and_whole
    out = reflexion_bench("compare", str(sweep), str(whole), "--format", "json")
    assert out.returncode == 0, out.stderr[-3000:]
    data = json.loads(out.stdout)
    assert data["a"]["n_tasks"] == 7 and data["n_common"] == 7
    assert data["a"]["incomplete"] == [] and not data["differ"]
    catalog = Catalog([sweep])
    assert len(catalog) == 1
    overview = catalog.run(0).overview()
    assert overview["n_tasks"] == 7
    assert overview["shards"]["complete"] is True and overview["shards"]["count"] == 2
    # The sweep page: the shards' two jobs are the experiment's row, not jobs without a log.
    index = catalog.index()
    assert index["jobs_without_log"] == []
    (row,) = index["runs"]
    assert row["job_status"] == "done" and "shard=*/2" in row["overrides"]


def _copy_experiment(sweep: Path, dest: Path) -> Path:
    import shutil

    (experiment,) = find_run_dirs([sweep])
    shutil.copytree(experiment, dest)
    return dest


def test_a_missing_shard_is_named_and_the_run_is_not_complete(
    sharded_and_whole: tuple[Path, Path], tmp_path: Path
) -> None:
    import shutil

    experiment = _copy_experiment(sharded_and_whole[0], tmp_path / "exp")
    shutil.rmtree(experiment / "shard-1-of-2")
    out = reflexion_bench("report", str(experiment), "--format", "json", "--no-write")
    assert out.returncode == 0, out.stderr[-3000:]
    assert "shard 1/2 missing" in out.stderr
    group = json.loads(out.stdout)["groups"][0]
    assert group["complete"] is False and group["n_tasks"] == 4
    text = reflexion_bench("report", str(experiment), "--no-write").stdout
    assert "INCOMPLETE: shard 1/2 missing" in text
    out = reflexion_bench("compare", str(experiment), str(sharded_and_whole[1]))
    assert out.returncode == 0 and "INCOMPLETE: shard 1/2 missing" in out.stdout


def test_an_unfinished_or_overlapping_shard_is_not_complete(
    sharded_and_whole: tuple[Path, Path], tmp_path: Path
) -> None:
    experiment = _copy_experiment(sharded_and_whole[0], tmp_path / "exp")
    log = experiment / "shard-0-of-2" / "log.jsonl"
    lines = log.read_text().splitlines()
    last_task = json.loads(lines[-1])["task_id"]
    log.write_text("\n".join(ln for ln in lines if json.loads(ln)["task_id"] != last_task) + "\n")
    status = shard_status(experiment)
    assert not status.complete
    assert status.problems == ["shard 0/2 incomplete: 1 of 4 tasks not finished"]
    info_path = experiment / "shard-1-of-2" / "shard.json"
    info = json.loads(info_path.read_text())
    info["task_ids"].append(last_task)
    info_path.write_text(json.dumps(info))
    assert any("is in shard 0/2 and shard 1/2" in p for p in shard_status(experiment).problems)


def test_resume_redoes_only_the_unfinished_shard(tmp_path: Path) -> None:
    args = ("run", "-m", SEARCH, *TOY, "shard=0/2,1/2", "limit=6", f"paths.results_dir={tmp_path}")
    assert reflexion_bench(*args).returncode == 0
    (experiment,) = find_run_dirs([tmp_path / "sweeps" / "default"])
    done = (experiment / "shard-0-of-2" / "log.jsonl").read_bytes()
    unfinished = experiment / "shard-1-of-2" / "log.jsonl"
    lines = unfinished.read_text().splitlines()
    first = json.loads(lines[0])["task_id"]
    unfinished.write_text(
        "\n".join(ln for ln in lines if json.loads(ln)["task_id"] == first) + "\n"
    )
    assert not shard_status(experiment).complete
    out = reflexion_bench(*args)
    assert out.returncode == 0, out.stderr[-3000:]
    assert (experiment / "shard-0-of-2" / "log.jsonl").read_bytes() == done  # nothing rerun
    assert shard_status(experiment).complete
    assert len(verdicts(experiment)) == 6


def test_a_single_run_shard_goes_into_its_folder_inside_run_dir(tmp_path: Path) -> None:
    out = reflexion_bench("run", SEARCH, *TOY, "shard=1/3", f"run_dir={tmp_path / 'exp'}")
    assert out.returncode == 0, out.stderr[-3000:]
    assert set(verdicts(tmp_path / "exp" / "shard-1-of-3")) == {"toy/1", "toy/4", "toy/7"}


@pytest.mark.parametrize("value", ["abc", "2/2"])
def test_a_bad_shard_is_one_line_naming_the_key_and_leaves_no_folder(
    value: str, tmp_path: Path
) -> None:
    out = reflexion_bench("run", SEARCH, *TOY, f"shard={value}", f"run_dir={tmp_path / 'exp'}")
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert "`shard`" in out.stderr and "I/N" in out.stderr
    assert len(out.stderr.strip().splitlines()) <= 4
    assert not (tmp_path / "exp").exists()


def test_lifelong_memory_refuses_to_shard_and_says_why(tmp_path: Path) -> None:
    out = reflexion_bench(
        "run", SEARCH, *TOY, "memory=lifelong", "shard=0/2", f"run_dir={tmp_path / 'exp'}"
    )
    assert out.returncode == 2, out.stderr[-3000:]
    assert "sequential stream" in out.stderr and "env.seed=0,1,2,3" in out.stderr
    assert "Traceback" not in out.stderr

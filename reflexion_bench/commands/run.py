"""``reflexion-bench run <hydra overrides>``: the Hydra application."""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import signal
import sys
from pathlib import Path
from typing import Any

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from reflexion_bench.config import CONFIG_DIR, redact_text
from reflexion_bench.core.errors import ConfigError
from reflexion_bench.environments.base import DatasetError
from reflexion_bench.models.base import ModelError

log = logging.getLogger("reflexion_bench")


def _run_dir(cfg: DictConfig) -> Path:
    # Hydra's output dir is the run folder in single runs and in every multirun job,
    # so sweeps get one run folder per job without a second naming scheme.
    out = Path(HydraConfig.get().runtime.output_dir)
    if str(cfg.get("resume")) == "latest" and not _is_multirun():
        # A shard's folder is inside its experiment's: the newest experiment folder
        # holding this shard's log is the one to continue.
        sharded = cfg.get("shard") is not None
        current, shard = (out.parent, out.name) if sharded else (out, "")
        previous = _latest_run_like(current, str(cfg.name), shard)
        if previous is not None:
            _remove_if_fresh(out)
            if sharded and not any(current.iterdir()):
                current.rmdir()
            print(f"resuming {previous}", file=sys.stderr)
            return previous
    return out


def _latest_run_like(current: Path, name: str, shard: str = "") -> Path | None:
    """The newest earlier run folder of the same experiment name that has a log (of
    the shard folder ``shard`` inside it, for a shard)."""
    candidates = [
        p / shard if shard else p
        for p in current.parent.glob(f"*_{name}")
        if p != current and (p / shard / "log.jsonl").exists()
    ]
    return max(candidates, key=lambda p: str(p)) if candidates else None


def _remove_if_fresh(folder: Path) -> None:
    # Hydra created this folder for the new run; it holds only Hydra's own files.
    import shutil

    if not (folder / "log.jsonl").exists():
        shutil.rmtree(folder, ignore_errors=True)


def _unread_overrides_error(cfg: DictConfig) -> str | None:
    """The refusal of ``+key`` overrides nothing reads (a misspelling would otherwise be
    recorded in config.yaml and ignored), or None."""
    from reflexion_bench.config import redact_override
    from reflexion_bench.runner.overrides import error_text, unread_additions

    hc = HydraConfig.get()
    unread = unread_additions(cfg, list(hc.overrides.task), dict(hc.runtime.choices))
    return error_text([redact_override(o) for o in unread], cfg) if unread else None


def _missing_values_error(cfg: DictConfig) -> str | None:
    """The refusal of keys left at ``???`` (`model.name` of `model=openai_compatible`),
    or None: found later, where the run first reads one, it is a long traceback."""
    from omegaconf import OmegaConf

    from reflexion_bench.runner.cli_errors import missing_values_text

    return missing_values_text(OmegaConf.missing_keys(cfg), dict(HydraConfig.get().runtime.choices))


def _holds_only_hydra_files(folder: Path) -> bool:
    # Hydra makes the run folder (and writes .hydra/) before the app runs: anything else
    # in it was there before this session (a resumed run, someone's files).
    try:
        return all(p.name == ".hydra" for p in folder.iterdir())
    except OSError:
        return False


def _remove_failed_start(folder: Path) -> None:
    """A run that failed before its first finished task leaves no folder behind; one
    with results (a log with a record) is never removed."""
    import shutil

    from reflexion_bench.core.runlog import LOG_NAME

    log_path = folder / LOG_NAME
    if log_path.exists() and log_path.stat().st_size > 0:
        return
    shutil.rmtree(folder, ignore_errors=True)


def _sweep_tracking(cfg: DictConfig) -> None:
    """A sweep job's tracker run: group = the sweep's name, tags = the job's overrides
    (secrets masked), unless the logger config sets them."""
    from omegaconf import open_dict

    from reflexion_bench.config import redact_override
    from reflexion_bench.trackers import sweep_tags

    node = cfg.get("logger")
    if node is None or "_target_" not in node:
        return
    with open_dict(node):
        if "group" in node and not node.get("group"):
            node.group = str(cfg.get("sweep_name"))
        if "tags" in node and not node.get("tags"):
            overrides = [redact_override(o) for o in HydraConfig.get().overrides.task]
            node.tags = sweep_tags(overrides)


def _job_label() -> str:
    """A sweep job's overrides (secrets masked), the prefix of its progress lines."""
    from reflexion_bench.config import redact_override

    hc = HydraConfig.get()
    return f"[job {hc.job.num}: {' '.join(redact_override(o) for o in hc.overrides.task)}]"


def _is_multirun() -> bool:
    mode = HydraConfig.get().mode
    return mode is not None and mode.name == "MULTIRUN"


@hydra.main(config_path=str(CONFIG_DIR), config_name="config", version_base="1.3")
def hydra_main(cfg: DictConfig) -> float | None:
    from reflexion_bench.analysis.report import format_table
    from reflexion_bench.runner.run import RunAborted, run_experiment
    from reflexion_bench.trackers import make_tracker

    if _is_multirun():
        _SWEEP_DIR[:] = [Path(str(HydraConfig.get().sweep.dir))]
    fresh_dir = Path(HydraConfig.get().runtime.output_dir)
    # Only a folder this session made may be removed on a failed start (never a resumed one).
    fresh = _holds_only_hydra_files(fresh_dir)
    unread = _missing_values_error(cfg) or _unread_overrides_error(cfg)
    if unread is not None:
        if fresh:
            _remove_failed_start(fresh_dir)
        if _is_multirun():
            raise JobFailed(unread.removeprefix("error: ")) from None
        print(unread, file=sys.stderr)
        raise SystemExit(2)
    run_dir = _run_dir(cfg)
    fresh = fresh and run_dir == fresh_dir
    if _is_multirun():
        _sweep_tracking(cfg)
    tracker = make_tracker(cfg, run_dir)
    label = _job_label() if _is_multirun() else ""
    interrupted = False
    finished = False
    try:
        summary = asyncio.run(_interruptible(run_experiment(cfg, run_dir, label, tracker)))
        tracker.log_run(run_dir, summary)
        print(format_table(summary))
        print(f"run folder: {run_dir}")
        finished = True
        final = summary.get("final")
        return float(final) if final is not None else None
    except (Interrupted, KeyboardInterrupt):
        # Ctrl-C: the log holds every finished trial (each was flushed as it ended).
        # KeyboardInterrupt: a Ctrl-C that came while asyncio tore its loop down (its
        # handlers already removed, ours below not yet set) or before the loop ran; it
        # stops the run the same way, never with a traceback.
        signal.signal(signal.SIGINT, _quit_now)  # a second Ctrl-C from here quits at once
        print(
            f"interrupted: finished tasks are kept in {run_dir / 'log.jsonl'}; "
            f"resume with:\n  {resume_command(_ARGV, run_dir, _is_multirun())}",
            file=sys.stderr,
            flush=True,
        )
        interrupted = True
    except (ConfigError, DatasetError, ModelError, FileNotFoundError, RunAborted) as exc:
        # Errors a user fixes by changing config/data/keys: one clear line, no traceback.
        message = redact_text(str(exc))
        if isinstance(exc, RunAborted):
            _log_aborted(tracker, run_dir)
        if _is_multirun():
            # A failed job must not end the sweep: Hydra records it as failed and
            # the other jobs still run; its one line (sweep.py) carries the message.
            raise JobFailed(message) from None
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(2) from None
    finally:
        tracker.close()
        if fresh and not finished and not interrupted:
            _remove_failed_start(run_dir)
    if interrupted:
        _exit_interrupted()
    return None


def _exit_interrupted() -> None:
    """Leave with 130 after a clean stop. Not through interpreter shutdown: it puts
    SIGINT back to the default action, so a second Ctrl-C landing there would kill the
    process by the signal instead of ending it as promised. The exit handlers (servers,
    sandboxes) run here, under the quit-at-once handler."""
    import atexit

    sys.stdout.flush()
    sys.stderr.flush()
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(130)


def _log_aborted(tracker: Any, run_dir: Path) -> None:
    # An aborted run (too many errored tasks, a budget) still reaches the tracker with
    # its summary (errored tasks included): that is when its numbers most need a look.
    import json

    path = run_dir / "summary.json"
    if path.exists():
        tracker.log_run(run_dir, json.loads(path.read_text(encoding="utf-8")))


class Interrupted(Exception):
    """The run was stopped with Ctrl-C (SIGINT) or SIGTERM."""


_ARGV: list[str] = []


def _quit_now(signum: int, frame: Any) -> None:
    print("interrupted again: quitting now", file=sys.stderr, flush=True)
    os._exit(130)


async def _interruptible(coro: Any) -> Any:
    """Run ``coro``; the first SIGINT/SIGTERM cancels it (the runner drops the trials in
    flight, keeps and summarises what finished), a second one quits at once."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(coro)
    hits = 0

    def on_signal() -> None:
        nonlocal hits
        hits += 1
        if hits > 1:
            _quit_now(signal.SIGINT, None)
        print(
            "\ninterrupted: stopping (trials in flight are dropped, finished ones are kept); "
            "Ctrl-C again to quit at once",
            file=sys.stderr,
            flush=True,
        )
        task.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)
    try:
        return await task
    except asyncio.CancelledError:
        if hits:
            raise Interrupted() from None
        raise


def resume_command(argv: list[str], run_dir: Path, multirun: bool) -> str:
    """The command that resumes this run: the same overrides (secrets masked) and, for a
    single run, its folder (a sweep's job folders are named from their overrides, so
    the same command finds them)."""
    from reflexion_bench.config import redact_override

    keep = [
        redact_override(a) for a in argv if multirun or not a.startswith(("run_dir=", "resume="))
    ]
    if not multirun:
        keep.append(f"run_dir={run_dir.resolve()}")
    return " ".join(["reflexion-bench", "run", *(shlex.quote(a) for a in keep)])


def _error_text(exc: Exception, multirun: bool) -> str | None:
    """One line for what came out of Hydra, or None (a bug: its traceback is shown)."""
    from reflexion_bench.runner import cli_errors

    text = cli_errors.hydra_error_text(exc)
    if text is not None:
        return text
    if multirun and (isinstance(exc, JobFailed) or _SWEEP_DIR):
        # The sweeper re-raises the first failed job's error after all jobs ran; each
        # job already printed its one line (a bug's traceback: run that job without -m).
        text = _sweep_failures(bug=not isinstance(exc, JobFailed))
        if text is not None:
            return text
    if isinstance(exc, OSError) and exc.filename is not None:
        return cli_errors.os_error_text(exc, multirun)
    if isinstance(exc, ValueError) and str(exc).startswith("Only one of"):
        return f"error: {exc}"
    return None


class JobFailed(RuntimeError):
    """A sweep job stopped on an error its message explains (config, data, keys)."""


#: The sweep folder, as the jobs run in this process saw it (basic launcher).
_SWEEP_DIR: list[Path] = []


def _sweep_failures(bug: bool) -> str | None:
    """The sweep's closing line when jobs failed (each already printed its one line);
    None when the index shows no failed job (the error came from elsewhere)."""
    from reflexion_bench.runner.sweep import job_counts, read_index

    how_many = "sweep jobs failed"
    if _SWEEP_DIR:
        counts = job_counts(read_index(_SWEEP_DIR[0]))
        if not counts["failed"]:
            return None
        total = counts["failed"] + counts["done"] + counts["running"]
        how_many = f"{counts['failed']} of {total} sweep jobs failed"
    fix = "run that job without -m for its traceback" if bug else "fix them"
    return (
        f"error: {how_many} (one line each above, `failed; ... error:`); {fix} and run the "
        "same command again: finished jobs are kept"
    )


def main(argv: list[str]) -> int:
    from reflexion_bench.runner import cli_errors

    if "--estimate" in argv:  # before Hydra: it composes, prints and runs nothing
        from reflexion_bench.runner import estimate

        return estimate.main([a for a in argv if a != "--estimate"])
    _ARGV[:] = argv
    _SWEEP_DIR.clear()
    sys.argv = ["reflexion-bench run", *argv]
    conflict = cli_errors.mode_conflict(argv)
    if conflict is not None:
        print(conflict, file=sys.stderr)
        return 2
    multirun = any(a in ("-m", "--multirun") for a in argv)
    # Hydra raises instead of printing its long form; what is fixable gets one line.
    with cli_errors.hydra_raises() as user_asked_for_full_errors:
        try:
            hydra_main()
        except Exception as exc:
            text = None if user_asked_for_full_errors else _error_text(exc, multirun)
            if text is None:
                raise
            print(redact_text(text), file=sys.stderr)
            return 2
    return 0

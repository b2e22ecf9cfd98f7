"""``logger=wandb``: a Weights & Biases run fed from the run log, as it grows and after.

While the run goes, one history row per finished task (``tasks_finished`` is its step:
the task's verdicts, trials, tokens, wall time, and the pass rate so far), so a long run
can be watched. After it, everything is read back from the run folder (the JSONL log
stays the source of truth): the saved, redacted ``config.yaml`` (redacted again on the
way out), one history row per trial index (``trial`` is its step) (success after k trials, solved by k, tasks still
running, fixes/breaks into k, mean cumulative tokens), the trial curve (a W&B line
plot and the ``curve.png`` image), a table of tasks with their candidates,
trajectories, feedback and reflections, and the run summary.

Offline use (tests, machines without network): ``WANDB_MODE=offline`` (or
``logger.mode=offline``) and ``WANDB_DIR`` (default: the run folder) keep everything on
disk; ``wandb sync`` uploads it later (the path and the command are printed when the
run closes). A tracker failure (no API key, no network)
is logged as a warning and never fails the run: its results are already on disk.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from reflexion_bench.config import redact, redact_override, redact_text

log = logging.getLogger(__name__)


def _flatten(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, f"{key}/"))
        elif isinstance(v, int | float | str | bool) or v is None:
            out[key] = v
    return out


def _mode(value: str) -> Literal["online", "offline", "disabled"]:
    if value not in ("online", "offline", "disabled"):
        from reflexion_bench.core.errors import ConfigError

        raise ConfigError("logger.mode / WANDB_MODE", value, "online, offline, disabled")
    return value  # type: ignore[return-value]


def _clip(text: Any, limit: int) -> str:
    s = "" if text is None else redact_text(str(text))
    return s if len(s) <= limit else s[:limit] + f"\n... [{len(s) - limit} more characters]"


def _trial_rows(records: Sequence[dict[str, Any]], summary: dict[str, Any]) -> list[dict[str, Any]]:
    """One history row per trial index k."""
    from reflexion_bench.analysis.budget import spend_curve

    k_max = len(summary.get("success_at_trial") or [])
    tokens = spend_curve(records, "tokens", k_max) if records else []
    by_task: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_task.setdefault(str(r["task_id"]), []).append(r)
    rows = []
    for k in range(1, k_max + 1):
        at_k = [r for r in records if int(r["trial"]) == k]
        fixes = breaks = 0
        for recs in by_task.values():
            verdict = {int(r["trial"]): (r.get("hidden") or {}).get("passed") for r in recs}
            if k - 1 in verdict and k in verdict and None not in (verdict[k - 1], verdict[k]):
                fixes += int(not verdict[k - 1] and bool(verdict[k]))
                breaks += int(bool(verdict[k - 1]) and not verdict[k])
        self_passes = [
            (r.get("self_test") or {}).get("passed")
            for r in at_k
            if (r.get("self_test") or {}).get("passed") is not None
        ]
        rows.append(
            {
                "trial": k,
                "success_at_trial": summary["success_at_trial"][k - 1],
                "solved_by_trial": summary["solved_by_trial"][k - 1],
                "tasks_at_trial": len(at_k),
                "fixes_into_trial": fixes,
                "breaks_into_trial": breaks,
                "self_test_pass_rate": sum(map(bool, self_passes)) / len(self_passes)
                if self_passes
                else None,
                "mean_cumulative_tokens": tokens[k - 1] if k - 1 < len(tokens) else None,
            }
        )
    return rows


#: History keys of the per-trial rows (``trial`` is their step).
_TRIAL_KEYS = (
    "success_at_trial",
    "solved_by_trial",
    "tasks_at_trial",
    "fixes_into_trial",
    "breaks_into_trial",
    "self_test_pass_rate",
    "mean_cumulative_tokens",
)

TASK_COLUMNS = [
    "task_id",
    "trials",
    "first_passed",
    "final_passed",
    "submitted_candidate",
    "self_test_feedback",
    "reflections",
    "memory_shown_last_trial",
    "trajectories",
    "tokens",
    "wall_time_s",
    "error",
]


def task_rows(records: Sequence[dict[str, Any]], max_chars: int = 4000) -> list[list[Any]]:
    """The rows of the tasks table (see :data:`TASK_COLUMNS`)."""
    by_task: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_task.setdefault(str(r["task_id"]), []).append(r)
    rows = []
    for tid, recs in by_task.items():
        recs = sorted(recs, key=lambda r: int(r["trial"]))
        last = recs[-1]
        reflections = [
            f"[trial {r['trial']}] {r['reflection']}" for r in recs if r.get("reflection")
        ]
        trajectories = [
            f"=== trial {r['trial']} ===\n{r.get('trajectory') or r.get('candidate') or ''}"
            for r in recs
        ]
        calls = [c for r in recs for c in (r.get("model_calls") or [])]
        rows.append(
            [
                tid,
                len(recs),
                (recs[0].get("hidden") or {}).get("passed"),
                (last.get("hidden") or {}).get("passed"),
                _clip(last.get("candidate"), max_chars),
                _clip((last.get("self_test") or {}).get("text"), max_chars),
                _clip("\n\n".join(reflections), max_chars),
                _clip("\n\n".join(last.get("memory_shown") or []), max_chars),
                _clip("\n\n".join(trajectories), max_chars),
                sum(
                    int(c.get("prompt_tokens") or 0) + int(c.get("completion_tokens") or 0)
                    for c in calls
                ),
                sum(float(r.get("wall_time_s") or 0.0) for r in recs),
                _clip(last.get("error"), 1000) or None,
            ]
        )
    return rows


def _settings(wandb: Any, init_timeout_s: float) -> Any:
    """W&B settings that record nothing of this machine's command line, code or git.

    The command line may carry secrets (``model.api_key=...`` overrides), and W&B's
    system metadata copies it (``args``, ``program``): metadata collection is off, and
    so are code saving, git state and the console copy (the run's own output may hold
    anything). The config W&B gets is the redacted one of the run folder.
    """
    fields = getattr(wandb.Settings, "model_fields", {})
    # wandb >= 0.19 calls it x_disable_meta; older releases _disable_meta.
    meta = "x_disable_meta" if "x_disable_meta" in fields else "_disable_meta"
    kwargs: dict[str, Any] = {
        "init_timeout": init_timeout_s,
        "silent": True,
        "console": "off",
        "disable_code": True,
        "save_code": False,
        "disable_git": True,
        "program": "reflexion-bench",
        meta: True,
    }
    return wandb.Settings(**kwargs)


@contextlib.contextmanager
def _argv_redacted() -> Iterator[None]:
    """``sys.argv`` with secrets masked while W&B starts: it reads the command line
    (``Settings._args``) at init whatever the metadata setting says."""
    saved = sys.argv
    sys.argv = [redact_override(a) for a in saved]
    try:
        yield
    finally:
        sys.argv = saved


class WandbTracker:
    """Log a finished run to W&B (see the module docstring).

    Args:
        cfg: The run's config (used only if the run folder has no saved config.yaml).
        run_dir: The run folder.
        project: W&B project.
        entity: W&B entity (team/user); None: the default of the API key.
        mode: ``online``, ``offline`` or ``disabled``; None: ``WANDB_MODE`` or online.
        group: W&B group (e.g. the sweep name), tags: W&B tags.
        name: Run name; None: the run folder's name.
        dir: Where W&B writes its files; None: ``WANDB_DIR`` or the run folder.
        log_tasks_table: Log the table of tasks.
        max_text_chars: Longer texts in the table are cut (the log has them whole).
        log_artifact: Also upload log.jsonl and summary.json as an artifact.
        init_timeout_s: Give up connecting after this long (the run is already saved).
    """

    def __init__(
        self,
        cfg: Any = None,
        run_dir: str | Path | None = None,
        project: str = "reflexion-bench",
        entity: str | None = None,
        mode: str | None = None,
        group: str | None = None,
        tags: Sequence[str] = (),
        name: str | None = None,
        dir: str | None = None,
        log_tasks_table: bool = True,
        max_text_chars: int = 4000,
        log_artifact: bool = False,
        init_timeout_s: float = 60.0,
    ) -> None:
        if mode not in (None, "online", "offline", "disabled"):
            from reflexion_bench.core.errors import ConfigError

            raise ConfigError("logger.mode", mode, "online, offline, disabled or null")
        self.cfg = cfg
        self.run_dir = Path(run_dir) if run_dir is not None else None
        self.project = project
        self.entity = entity
        self.mode = mode
        self.group = group
        self.tags = list(tags)
        self.name = name
        self.dir = dir
        self.log_tasks_table = log_tasks_table
        self.max_text_chars = max_text_chars
        self.log_artifact = log_artifact
        self.init_timeout_s = init_timeout_s
        self.run: Any = None
        self._tasks_finished = 0
        self._tasks_passed = 0
        self._broken: str | None = None

    def _config(self, run_dir: Path) -> dict[str, Any]:
        import yaml

        saved = run_dir / "config.yaml"
        if saved.exists():
            loaded = yaml.safe_load(saved.read_text(encoding="utf-8")) or {}
            out = redact(loaded)
        elif self.cfg is not None:
            from omegaconf import OmegaConf

            try:
                container = OmegaConf.to_container(self.cfg, resolve=True, throw_on_missing=False)
            except Exception:  # unresolvable interpolations outside Hydra: keep them raw
                container = OmegaConf.to_container(self.cfg, resolve=False)
            out = redact(container)
        else:
            out = {}
        return out if isinstance(out, dict) else {"config": out}

    def _ensure_run(self, run_dir: Path) -> Any:
        """The W&B run, started on first use (the first finished task, or the end)."""
        if self._broken is not None:
            raise RuntimeError(f"W&B did not start earlier in this run: {self._broken}")
        if self.run is None:
            import wandb

            wandb_dir = Path(self.dir or os.environ.get("WANDB_DIR") or run_dir)
            wandb_dir.mkdir(parents=True, exist_ok=True)
            try:
                with _argv_redacted():
                    self.run = self._init(wandb, run_dir, wandb_dir)
            except Exception as exc:
                # Tried once per run: a missing key or network must not cost every task
                # its own init timeout and warning.
                self._broken = redact_text(f"{type(exc).__name__}: {exc}")
                raise
            # Two x axes: per-task rows step by tasks finished, the trial curve by trial.
            # Explicit `step=` cannot serve both (W&B drops rows whose step goes back).
            self.run.define_metric("tasks_finished")
            self.run.define_metric("task/*", step_metric="tasks_finished")
            self.run.define_metric("trial")
            for key in _TRIAL_KEYS:
                self.run.define_metric(key, step_metric="trial")
        return self.run

    def log_task(self, run_dir: Path, task_id: str, records: list[dict[str, Any]]) -> None:
        """One history row for a task that just finished; never raises."""
        if self._broken is not None:
            return  # warned once already; log_run warns again at the end
        try:
            run = self._ensure_run(Path(run_dir))
            recs = sorted(records, key=lambda r: int(r.get("trial") or 0))
            if not recs:
                return
            final = (recs[-1].get("hidden") or {}).get("passed")
            self._tasks_finished += 1
            self._tasks_passed += int(final is True)
            calls = [c for r in recs for c in (r.get("model_calls") or [])]
            row = {
                "tasks_finished": self._tasks_finished,
                "task/passed": None if final is None else int(bool(final)),
                "task/first_passed": _as_int((recs[0].get("hidden") or {}).get("passed")),
                "task/trials": len(recs),
                "task/errored": int(bool(recs[-1].get("error"))),
                "task/tokens": sum(
                    int(c.get("prompt_tokens") or 0) + int(c.get("completion_tokens") or 0)
                    for c in calls
                ),
                "task/wall_time_s": sum(float(r.get("wall_time_s") or 0.0) for r in recs),
                "task/pass_rate_so_far": self._tasks_passed / self._tasks_finished,
            }
            run.log({k: v for k, v in row.items() if v is not None})
        except Exception as exc:
            log.warning(
                "W&B logging of task %s failed (%s); the run goes on",
                task_id,
                redact_text(f"{type(exc).__name__}: {exc}"),
            )

    def log_run(self, run_dir: Path, summary: dict[str, Any]) -> None:
        """Send the run folder's config, metrics, curve and tasks; never raises."""
        try:
            self._log_run(Path(run_dir), summary)
        except Exception as exc:
            log.warning(
                "W&B logging failed (%s); the run's results are in %s",
                redact_text(f"{type(exc).__name__}: {exc}"),
                run_dir,
            )

    def _log_run(self, run_dir: Path, summary: dict[str, Any]) -> None:
        import wandb

        from reflexion_bench.core.runlog import LOG_NAME, load_run_records

        records = load_run_records(run_dir) if (run_dir / LOG_NAME).exists() else []
        run = self._ensure_run(run_dir)
        if not summary.get("n_tasks"):
            run.summary["n_tasks"] = 0
            return
        rows = _trial_rows(records, summary)
        for row in rows:
            run.log({k: v for k, v in row.items() if v is not None})
        curve = wandb.Table(
            columns=["trial", "success_at_trial", "solved_by_trial"],
            data=[[r["trial"], r["success_at_trial"], r["solved_by_trial"]] for r in rows],
        )
        media: dict[str, Any] = {
            "trial_curve": wandb.plot.line(
                curve, "trial", "success_at_trial", title="success of the submitted candidate"
            ),
            "trial_curve_table": curve,
        }
        png = run_dir / "curve.png"
        if png.exists():
            media["curve_png"] = wandb.Image(str(png))
        if self.log_tasks_table:
            media["tasks"] = wandb.Table(
                columns=list[str | int](TASK_COLUMNS), data=task_rows(records, self.max_text_chars)
            )
        run.log(media)
        run.summary.update(
            {k: v for k, v in _flatten(summary).items() if v is not None and k != "run_dir"}
        )
        if self.log_artifact:
            art = wandb.Artifact(f"runlog-{run.id}", type="run-log")
            for name in (LOG_NAME, "summary.json"):
                if (run_dir / name).exists():
                    art.add_file(str(run_dir / name))
            run.log_artifact(art)

    def _init(self, wandb: Any, run_dir: Path, wandb_dir: Path) -> Any:
        config = self._config(run_dir)
        return wandb.init(
            project=self.project,
            entity=self.entity,
            name=self.name or run_dir.name,
            group=self.group or self._configuration_group(config),
            tags=self.tags or None,
            config=config,
            dir=str(wandb_dir),
            mode=_mode(self.mode or os.environ.get("WANDB_MODE") or "online"),
            job_type="run",
            settings=_settings(wandb, self.init_timeout_s),
        )

    @staticmethod
    def _configuration_group(config: dict[str, Any]) -> str | None:
        """Without ``logger.group``: one group per configuration, so the seeds of a sweep
        land in one W&B group (W&B's grouped runs show their mean and spread)."""
        if not config:
            return None
        from reflexion_bench.analysis.runs import configuration_group

        return configuration_group(config)

    def close(self) -> None:
        if self.run is not None:
            offline = _offline_folder(self.run)
            try:
                self.run.finish()
            except Exception as exc:
                log.warning("closing the W&B run failed: %s", redact_text(str(exc)))
            self.run = None
            if offline is not None:
                # Offline runs are easy to lose track of: say where it is, how to upload.
                print(
                    f"W&B offline run saved in {offline}; upload it with: wandb sync {offline}",
                    file=sys.stderr,
                    flush=True,
                )


def _offline_folder(run: Any) -> Path | None:
    """The ``offline-run-*`` folder of an offline W&B run (what ``wandb sync`` takes)."""
    try:
        if not run.settings._offline:
            return None
        folder = Path(run.dir).parent  # run.dir is <...>/offline-run-<time>-<id>/files
    except Exception:
        return None
    return folder if folder.name.startswith("offline-run-") else None


def _as_int(value: Any) -> int | None:
    return None if value is None else int(bool(value))

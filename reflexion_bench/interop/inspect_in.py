"""Inspect AI eval logs (``.eval`` / ``.json``) -> run folders of ours.

Read through ``inspect_ai.log`` (``read_eval_log``, ``list_eval_logs``), so every log
format Inspect reads is read. The mapping:

- **task id**: the sample id (``str``), one task per sample whatever the epochs;
- **seeds**: Inspect's epochs. A log with one epoch is one run folder; with several, one
  sub-folder per epoch (``epoch-<e>``), whose ``config.yaml`` differ only in ``seed``
  (= the epoch), so ``report`` and ``compare`` pair them as one configuration over seeds
  (:mod:`reflexion_bench.analysis.runs`). Inspect's epoch reducer (mean, mode...) is not
  applied: the seeds table and paired tests see every epoch;
- **trials**: a sample is one trial unless its transcript shows the solver scoring it in
  the loop (``score()`` from a solver, as ``react(attempts=N)`` and ``basic_agent``'s
  ``max_attempts``/``incorrect_message`` do: intermediate score events). Then each
  in-loop scoring ends a trial: the trial's verdict is that score, the scorer's
  feedback to the model (the ``incorrect_message`` it was sent next) is the trial's
  ``self_test`` text, and the trial after the last in-loop scoring (if the model went on)
  is judged by the sample's final score. Each in-loop scoring is one use of the answer
  key (``answer_key_uses``: ``solver.scorer_verdict``), so such a run is labelled
  **answer-in-loop** with its count; a transcript without in-loop scoring is **clean**;
  a sample without events (a log written without them) is unrecorded (``unknown``);
- **candidate**: each trial's submitted answer, the ``submit`` tool's ``answer`` argument
  (react, basic_agent), the last trial's included; without a submit call the reply
  itself (the sample's output for the last trial). The assistant's text beside it is
  ``extra.inspect.assistant_text`` (react's reads "tool call for tool submit"), the
  sample's output the final scorer read is ``extra.inspect.output_completion`` (last
  trial), and ``extra.inspect.candidate_from`` says which of ``submit``/``reply`` the
  candidate is;
- **verdict**: the chosen scorer's value (``--scorer``; default the log's first) through
  :mod:`reflexion_bench.interop._verdicts` (``C`` pass; ``I``/``P``/``N`` fail; numbers
  pass at >= 1.0; configurable per scorer). Every scorer's raw value is kept in
  ``hidden.extra.scores``; a sample that errored has no verdict and counts as failed
  (``error`` holds Inspect's message), as an errored task of ours does;
- **usage**: one ``model_calls`` entry per model event (``input_tokens`` ->
  ``prompt_tokens``, ``output_tokens`` -> ``completion_tokens``, the call's working time,
  cache read, temperature, stop reason); calls without recorded usage keep ``None``;
- **provenance**: the eval's task (name, version, file, args), dataset (name, location,
  samples), model (name, args, base URL, generate config), solver plan, scorers,
  revision and packages go into ``config.yaml`` (what changes results), ``provenance.json``
  and ``import.json``, secrets masked.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from reflexion_bench.interop._runfolder import (
    ImportedRun,
    harness_version,
    package_version,
    trial_record,
    write_runs,
)
from reflexion_bench.interop._verdicts import InteropError, VerdictMap

SOURCE = "inspect"
#: The answer-key source of an in-loop scoring by an Inspect solver.
SCORER_IN_LOOP = "solver.scorer_verdict"
_LOG_SUFFIXES = (".eval", ".json")


def _inspect_log() -> Any:
    try:
        import inspect_ai.log as ilog
    except ImportError:
        raise InteropError(
            "the inspect_ai package is not installed: bash scripts/setup.sh --all "
            "(or pip install -e '.[inspect]')"
        ) from None
    return ilog


def log_files(src: Path) -> list[Path]:
    """The Inspect logs of ``src``: the file itself, or every log under a folder.

    A folder is listed with ``list_eval_logs``, which only lists ``.json`` files named as
    Inspect names its logs; a ``.json`` renamed by hand is found too when its header
    reads as an Inspect log (other JSON files, e.g. a bundle's ``listing.json``, are
    left out)."""
    if src.is_file():
        if src.suffix not in _LOG_SUFFIXES:
            raise InteropError(f"{src}: not an Inspect log (expected a .eval or .json file)")
        return [src]
    if not src.is_dir():
        raise InteropError(f"not found: {src} (an Inspect .eval/.json log or a folder of them)")
    ilog = _inspect_log()
    listed = {Path(_local(info.name)).resolve() for info in ilog.list_eval_logs(str(src))}
    for path in src.rglob("*"):
        if path.suffix == ".eval" and path.is_file():
            listed.add(path.resolve())
        elif path.suffix == ".json" and path.is_file() and path.resolve() not in listed:
            try:
                ilog.read_eval_log(str(path), header_only=True)
            except Exception:  # not a log: any JSON file may sit beside the logs
                continue
            listed.add(path.resolve())
    files = sorted(listed)
    if not files:
        raise InteropError(f"no Inspect logs (.eval, .json) under {src}")
    return files


def _local(name: str) -> str:
    return name[len("file://") :] if name.startswith("file://") else name


def read_log(path: Path) -> Any:
    """The whole log (samples and their events), or a one-line error naming the file."""
    ilog = _inspect_log()
    try:
        log = ilog.read_eval_log(str(path), resolve_attachments=True)
    except FileNotFoundError:
        raise InteropError(f"not found: {path}") from None
    except Exception as exc:  # Inspect raises pydantic, zip and JSON errors alike
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise InteropError(
            f"{path}: not a readable Inspect log ({type(exc).__name__}: {first[:200]})"
        ) from None
    if not log.samples:
        raise InteropError(
            f"{path}: the log has no samples (status {log.status}); an eval that did not "
            "finish any sample has nothing to import"
        )
    return log


# --------------------------------------------------------------------------- one sample


def _dump(obj: Any) -> Any:
    """A pydantic object (or anything) as plain JSON data."""
    if obj is None:
        return None
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", exclude_none=True)
    if isinstance(obj, dict):
        return {str(k): _dump(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_dump(v) for v in obj]
    return obj


def _message_text(msg: Any) -> str:
    text = getattr(msg, "text", None)
    if isinstance(text, str):
        out = text
    else:
        content = getattr(msg, "content", "")
        out = content if isinstance(content, str) else json.dumps(_dump(content))
    calls = getattr(msg, "tool_calls", None) or []
    for call in calls:
        out += f"\n[tool call] {call.function}({json.dumps(call.arguments, ensure_ascii=False)})"
    return out.strip()


def _messages(msgs: Iterable[Any]) -> list[dict[str, str]]:
    return [{"role": str(m.role), "content": _message_text(m)} for m in msgs]


def _call(ev: Any) -> dict[str, Any]:
    """A model event as a ``model_calls`` entry of ours."""
    out = ev.output
    usage = getattr(out, "usage", None)
    config = getattr(ev, "config", None)
    working = getattr(ev, "working_time", None)
    return {
        "role": str(getattr(ev, "role", None) or "actor"),
        "model": str(ev.model),
        "prompt_tokens": getattr(usage, "input_tokens", None) if usage else None,
        "completion_tokens": getattr(usage, "output_tokens", None) if usage else None,
        "latency_s": float(working) if working is not None else None,
        "finish_reason": str(out.stop_reason) if getattr(out, "stop_reason", None) else None,
        "cost_usd": getattr(usage, "total_cost", None) if usage else None,
        "cached": getattr(ev, "cache", None) == "read",
        "retries": int(getattr(ev, "retries", None) or 0),
        "error": str(ev.error) if getattr(ev, "error", None) else None,
        "temperature": getattr(config, "temperature", None) if config else None,
        "usage_recorded": usage is not None,
    }


def _segments(events: Sequence[Any]) -> list[tuple[list[Any], list[Any]]]:
    """The sample's events cut into trials at in-loop scorings: ``[(events, scores)]``
    where ``scores`` are the intermediate score events ending the trial (empty for the
    last trial when the model went on after the last in-loop scoring)."""
    segments: list[tuple[list[Any], list[Any]]] = []
    current: list[Any] = []
    scores: list[Any] = []
    for ev in events:
        kind = getattr(ev, "event", None)
        if kind == "score" and getattr(ev, "intermediate", False):
            scores.append(ev)
            continue
        if scores and kind == "model":
            # A model call after in-loop scoring: the next trial begins.
            segments.append((current, scores))
            current, scores = [], []
        current.append(ev)
    if scores:
        segments.append((current, scores))
    elif current or not segments:
        segments.append((current, []))
    return segments


def _model_events(evs: Iterable[Any]) -> list[Any]:
    return [e for e in evs if getattr(e, "event", None) == "model"]


def _submitted(evs: Sequence[Any]) -> str | None:
    """The answer a trial submitted through the ``submit`` tool (its ``answer``
    argument; the last call when there are several), or None without such a call."""
    for ev in reversed(evs):
        if getattr(ev, "event", None) == "tool" and getattr(ev, "function", "") == "submit":
            args = getattr(ev, "arguments", None) or {}
            if "answer" in args:
                return str(args["answer"])
    return None


def _last_reply(evs: Sequence[Any]) -> str | None:
    """The assistant's text of a trial's last model call (Inspect's ``completion``)."""
    models = _model_events(evs)
    if models:
        return str(getattr(models[-1].output, "completion", "") or "")
    return None


def _feedback(next_events: Sequence[Any]) -> str | None:
    """What the loop told the model after a trial: the last user message of the next
    trial's first model call (react's ``incorrect_message``)."""
    models = _model_events(next_events)
    if not models:
        return None
    for msg in reversed(models[0].input):
        if str(msg.role) == "user":
            return _message_text(msg)
        if str(msg.role) == "assistant":
            break
    return None


def _wall(evs: Sequence[Any]) -> float | None:
    times = [getattr(e, "timestamp", None) for e in evs]
    stamps = [t for t in times if t is not None]
    if len(stamps) < 2:
        return None
    return max(0.0, float((max(stamps) - min(stamps)).total_seconds()))


def _hidden(
    scorer: str, score: Any, vmap: VerdictMap, all_scores: dict[str, Any]
) -> dict[str, Any]:
    passed = vmap.verdict(scorer, score.value)
    value = score.value
    return {
        "passed": passed,
        "status": "pass" if passed else "fail",
        "value": float(value) if isinstance(value, int | float) else None,
        "detail": str(getattr(score, "explanation", None) or "")[:2000],
        "extra": {
            "scorer": scorer,
            "score": _dump(value),
            "answer": getattr(score, "answer", None),
            "scores": all_scores,
        },
    }


def sample_records(
    sample: Any,
    *,
    scorer: str,
    vmap: VerdictMap,
    run_id: str,
    benchmark: str,
    strategy: str,
    model: str,
    meta: dict[str, Any],
) -> list[dict[str, Any]]:
    """The trial records of one Inspect sample (see the module docstring)."""
    tid = str(sample.id)
    events = list(sample.events or [])
    segments = _segments(events)
    final_scores = sample.scores or {}
    all_scores = {k: _dump(v.value) for k, v in final_scores.items()}
    if final_scores and scorer not in final_scores:
        raise InteropError(
            f"sample {tid} (epoch {sample.epoch}) has no score {scorer!r} (it has "
            f"{', '.join(final_scores)}); choose one with --scorer"
        )
    error = getattr(sample, "error", None)
    error_text = str(getattr(error, "message", None) or error) if error else None
    recorded = bool(events)
    records = []
    for k, (evs, scores) in enumerate(segments, 1):
        last = k == len(segments)
        models = _model_events(evs)
        missing = ["reflection", "memory_shown"]
        if not recorded:
            missing.append("answer_key_uses")
        trial_score = scores[0].score if scores else None
        hidden: dict[str, Any] | None = None
        if last and scorer in final_scores:
            hidden = _hidden(scorer, final_scores[scorer], vmap, all_scores)
        elif trial_score is not None:
            hidden = _hidden(scorer, trial_score, vmap, {})
            hidden["extra"]["in_loop"] = True
        self_test = None
        if trial_score is not None:
            st_passed = vmap.verdict(scorer, trial_score.value)
            nxt = segments[k][0] if k < len(segments) else []
            self_test = {
                "passed": st_passed,
                "text": _feedback(nxt),
                "details": {
                    "source": "inspect scorer, called by the solver (the answer key)",
                    "score": _dump(trial_score.value),
                    "explanation": getattr(trial_score, "explanation", None),
                },
            }
        # Every trial's candidate is the same kind of text, so the viewer's diffs between
        # trials compare answers: what the trial submitted (the submit tool's argument:
        # react, basic_agent). The assistant's own text is kept beside it: react's
        # last reply reads "tool call for tool submit", and the sample's output that
        # the final scorer read is that text with the answer appended. Without a submit
        # call the answer is the reply itself: the sample's output for the last trial
        # (what the final scorer judged), the trial's last reply before it.
        output = getattr(sample, "output", None)
        completion = output.completion if last and output is not None else None
        reply = _last_reply(evs)
        submitted = _submitted(evs)
        candidate = submitted if submitted is not None else (completion or reply)
        inspect_extra: dict[str, Any] = {
            "candidate_from": "submit" if submitted is not None else "reply",
            "assistant_text": reply,
        }
        if completion is not None:
            inspect_extra["output_completion"] = completion
        calls = [_call(e) for e in models]
        if any(not c["usage_recorded"] for c in calls):
            missing.append("model_calls.usage")
        trajectory = "\n\n".join(
            _message_text(e.output.message) for e in models if getattr(e.output, "message", None)
        )
        if not models and k == 1:
            # No transcript: the conversation as logged on the sample.
            trajectory = "\n\n".join(
                _message_text(m) for m in sample.messages if m.role == "assistant"
            )
        prompt = (
            _messages(models[0].input)
            if models
            else _messages(m for m in sample.messages if m.role in ("system", "user"))[:2]
        )
        rec = trial_record(
            run_id=run_id,
            task_id=tid,
            benchmark=benchmark,
            strategy=strategy,
            model=model,
            trial=k,
            final=last,
            meta=meta,
            missing=missing,
            time=(min(e.timestamp for e in evs).isoformat() if evs else None),
            candidate=candidate,
            trajectory=trajectory or None,
            prompt=prompt or None,
            self_test=self_test,
            hidden=hidden,
            model_calls=calls if recorded else None,
            wall_time_s=(
                float(sample.total_time)
                if len(segments) == 1 and getattr(sample, "total_time", None) is not None
                else _wall(evs)
            ),
            error=error_text if last else None,
            extra={
                "inspect": {
                    "sample_id": sample.id,
                    "epoch": sample.epoch,
                    "target": _dump(sample.target),
                    "limit": _dump(getattr(sample, "limit", None)),
                    **inspect_extra,
                }
            },
        )
        if recorded:
            rec["answer_key_uses"] = {SCORER_IN_LOOP: 1} if scores else {}
        records.append(rec)
    return records


# --------------------------------------------------------------------------- one log


def _strategy(log: Any) -> tuple[str, list[dict[str, Any]]]:
    steps = [_dump(s) for s in (getattr(log.plan, "steps", None) or [])]
    names = [str(s.get("solver")) for s in steps if isinstance(s, dict) and s.get("solver")]
    return ("+".join(names) or "inspect"), steps


def _scorer_names(log: Any) -> list[str]:
    names: list[str] = []
    for sc in getattr(log.eval, "scorers", None) or []:
        names.append(str(sc.name))
    for sc in getattr(getattr(log, "results", None), "scores", None) or []:
        names.append(str(sc.name))
    for s in log.samples or []:
        names += list((s.scores or {}).keys())
    return list(dict.fromkeys(names))


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "log"


def log_runs(
    path: Path, log: Any, *, scorer: str | None, vmap: VerdictMap, prefix: str
) -> tuple[list[ImportedRun], dict[str, Any]]:
    """The run folders (one per epoch) of one log, and its part of the manifest."""
    spec = log.eval
    names = _scorer_names(log)
    if not names:
        raise InteropError(f"{path}: no scorer in the log (its samples were not scored)")
    chosen = scorer or names[0]
    if chosen not in names:
        raise InteropError(
            f"{path}: no scorer {chosen!r} (the log has {', '.join(names)}); fix --scorer"
        )
    strategy, steps = _strategy(log)
    model = str(spec.model)
    benchmark = str(spec.task)
    digest = hashlib.sha1(path.read_bytes()).hexdigest()[:12]
    dataset = _dump(spec.dataset) or {}
    plan_config = _dump(getattr(log.plan, "config", None)) or {}
    config_base: dict[str, Any] = {
        "source": SOURCE,
        "benchmark": benchmark,
        "strategy": strategy,
        "model": model,
        "inspect": {
            "task": benchmark,
            "task_version": _dump(getattr(spec, "task_version", None)),
            "task_args": _dump(getattr(spec, "task_args", None)),
            "dataset": {k: dataset.get(k) for k in ("name", "location", "samples", "shuffled")},
            "model_args": _dump(getattr(spec, "model_args", None)),
            "model_generate_config": _dump(getattr(spec, "model_generate_config", None)),
            "solver": steps,
            "generate_config": plan_config,
            "limits": {
                k: _dump(getattr(spec.config, k, None))
                for k in (
                    "limit",
                    "sample_id",
                    "epochs",
                    "message_limit",
                    "token_limit",
                    "time_limit",
                )
            },
            "scorer": chosen,
        },
        "verdicts": vmap.describe(),
    }
    by_epoch: dict[int, list[Any]] = {}
    for s in log.samples:
        by_epoch.setdefault(int(s.epoch), []).append(s)
    epochs = sorted(by_epoch)
    provenance = _provenance(path, log)
    runs = []
    uses = 0
    multi = 0
    for epoch in epochs:
        meta = {"seed": epoch, "imported_from": str(path), "source": SOURCE, "epoch": epoch}
        records: list[dict[str, Any]] = []
        for s in by_epoch[epoch]:
            recs = sample_records(
                s,
                scorer=chosen,
                vmap=vmap,
                run_id=f"imported-{digest}-e{epoch}",
                benchmark=benchmark,
                strategy=strategy,
                model=model,
                meta=meta,
            )
            uses += sum(sum((r.get("answer_key_uses") or {}).values()) for r in recs)
            multi += int(len(recs) > 1)
            records.extend(recs)
        name = prefix if len(epochs) == 1 else f"{prefix}/epoch-{epoch}".lstrip("/")
        finals = [r for r in records if r["final"]]
        runs.append(
            ImportedRun(
                name=name or ".",
                records=records,
                config={**config_base, "seed": epoch},
                provenance=provenance,
                manifest={
                    "source_file": str(path),
                    "epoch": epoch,
                    "seed": epoch,
                    "tasks": len(finals),
                    "trial_records": len(records),
                    "logged_passed": sum(bool((r["hidden"] or {}).get("passed")) for r in finals),
                },
            )
        )
    part = {
        "file": str(path),
        "status": str(log.status),
        "task": benchmark,
        "model": model,
        "strategy": strategy,
        "scorer": chosen,
        "scorers": names,
        "epochs": epochs,
        "samples": len(log.samples),
        "tasks": len({str(s.id) for s in log.samples}),
        "multi_trial_samples": multi,
        "answer_key_uses": uses,
        "dataset": config_base["inspect"]["dataset"],
        "eval_config": _dump(spec.config),
        "solver": steps,
        "generate_config": plan_config,
        "logged_metrics": _dump(getattr(log, "results", None)),
    }
    return runs, part


def _provenance(path: Path, log: Any) -> dict[str, Any]:
    spec = log.eval
    stats = getattr(log, "stats", None)
    revision = _dump(getattr(spec, "revision", None))
    return {
        "schema": 1,
        "source_format": SOURCE,
        "source_file": str(path),
        "imported_with": {
            "reflexion-bench": harness_version(),
            "inspect_ai": package_version("inspect_ai"),
        },
        "package_version": harness_version(),
        "git": {"commit": revision.get("commit"), "origin": revision.get("origin")}
        if isinstance(revision, dict)
        else None,
        "packages": _dump(getattr(spec, "packages", None)) or {},
        "model": {
            "model": str(spec.model),
            "base_url": getattr(spec, "model_base_url", None),
            "model_args": _dump(getattr(spec, "model_args", None)),
        },
        "task": {
            "task": str(spec.task),
            "task_id": getattr(spec, "task_id", None),
            "task_version": _dump(getattr(spec, "task_version", None)),
            "task_file": getattr(spec, "task_file", None),
            "task_args": _dump(getattr(spec, "task_args", None)),
        },
        "dataset": _dump(spec.dataset),
        "eval_config": _dump(spec.config),
        "eval_id": getattr(spec, "eval_id", None),
        "run_id": getattr(spec, "run_id", None),
        "created": getattr(spec, "created", None),
        "status": str(log.status),
        "start_time": getattr(stats, "started_at", None),
        "end_time": getattr(stats, "completed_at", None),
        "model_usage": _dump(getattr(stats, "model_usage", None)),
        "metadata": _dump(getattr(spec, "metadata", None)),
    }


def import_inspect(
    src: Path,
    out: Path,
    *,
    scorer: str | None = None,
    verdicts: VerdictMap | None = None,
    force: bool = False,
) -> dict[str, Any]:
    """Import one Inspect log or a folder of them into ``out``; the manifest."""
    vmap = verdicts or VerdictMap()
    files = log_files(src)
    runs: list[ImportedRun] = []
    parts = []
    stems = [_safe(p.stem) for p in files]
    for path, stem in zip(files, stems, strict=True):
        log = read_log(path)
        prefix = "" if len(files) == 1 else (stem if stems.count(stem) == 1 else _safe(str(path)))
        got, part = log_runs(path, log, scorer=scorer, vmap=vmap, prefix=prefix)
        runs += got
        parts.append(part)
    if len(runs) == 1:
        runs[0].name = "."
    manifest = {
        "kind": "inspect",
        "source_format": SOURCE,
        "source": str(src),
        "logs": parts,
        "verdicts": vmap.describe(),
        "tasks": sum(p["tasks"] for p in parts),
        "trial_records": sum(len(r.records) for r in runs),
        "answer_key_uses": sum(p["answer_key_uses"] for p in parts),
        "benchmark": ", ".join(dict.fromkeys(p["task"] for p in parts)),
        "model": ", ".join(dict.fromkeys(p["model"] for p in parts)),
        "strategy": ", ".join(dict.fromkeys(p["strategy"] for p in parts)),
        "missing": {
            "all_trials": ["reflection", "memory_shown"],
            "note": (
                "Inspect has no reflection step: feedback between attempts is in self_test.text; "
                "the epoch reducer is not applied (epochs are seeds)"
            ),
        },
    }
    written = write_runs(out, runs, manifest, force=force)
    manifest["run_dirs"] = [str(p) for p in written]
    return manifest

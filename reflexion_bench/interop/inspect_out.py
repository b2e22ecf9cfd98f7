"""A run folder of ours -> an Inspect ``.eval`` log (``inspect view``, Inspect Scout).

Written with ``inspect_ai.log.write_eval_log`` from Inspect's own types, so whatever
reads Inspect logs reads it. The mapping:

- **one sample per task** (``id`` = our task id, epoch 1), its ``input`` the first
  trial's task prompt;
- **the trials as the transcript**: ``messages`` is the conversation trial by trial
  (trial 1's prompt, each trial's reply, the self-test feedback, the reflection, the next
  trial's new prompt text); ``events`` holds one model event per logged model call
  (role, tokens, latency, stop reason: the actor's with its logged prompt and reply, the
  self-test writer's and the reflector's with their replies) and one info event per
  trial with its self-test and hidden verdicts. The hidden verdict of a trial is never
  written as an intermediate score event: in Inspect that means the solver saw it,
  which our clean runs did not;
- **the score**: the submitted (last) trial's hidden verdict as ``C``/``I`` under the
  scorer name ``hidden``, the failing assert as its explanation, and in its metadata the
  first-try verdict, every trial's verdict, the self-test verdicts, the trial count and
  the answer-key uses; a task with no verdict (an imported log that lacks it) gets no
  score, a task that errored gets ``I`` and the sample's ``error``;
- **usage** per model (``ModelUsage``) for each sample and for the eval;
- **metadata**: the harness version, ``config.yaml``, ``provenance.json`` and the
  run's headline metrics under ``eval.metadata["reflexion_bench"]``.

Lost on the way: the prompts of roles other than the actor (our logs keep the actor's
prompt; the self-test writer's and reflector's are rebuilt from templates at run time and
not logged), the answer key itself (hidden tests are not in the log, so ``target`` is
empty), and the trial structure for a re-import (a re-imported export is one trial per
sample: nothing in it is an in-loop scoring).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reflexion_bench.core.calllog import expand_messages
from reflexion_bench.interop._runfolder import harness_version
from reflexion_bench.interop._verdicts import InteropError

SCORER = "hidden"


def _when(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


def _chat(role: str, content: str, **kw: Any) -> Any:
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageUser,
    )

    if role == "system":
        return ChatMessageSystem(content=content, **kw)
    if role == "assistant":
        return ChatMessageAssistant(content=content, **kw)
    return ChatMessageUser(content=content, **kw)


def _usage(calls: Sequence[dict[str, Any]]) -> dict[str, Any]:
    from inspect_ai.model import ModelUsage

    out: dict[str, Any] = {}
    for c in calls:
        name = str(c.get("model") or "unknown")
        p, q = int(c.get("prompt_tokens") or 0), int(c.get("completion_tokens") or 0)
        u = out.setdefault(name, ModelUsage())
        u.input_tokens += p
        u.output_tokens += q
        u.total_tokens += p + q
    return out


def _verdict(rec: dict[str, Any]) -> bool | None:
    from reflexion_bench.analysis.metrics import hidden_verdict

    return hidden_verdict(rec)


def _model_event(call: dict[str, Any], inputs: list[Any], reply: str, when: datetime | None) -> Any:
    from inspect_ai.event import ModelEvent
    from inspect_ai.model import GenerateConfig, ModelOutput, ModelUsage

    p, q = int(call.get("prompt_tokens") or 0), int(call.get("completion_tokens") or 0)
    output = ModelOutput.from_content(model=str(call.get("model") or "unknown"), content=reply)
    output.usage = ModelUsage(input_tokens=p, output_tokens=q, total_tokens=p + q)
    temperature = call.get("temperature")
    kw: dict[str, Any] = {}
    if when is not None:
        kw["timestamp"] = when
    latency = call.get("latency_s")
    if isinstance(latency, int | float):
        kw["working_time"] = float(latency)
    return ModelEvent(
        model=str(call.get("model") or "unknown"),
        role=str(call.get("role") or "actor"),
        input=inputs,
        tools=[],
        tool_choice="none",
        config=GenerateConfig(
            temperature=temperature if isinstance(temperature, int | float) else None
        ),
        output=output,
        cache="read" if call.get("cached") else None,
        **kw,
    )


def _role_reply(role: str, rec: dict[str, Any]) -> str:
    """What a call of ``role`` answered, as far as the trial record keeps it."""
    if role == "actor":
        return str(rec.get("trajectory") or rec.get("candidate") or "")
    if role == "reflector":
        return str(rec.get("reflection") or "")
    if role == "self_test":
        gen = ((rec.get("self_test") or {}).get("details") or {}).get("generated") or {}
        return str(gen.get("raw") or "") if isinstance(gen, dict) else ""
    return ""


def sample_of(task_id: str, trials: list[dict[str, Any]], model: str) -> Any:
    """The Inspect sample of one task's trial records (see the module docstring)."""
    from inspect_ai.event import InfoEvent
    from inspect_ai.log import EvalError, EvalSample
    from inspect_ai.scorer import Score

    messages: list[Any] = []
    events: list[Any] = []
    first_prompt = trials[0].get("prompt") or []
    calls_all: list[dict[str, Any]] = []
    seen_prompt: list[tuple[str, str]] = []
    for rec in trials:
        k = int(rec["trial"])
        when = _when(rec.get("time"))
        prompt = [
            (str(m.get("role", "user")), str(m.get("content", "")))
            for m in rec.get("prompt") or []
            if isinstance(m, dict)
        ]
        new = [m for m in prompt if m not in seen_prompt]
        seen_prompt += new
        if prompt:
            messages += [_chat(role, content) for role, content in new]
        elif k > 1:
            messages.append(_chat("user", f"(trial {k}: the prompt is not in the log)"))
        reply = _role_reply("actor", rec)
        if reply:
            messages.append(_chat("assistant", reply, model=str(rec.get("model") or model)))
        st = rec.get("self_test") or {}
        verdict = _verdict(rec)
        if st.get("text"):
            ok = st.get("passed")
            head = "passed" if ok else ("failed" if ok is not None else "ran")
            messages.append(
                _chat("user", f"[self-test feedback after trial {k}: {head}]\n{st['text']}")
            )
        if rec.get("reflection"):
            messages.append(
                _chat("assistant", f"[reflection after trial {k}]\n{rec['reflection']}")
            )
        calls = list(rec.get("model_calls") or [])
        calls_all += calls
        actor_input = [_chat(r, c) for r, c in prompt]
        requests = expand_messages(calls)
        for call, logged in zip(calls, requests, strict=True):
            role = str(call.get("role") or "actor")
            if logged:
                # Logs since every call is logged in full: each call's own request/reply.
                inputs = [
                    _chat(str(m.get("role", "user")), str(m.get("content", "")))
                    for m in logged
                    if isinstance(m, dict)
                ]
            else:
                inputs = (
                    actor_input
                    if role == "actor" and actor_input
                    else [_chat("user", f"(the {role} prompt is not in reflexion-bench's log)")]
                )
            reply_text = call.get("reply")
            reply = reply_text if isinstance(reply_text, str) else _role_reply(role, rec)
            events.append(_model_event(call, inputs, reply, when))
        stamp: dict[str, Any] = {"timestamp": when} if when is not None else {}
        events.append(
            InfoEvent(
                source="reflexion-bench",
                data={
                    "trial": k,
                    "self_test": None if not st else {"passed": st.get("passed")},
                    "hidden": {
                        "passed": verdict,
                        "status": (rec.get("hidden") or {}).get("status"),
                        "note": "the benchmark's verdict; never shown to the loop",
                    },
                    "answer_key_uses": rec.get("answer_key_uses"),
                    "error": rec.get("error"),
                },
                **stamp,
            )
        )
    last = trials[-1]
    verdicts = [_verdict(r) for r in trials]
    final = verdicts[-1]
    hidden = last.get("hidden") or {}
    scores: dict[str, Any] = {}
    if final is not None or last.get("error"):
        scores[SCORER] = Score(
            value="C" if final else "I",
            answer=str(last.get("candidate") or ""),
            explanation=str(hidden.get("detail") or "") or None,
            metadata={
                "first_try": verdicts[0] if int(trials[0]["trial"]) == 1 else None,
                "per_trial": verdicts,
                "trials": [int(r["trial"]) for r in trials],
                "self_test": [(r.get("self_test") or {}).get("passed") for r in trials],
                "status": hidden.get("status"),
                "errored": bool(last.get("error")),
                "answer_key_uses": [r.get("answer_key_uses") for r in trials],
            },
        )
    prompt_text = next(
        (str(m.get("content")) for m in first_prompt if m.get("role") == "user"), None
    )
    wall = [r.get("wall_time_s") for r in trials]
    error = last.get("error")
    return EvalSample(
        id=task_id,
        epoch=1,
        input=prompt_text or task_id,
        target="",
        messages=messages,
        output=_output(last, model),
        scores=scores or None,
        metadata={
            "benchmark": last.get("benchmark"),
            "strategy": last.get("strategy"),
            "trials": len(trials),
            "answer_key_uses": sum(sum((r.get("answer_key_uses") or {}).values()) for r in trials),
        },
        events=events,
        model_usage=_usage(calls_all),
        total_time=float(sum(w for w in wall if isinstance(w, int | float)))
        if any(isinstance(w, int | float) for w in wall)
        else None,
        error=EvalError(message=str(error), traceback="", traceback_ansi="") if error else None,
    )


def _output(rec: dict[str, Any], model: str) -> Any:
    from inspect_ai.model import ModelOutput

    return ModelOutput.from_content(
        model=str(rec.get("model") or model), content=str(rec.get("candidate") or "")
    )


def _read_yaml(path: Path) -> Any:
    import yaml

    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def build_log(run_dir: Path) -> tuple[Any, dict[str, Any]]:
    """The :class:`inspect_ai.log.EvalLog` of a run folder."""
    try:
        import inspect_ai.log as ilog
    except ImportError:
        raise InteropError(
            "the inspect_ai package is not installed: bash scripts/setup.sh --all "
            "(or pip install -e '.[inspect]')"
        ) from None
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalMetric,
        EvalPlan,
        EvalPlanStep,
        EvalResults,
        EvalScore,
        EvalSpec,
        EvalStats,
    )

    from reflexion_bench.analysis.report import load_summary
    from reflexion_bench.config import redact
    from reflexion_bench.core.runlog import load_run_records

    if not run_dir.is_dir():
        raise InteropError(f"not a run folder: {run_dir} (a folder with log.jsonl)")
    try:
        records = load_run_records(run_dir)
    except FileNotFoundError as exc:
        raise InteropError(str(exc)) from None
    if not records:
        raise InteropError(f"{run_dir}: no finished task in the log (nothing to export)")
    by_task: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_task.setdefault(str(r["task_id"]), []).append(r)
    summary = load_summary(run_dir)
    model = str(summary.get("model") or records[0].get("model") or "unknown")
    bench = str(summary.get("benchmark") or "unknown")
    strategy = str(summary.get("strategy") or "unknown")
    samples = [sample_of(t, trs, model) for t, trs in by_task.items()]
    times = [t for r in records if (t := _when(r.get("time"))) is not None]
    created = (min(times) if times else datetime.now(UTC)).isoformat()
    usage = _usage([c for r in records for c in r.get("model_calls") or []])
    scored = [s for s in samples if s.scores]
    accuracy = sum(s.scores[SCORER].value == "C" for s in scored) / len(scored) if scored else 0.0
    config = _read_yaml(run_dir / "config.yaml")
    provenance = _read_json(run_dir / "provenance.json")
    answer_key = summary.get("answer_key") or {}
    metadata = redact(
        {
            "reflexion_bench": {
                "harness_version": harness_version(),
                "run_dir": run_dir.name,
                "benchmark": bench,
                "strategy": strategy,
                "answer_key": {"label": answer_key.get("label"), "uses": answer_key.get("uses")},
                "headline": {
                    k: summary.get(k)
                    for k in ("n_tasks", "first_try", "final", "fixes", "breaks", "errored_tasks")
                },
                "config": config,
                "provenance": provenance,
                "import": _read_json(run_dir / "import.json"),
            }
        }
    )
    run_id = str(records[0].get("run_id") or run_dir.name)
    spec = EvalSpec(
        run_id=run_id,
        created=created,
        task=bench,
        task_id=run_id,
        task_version=0,
        dataset=EvalDataset(name=bench, samples=len(samples), sample_ids=list(by_task)),
        model=model,
        config=EvalConfig(epochs=1),
        packages={"reflexion-bench": harness_version() or "unknown"},
        metadata=metadata,
    )
    plan = EvalPlan(
        name="reflexion-bench",
        steps=[
            EvalPlanStep(
                solver=strategy, params={"trials_max": int(max(r["trial"] for r in records))}
            )
        ],
    )
    results = EvalResults(
        total_samples=len(samples),
        completed_samples=len(samples),
        scores=[
            EvalScore(
                name=SCORER,
                scorer=SCORER,
                metrics={"accuracy": EvalMetric(name="accuracy", value=accuracy)},
            )
        ],
    )
    stats = EvalStats(
        started_at=created,
        completed_at=(max(times) if times else datetime.now(UTC)).isoformat(),
        model_usage=usage,
    )
    return ilog.EvalLog(
        version=2,
        status="success",
        eval=spec,
        plan=plan,
        results=results,
        stats=stats,
        samples=samples,
    ), {
        "samples": len(samples),
        "trials": len(records),
        "task": bench,
        "model": model,
        "accuracy": accuracy,
    }


def export_inspect(run_dir: Path, out: Path, *, force: bool = False) -> dict[str, Any]:
    """Write ``run_dir`` as the Inspect log ``out`` (``.eval``); a short summary."""
    if out.suffix != ".eval":
        raise InteropError(f"--out {out}: the file must end in .eval (Inspect's log format)")
    if out.exists() and not force:
        raise InteropError(f"{out} exists; choose another --out or pass --force to replace it")
    log, info = build_log(run_dir)  # imports inspect_ai, or says how to install it
    import inspect_ai.log as ilog

    out.parent.mkdir(parents=True, exist_ok=True)
    ilog.write_eval_log(log, str(out), format="eval")
    return info

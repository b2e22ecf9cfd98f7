"""lm-evaluation-harness ``--log_samples`` output -> run folders of ours.

lm-eval writes one ``samples_<task>_<date>.jsonl`` per task (a line per document and
filter: ``doc_id``, ``doc``, ``target``, ``arguments``, ``resps``, ``filtered_resps``,
``filter``, ``metrics`` and each metric's value) beside ``results_<date>.json`` (the
model, its arguments, the seeds, the task configs). The mapping:

- **task id**: ``doc_id`` (the document's index in the task's split), so two models'
  runs of one task pair document by document;
- **verdict**: the task's metric for that document (``--metric``; default the first the
  line lists, e.g. ``acc`` of ``acc, acc_norm``), through the score mapping
  (:mod:`reflexion_bench.interop._verdicts`: 1.0 passes, anything below fails unless
  ``--threshold`` says otherwise); one filter (``--filter`` where the task has several,
  e.g. ``strict-match`` and ``flexible-extract``);
- **one trial per document** (lm-eval does not retry), with the filtered response as the
  candidate, the raw response as the trajectory and the first request's prompt as the
  prompt; nothing reaches the model after it answers, so the run is labelled clean;
- **seeds**: several samples files of the same task, model and configuration (lm-eval
  run again with another ``--seed``, or ``repeats`` split into one file per repeat) are
  the seeds of one configuration, in one sub-folder each; the seed is the run's
  ``random_seed`` from its results file where the files' seeds differ, else the file's
  position (said in ``import.json``);
- **lost**: token counts and timings (lm-eval logs neither per document), the document's
  gold answer beyond ``target``, and every metric but the chosen one's verdict (all
  values are kept in ``hidden.extra.metrics``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
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

SOURCE = "lm-eval"
#: ``samples_<task>_<date_id>.jsonl`` (date_id: ``datetime.isoformat()`` with ``:`` -> ``-``).
_SAMPLES_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<stamp>\d{4}-\d{2}-\d{2}T[\d\-.]+)\.jsonl$")
#: The fields of a samples line that are not metric values.
_BOOKKEEPING = frozenset(
    {
        "doc_id",
        "doc",
        "target",
        "arguments",
        "resps",
        "filtered_resps",
        "filter",
        "metrics",
        "doc_hash",
        "prompt_hash",
        "target_hash",
    }
)
#: Keys of the results file's ``config`` that differ between seeds or do not change
#: results: kept in provenance.json, left out of config.yaml so seeds group as one.
_SEED_KEYS = ("random_seed", "numpy_seed", "torch_seed", "fewshot_seed")
_FREE_KEYS = ("batch_size", "batch_sizes", "device", "use_cache", "bootstrap_iters")


@dataclass
class SamplesFile:
    """One samples file, its rows and the results file beside it (if found)."""

    path: Path
    task: str
    rows: list[dict[str, Any]]
    results: dict[str, Any] | None


def _read_rows(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    try:
        fh = path.open(encoding="utf-8")
    except OSError as exc:
        raise InteropError(f"cannot read {path}: {exc.strerror or exc}") from None
    with fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InteropError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
            if not isinstance(row, dict) or "doc_id" not in row:
                raise InteropError(
                    f"{path}:{lineno}: expected an object with doc_id (is this lm-eval "
                    "--log_samples output, samples_<task>_<date>.jsonl?)"
                )
            rows.append(row)
    if not rows:
        raise InteropError(f"{path}: no samples in the file")
    return rows


def _results_for(path: Path, stamp: str | None) -> dict[str, Any] | None:
    """The ``results_<date>.json`` lm-eval wrote with these samples (same date id)."""
    candidates = [path.with_name(f"results_{stamp}.json")] if stamp else []
    candidates += sorted(path.parent.glob("results_*.json"))
    for cand in candidates:
        if cand.is_file():
            try:
                data = json.loads(cand.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as exc:
                raise InteropError(f"{cand}: unreadable results file ({exc})") from None
            if isinstance(data, dict):
                return data
    return None


def find_samples(sources: Sequence[Path], task: str | None = None) -> list[SamplesFile]:
    """The samples files of ``sources`` (files, or folders searched for samples_*.jsonl)."""
    files: list[Path] = []
    for src in sources:
        if src.is_dir():
            found = sorted(src.rglob("samples_*.jsonl"))
            if not found:
                raise InteropError(
                    f"no samples_*.jsonl under {src} (run lm-eval with --log_samples)"
                )
            files += found
        elif src.is_file():
            files.append(src)
        else:
            raise InteropError(f"not found: {src}")
    out = []
    for path in files:
        m = _SAMPLES_NAME.match(path.name)
        name = task or (m.group("task") if m else None)
        if name is None:
            raise InteropError(
                f"cannot tell the task from the file name {path.name} (lm-eval names it "
                "samples_<task>_<date>.jsonl); pass --task NAME"
            )
        out.append(
            SamplesFile(
                path, name, _read_rows(path), _results_for(path, m.group("stamp") if m else None)
            )
        )
    return out


def _model_of(results: dict[str, Any] | None, override: str | None) -> str:
    """The model's name: the checkpoint named in ``model_args`` (``pretrained=``,
    ``model=``...), else the backend (``hf``, ``vllm``, ``dummy``). lm-eval's own
    ``model_name`` comes from the same arguments and is a random string without them,
    so it would make two runs of one model look like two models."""
    if override:
        return override
    if not results:
        return "unknown"
    cfg = results.get("config") or {}
    args = cfg.get("model_args")
    keys = ("peft", "delta", "pretrained", "model", "path", "engine")
    if isinstance(args, dict):
        for key in keys:
            if args.get(key):
                return str(args[key])
    elif isinstance(args, str):
        for key in keys:
            if f"{key}=" in args:
                return args.split(f"{key}=", 1)[1].split(",", 1)[0]
    return str(cfg.get("model") or "unknown")


def _choose(values: list[str], flag: str, what: str, given: str | None, path: Path) -> str:
    if given is not None:
        if given not in values:
            raise InteropError(
                f"{path}: no {what} {given!r} in the samples (found: {', '.join(values)}); fix {flag}"
            )
        return given
    if len(values) > 1 and what == "filter":
        raise InteropError(
            f"{path}: the samples have {len(values)} filters ({', '.join(values)}); choose one "
            f"with {flag} NAME"
        )
    return values[0]


def _prompt(row: dict[str, Any]) -> list[dict[str, str]] | None:
    args = row.get("arguments")
    first: Any = None
    if isinstance(args, dict) and args:
        gen = next(iter(args.values()))
        first = next(iter(gen.values()), None) if isinstance(gen, dict) else gen
    elif isinstance(args, list) and args:
        first = args[0][0] if isinstance(args[0], list) and args[0] else args[0]
    if first is None:
        return None
    if isinstance(first, str):
        # Chat templates are logged as a JSON list of messages.
        try:
            msgs = json.loads(first)
        except json.JSONDecodeError:
            msgs = None
        if isinstance(msgs, list) and all(isinstance(m, dict) and "role" in m for m in msgs):
            return [{"role": str(m["role"]), "content": str(m.get("content", ""))} for m in msgs]
        return [{"role": "user", "content": first}]
    return [{"role": "user", "content": json.dumps(first, ensure_ascii=False)}]


def _text(value: Any) -> str | None:
    """A response as text: a one-element list's element, else JSON."""
    while isinstance(value, list) and len(value) == 1:
        value = value[0]
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _config_of(sf: SamplesFile, model: str, metric: str, filt: str) -> dict[str, Any]:
    results = sf.results or {}
    cfg = dict(results.get("config") or {})
    for k in (*_SEED_KEYS, *_FREE_KEYS):
        cfg.pop(k, None)
    task_cfg = (results.get("configs") or {}).get(sf.task)
    return {
        "source": SOURCE,
        "benchmark": sf.task,
        "strategy": "lm-eval",
        "model": model,
        "lm_eval": {
            "config": cfg,
            "task_config": task_cfg,
            "n_shot": (results.get("n-shot") or {}).get(sf.task),
            "version": (results.get("versions") or {}).get(sf.task),
            "metric": metric,
            "filter": filt,
        },
    }


def _records(
    sf: SamplesFile,
    *,
    run_id: str,
    model: str,
    metric: str | None,
    filt: str | None,
    verdicts: VerdictMap,
    seed: int,
) -> tuple[list[dict[str, Any]], str, str]:
    filters = list(dict.fromkeys(str(r.get("filter", "none")) for r in sf.rows))
    chosen_filter = _choose(filters, "--filter", "filter", filt, sf.path)
    rows = [r for r in sf.rows if str(r.get("filter", "none")) == chosen_filter]
    listed = rows[0].get("metrics")
    metrics = (
        [str(m) for m in listed]
        if isinstance(listed, list) and listed
        else [k for k in rows[0] if k not in _BOOKKEEPING]
    )
    if not metrics:
        raise InteropError(f"{sf.path}: the samples carry no metric value")
    chosen_metric = _choose(metrics, "--metric", "metric", metric, sf.path)
    meta = {"seed": seed, "imported_from": str(sf.path), "source": SOURCE}
    records = []
    seen: set[str] = set()
    missing = ["model_calls", "wall_time_s", "time", "self_test", "reflection", "memory_shown"]
    for row in rows:
        tid = str(row["doc_id"])
        if tid in seen:
            raise InteropError(
                f"{sf.path}: doc_id {tid} appears twice for filter {chosen_filter!r} (a "
                "concatenation of two runs? import each samples file on its own)"
            )
        seen.add(tid)
        if chosen_metric not in row:
            raise InteropError(
                f"{sf.path}: doc_id {tid} has no value for the metric {chosen_metric!r}"
            )
        value = row[chosen_metric]
        passed = verdicts.verdict(chosen_metric, value)
        values = {k: row[k] for k in metrics if k in row}
        records.append(
            trial_record(
                run_id=run_id,
                task_id=tid,
                benchmark=sf.task,
                strategy="lm-eval",
                model=model,
                trial=1,
                final=True,
                meta=meta,
                missing=missing,
                candidate=_text(row.get("filtered_resps")),
                trajectory=_text(row.get("resps")),
                prompt=_prompt(row),
                hidden={
                    "passed": passed,
                    "status": "pass" if passed else "fail",
                    "value": value if isinstance(value, int | float) else None,
                    "detail": f"{chosen_metric} = {value} (target {str(row.get('target'))[:200]!r})",
                    "extra": {
                        "metric": chosen_metric,
                        "metrics": values,
                        "filter": chosen_filter,
                        "target": row.get("target"),
                    },
                },
                # One pass, nothing fed back to the model: no use of the answer key.
                answer_key_uses={},
                extra={
                    "lm_eval": {
                        "doc_hash": row.get("doc_hash"),
                        "prompt_hash": row.get("prompt_hash"),
                        "target_hash": row.get("target_hash"),
                    }
                },
            )
        )
    return records, chosen_metric, chosen_filter


def import_lm_eval(
    sources: Sequence[Path],
    out: Path,
    *,
    metric: str | None = None,
    filter_name: str | None = None,
    task: str | None = None,
    model: str | None = None,
    verdicts: VerdictMap | None = None,
    force: bool = False,
) -> dict[str, Any]:
    """Import lm-eval samples files (see the module docstring); the manifest."""
    vmap = verdicts or VerdictMap()
    files = find_samples(sources, task)
    prepared = []
    for sf in files:
        mdl = _model_of(sf.results, model)
        digest = hashlib.sha1(sf.path.read_bytes()).hexdigest()[:12]
        prepared.append((sf, mdl, f"imported-{digest}"))
    # Configurations: files of one task and model with the same config (seeds apart).
    configs: dict[str, list[int]] = {}
    built: list[tuple[list[dict[str, Any]], dict[str, Any], str, str]] = []
    for i, (sf, mdl, run_id) in enumerate(prepared):
        records, chosen_metric, chosen_filter = _records(
            sf, run_id=run_id, model=mdl, metric=metric, filt=filter_name, verdicts=vmap, seed=0
        )
        cfg = _config_of(sf, mdl, chosen_metric, chosen_filter)
        key = json.dumps(cfg, sort_keys=True, default=str)
        configs.setdefault(key, []).append(i)
        built.append((records, cfg, chosen_metric, chosen_filter))
    runs: list[ImportedRun] = []
    seed_note: dict[str, str] = {}
    for n_config, members in enumerate(configs.values()):
        logged = [
            ((prepared[i][0].results or {}).get("config") or {}).get("random_seed") for i in members
        ]
        distinct = all(isinstance(s, int) for s in logged) and len(set(logged)) == len(logged)
        for pos, i in enumerate(members, 1):
            sf, mdl, run_id = prepared[i]
            records, cfg, chosen_metric, chosen_filter = built[i]
            seed = int(logged[pos - 1]) if distinct else pos  # type: ignore[arg-type]
            for r in records:
                r["meta"]["seed"] = seed
            label = f"{sf.task}/{_safe(mdl)}"
            if len(configs) > 1:
                label += f"-{n_config + 1}"
            name = f"{label}/seed-{seed}" if len(members) > 1 else label
            seed_note[name] = "random_seed of the results file" if distinct else "file position"
            results = sf.results or {}
            runs.append(
                ImportedRun(
                    name=name,
                    records=records,
                    config={**cfg, "seed": seed},
                    provenance=_provenance(sf, mdl),
                    manifest={
                        "source_file": str(sf.path),
                        "run_id": run_id,
                        "benchmark": sf.task,
                        "model": mdl,
                        "seed": seed,
                        "seed_from": seed_note[name],
                        "metric": chosen_metric,
                        "filter": chosen_filter,
                        "tasks": len(records),
                        "logged_passed": sum(bool(r["hidden"]["passed"]) for r in records),
                        "logged_metric": (results.get("results") or {}).get(sf.task),
                    },
                )
            )
    manifest = {
        "kind": "lm-eval",
        "source_format": SOURCE,
        "sources": [str(s) for s in sources],
        "files": [str(sf.path) for sf in files],
        "configurations": len(configs),
        "verdicts": vmap.describe(),
        "strategy": "lm-eval",
        "benchmark": ", ".join(dict.fromkeys(sf.task for sf in files)),
        "model": ", ".join(dict.fromkeys(m for _, m, _ in prepared)),
        "trial_records": sum(len(r.records) for r in runs),
        "tasks": len({(r.config["benchmark"], t["task_id"]) for r in runs for t in r.records}),
        "missing": {
            "all_trials": ["model_calls", "wall_time_s", "time"],
            "note": "lm-eval logs no tokens or timings per document",
        },
    }
    written = write_runs(out, runs, manifest, force=force)
    manifest["run_dirs"] = [str(p) for p in written]
    manifest["runs"] = [r.manifest | {"run": r.name} for r in runs]
    return manifest


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "model"


def _provenance(sf: SamplesFile, model: str) -> dict[str, Any]:
    results = sf.results or {}
    cfg = results.get("config") or {}
    return {
        "schema": 1,
        "source_format": SOURCE,
        "imported_with": {
            "reflexion-bench": harness_version(),
            "lm-eval": package_version("lm_eval"),
        },
        "lm_eval_version": results.get("lm_eval_version"),
        "git": {"commit": results.get("git_hash")} if results.get("git_hash") else None,
        "model": {
            "model": model,
            "backend": cfg.get("model"),
            "model_args": cfg.get("model_args"),
            "model_source": results.get("model_source"),
            "chat_template_sha": results.get("chat_template_sha"),
            "system_instruction_sha": results.get("system_instruction_sha"),
        },
        "packages": {
            k: results[k]
            for k in ("transformers_version", "pretty_env_info")
            if k in results and k != "pretty_env_info"
        },
        "seeds": {k: cfg.get(k) for k in _SEED_KEYS if k in cfg},
        "task_hashes": (results.get("task_hashes") or {}).get(sf.task),
        "date": results.get("date"),
        "results_file_found": sf.results is not None,
    }

"""Secrets passed through config never reach a file: config.yaml, Hydra's own .hydra/
files, multirun.yaml, sweep folder names and index, provenance.json, W&B's offline run.

Every check reads the files a real ``reflexion-bench run`` wrote (``model=mock``),
byte for byte, so a secret copied anywhere (also into W&B's binary run file) is found.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from reflexion_bench.config import redact, redact_override, redact_text
from tests.analysis.wandb_offline import read_offline_run

ROOT = Path(__file__).resolve().parents[2]
SEARCH = f"hydra.searchpath=[file://{ROOT / 'tests' / 'configs'}]"

# Split so that secret scanners do not flag these fake keys in the source. Each has a
# shape that the old shape-only masking (sk-...) did not know.
GROQ = "gsk_" + "Q7fakeGroqKey0123456789"
BEARER = "Zm9vYmFyYmF6" + "fakeBearer42"
URL_PASSWORD = "urlPass" + "W0rd77x"
QUERY_KEY = "qk" + "FAKE0000key999"
PLAIN = "plain" + "Passphrase2026"  # no known shape: only its key name gives it away
HF = "hf_" + "fakeHuggingFace123456"
SECRETS = (GROQ, BEARER, URL_PASSWORD, QUERY_KEY, PLAIN, HF)

# `++` (add without the check): nothing in a run reads these keys, and a `+key` nothing
# reads is refused at start (issue 32); here they only need to reach the written files.
OVERRIDES = [
    f"++auth.api_key={GROQ}",
    f"++headers.Authorization='Bearer {BEARER}'",
    f"++endpoint='https://user:{URL_PASSWORD}@llm.example.com/v1'",
    f"++query_endpoint='https://llm.example.com/v1?api_key={QUERY_KEY}&x=1'",
    f"++db.password={PLAIN}",
    f"++note='uses {HF} for the tokenizer'",
]


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reflexion_bench.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def leaks(folder: Path) -> list[str]:
    """Every file under ``folder`` (and its own name) holding one of the secrets."""
    found = []
    for path in [folder, *folder.rglob("*")]:
        for secret in SECRETS:
            if secret in str(path):
                found.append(f"{secret} in the path {path}")
        if path.is_file():
            data = path.read_bytes()
            found += [f"{s} in {path}" for s in SECRETS if s.encode() in data]
    return found


def test_redaction_recognises_keys_of_other_shapes() -> None:
    assert redact_text(f"key {GROQ} used") == "key *** used"
    assert redact_text(f"Authorization: Bearer {BEARER}").endswith("***")
    assert BEARER not in redact_text(f"Authorization: Bearer {BEARER}")
    assert redact_text(f"https://user:{URL_PASSWORD}@host/v1") == "https://***@host/v1"
    assert redact_text(f"https://host/v1?api_key={QUERY_KEY}&x=1") == (
        "https://host/v1?api_key=***&x=1"
    )
    assert redact_override(f"model.password='{PLAIN} with spaces'") == "model.password=***"
    # Names of variables and plain settings stay readable.
    assert redact_text("api_key_env=OPENAI_API_KEY max_tokens=512") == (
        "api_key_env=OPENAI_API_KEY max_tokens=512"
    )
    nested = redact({"a": {"client_secret": PLAIN, "url": f"http://u:{URL_PASSWORD}@h"}})
    assert PLAIN not in str(nested) and URL_PASSWORD not in str(nested)
    assert redact({"api_key": "${oc.env:MY_KEY}"}) == {"api_key": "${oc.env:MY_KEY}"}


def test_run_writes_no_secret_anywhere_and_wandb_gets_no_command_line(tmp_path: Path) -> None:
    run = tmp_path / "run"
    env = {
        **os.environ,
        "WANDB_MODE": "offline",
        "WANDB_SILENT": "true",
        "WANDB_DIR": str(tmp_path / "wb"),
        "WANDB_CONFIG_DIR": str(tmp_path / "wbconfig"),
        "WANDB_CACHE_DIR": str(tmp_path / "wbcache"),
    }
    env.pop("WANDB_API_KEY", None)
    out = cli(
        "run",
        SEARCH,
        "env=toy",
        "model=mock",
        "model.responses=[alpha]",
        "model.cycle=true",
        "sandbox=none",
        "strategy=simple",
        "limit=1",
        "logger=wandb",
        "progress=false",
        f"run_dir={run}",
        *OVERRIDES,
        env=env,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert not leaks(run), leaks(run)
    assert not leaks(tmp_path / "wb"), leaks(tmp_path / "wb")
    assert not any(s in out.stdout + out.stderr for s in SECRETS)

    # Masked, not dropped: the keys are still there for a reader to see.
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    assert cfg["auth"]["api_key"] == "***" and cfg["db"]["password"] == "***"
    assert cfg["endpoint"] == "https://***@llm.example.com/v1"
    hydra_cfg = yaml.safe_load((run / ".hydra" / "config.yaml").read_text())
    assert hydra_cfg["auth"]["api_key"] == "***"
    overrides = yaml.safe_load((run / ".hydra" / "overrides.yaml").read_text())
    assert "++auth.api_key=***" in overrides and "++db.password=***" in overrides
    assert "env=toy" in overrides  # the rest of the record is intact
    hydra_yaml = yaml.safe_load((run / ".hydra" / "hydra.yaml").read_text())
    assert "++auth.api_key=***" in hydra_yaml["hydra"]["overrides"]["task"]

    # W&B: the config arrived (masked), the command line and program did not.
    wb = read_offline_run(tmp_path / "wb")
    assert wb["config"]["auth"]["api_key"] == "***"
    # Wired through the CLI: the task was logged as it finished (its own row), and the
    # offline run's folder and the sync command were printed.
    assert [r["tasks_finished"] for r in wb["history"] if "tasks_finished" in r] == [1]
    offline = wb["files"].parent
    assert f"wandb sync {offline}" in out.stderr, out.stderr[-2000:]
    meta = wb["files"] / "wandb-metadata.json"
    if meta.exists():
        recorded = json.loads(meta.read_text())
        assert not recorded.get("args"), recorded


def test_sweep_folder_names_index_and_multirun_yaml_hold_no_secret(tmp_path: Path) -> None:
    out = cli(
        "run",
        "-m",
        SEARCH,
        "env=toy",
        "model=mock",
        "model.responses=[alpha]",
        "model.cycle=true",
        "sandbox=none",
        "strategy=simple",
        "limit=1",
        "seed=0,1",
        f"++auth.api_key={GROQ}",
        f"++db.password={PLAIN}",
        f"paths.results_dir={tmp_path}",
        "progress=false",
    )
    assert out.returncode == 0, out.stderr[-3000:]
    sweep = tmp_path / "sweeps" / "default"
    jobs = sorted(p.parent for p in sweep.glob("*/log.jsonl"))
    assert len(jobs) == 2
    assert not leaks(sweep), leaks(sweep)
    assert not any(s in out.stdout + out.stderr for s in SECRETS)
    assert all("auth.api_key=REDACTED" in j.name for j in jobs)
    index = [json.loads(x) for x in (sweep / "index.jsonl").read_text().splitlines()]
    assert all("++auth.api_key=***" in r["overrides"] for r in index)
    multirun = yaml.safe_load((sweep / "multirun.yaml").read_text())
    assert "++auth.api_key=***" in multirun["hydra"]["overrides"]["task"]


@pytest.mark.parametrize("secret", [GROQ, f"Bearer {BEARER}", f"https://u:{URL_PASSWORD}@h/v1"])
def test_error_messages_mask_keys_of_other_shapes(secret: str) -> None:
    # The path every user-facing error takes (commands/run.py prints redact_text(exc)).
    message = redact_text(f"request to {secret} failed: 401")
    assert all(s not in message for s in SECRETS) and "401" in message

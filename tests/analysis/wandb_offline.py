"""Read back what W&B wrote offline (its ``run-*.wandb`` file), for assertions.

The file is W&B's LevelDB-style record log: a 7-byte header (``:W&B``, magic, version),
then 32 KiB blocks of records with a 7-byte header each (crc32, length, type:
full / first / middle / last), each record a ``wandb_internal_pb2.Record``.
"""

from __future__ import annotations

import json
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

BLOCK = 32768


def _chunks(data: bytes) -> Iterator[bytes]:
    ident, _magic, _version = struct.unpack("<4sHB", data[:7])
    assert ident == b":W&B", f"not a W&B run file (header {ident!r})"
    pos, buf = 7, b""
    while pos + 7 <= len(data):
        space = BLOCK - pos % BLOCK
        if space < 7:
            pos += space
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        if length == 0 and kind == 0:
            pos += space
            continue
        chunk = data[pos + 7 : pos + 7 + length]
        pos += 7 + length
        if kind == 1:
            yield chunk
        elif kind == 2:
            buf = chunk
        elif kind == 3:
            buf += chunk
        elif kind == 4:
            yield buf + chunk
            buf = b""


def read_offline_run(wandb_dir: Path, wait_s: float = 60.0) -> dict[str, Any]:
    """History rows, config, summary and group of the one offline run under ``wandb_dir``.

    W&B's core process writes the file asynchronously, also after ``finish()`` returns;
    wait until its final ``exit`` record is there.
    """
    from wandb.proto import wandb_internal_pb2 as pb

    (path,) = list(wandb_dir.glob("wandb/offline-run-*/run-*.wandb"))
    deadline = time.monotonic() + wait_s
    from google.protobuf.message import DecodeError

    while True:
        kinds = set()
        try:
            for chunk in _chunks(path.read_bytes()):
                rec = pb.Record()
                rec.ParseFromString(chunk)
                kinds.add(rec.WhichOneof("record_type"))
        except DecodeError:
            # Read while W&B's core was mid-write (a record cut at the end of the file,
            # seen in CI with three runs in a row): read again until the exit record.
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
            continue
        if "exit" in kinds or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    history: list[dict[str, Any]] = []
    config: dict[str, Any] = {}
    summary: dict[str, Any] = {}
    group = ""
    for chunk in _chunks(path.read_bytes()):
        rec = pb.Record()
        rec.ParseFromString(chunk)
        kind = rec.WhichOneof("record_type")
        if kind == "history":
            history.append(
                {
                    (i.key or "/".join(i.nested_key)): json.loads(i.value_json)
                    for i in rec.history.item
                }
            )
        elif kind == "run":
            config.update({u.key: json.loads(u.value_json) for u in rec.run.config.update})
            group = rec.run.run_group or group
        elif kind == "config":
            config.update({u.key: json.loads(u.value_json) for u in rec.config.update if u.key})
        elif kind == "summary":
            summary.update({u.key: json.loads(u.value_json) for u in rec.summary.update if u.key})
    return {
        "history": history,
        "config": config,
        "summary": summary,
        "group": group,
        "files": path.parent / "files",
    }

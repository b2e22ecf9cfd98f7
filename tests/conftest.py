"""Shared fixtures: the project root, the shared data folder, and skip helpers."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def project_root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` (read in place, never copied). Skips where it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"needs the shared benchmark data at {SHARED_DATA} (present in CI)")
    return SHARED_DATA

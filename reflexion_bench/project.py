"""The project's folder, for paths given relative to it.

Jupyter starts a notebook's kernel in the notebook's own folder (``notebooks/``), so a
path such as ``results/runs`` read there names ``notebooks/results/runs``, which does not
exist. The notebooks (and any script run from elsewhere) resolve their paths with
:func:`project_file` instead: relative to the project's folder, as every command in the
docs is written.
"""

from __future__ import annotations

import os
from pathlib import Path

from reflexion_bench.config import PROJECT_ROOT

#: Where a run puts ``results/`` (``paths.root_dir``); unset, the project's folder.
ROOT_VARIABLE = "REFLEXION_BENCH_ROOT"


def project_root() -> Path:
    """The project's folder: ``$REFLEXION_BENCH_ROOT`` where set (the runs' ``paths.root_dir``
    then, so results are looked for where they were written), else the checkout this
    package is imported from (the folder holding ``configs/``)."""
    env = os.environ.get(ROOT_VARIABLE)
    return Path(env).expanduser().resolve() if env else PROJECT_ROOT


def project_file(path: str | os.PathLike[str]) -> Path:
    """``path`` made absolute: as given if absolute, else relative to :func:`project_root`
    (never to the working directory)."""
    p = Path(path).expanduser()
    return p if p.is_absolute() else project_root() / p

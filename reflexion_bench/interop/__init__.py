"""Other harnesses' logs in and out: Inspect AI (import and export) and lm-eval (import).

- :func:`import_inspect`: Inspect ``.eval``/``.json`` logs -> run folders of ours
  (:mod:`.inspect_in`);
- :func:`export_inspect`: a run folder -> an Inspect ``.eval`` log that ``inspect view``
  and Inspect Scout read (:mod:`.inspect_out`);
- :func:`import_lm_eval`: lm-evaluation-harness ``--log_samples`` output -> run folders
  (:mod:`.lm_eval`);
- :class:`VerdictMap` / :func:`parse_verdict_options`: how their scores become our
  pass/fail verdict (:mod:`._verdicts`).

``inspect_ai`` is imported only when an Inspect log is read or written (the ``inspect``
extra); the lm-eval importer reads its JSON lines and needs no lm-eval install.
"""

from reflexion_bench.interop._verdicts import (
    DEFAULT_THRESHOLD,
    DEFAULT_VALUES,
    InteropError,
    VerdictMap,
    parse_verdict_options,
)
from reflexion_bench.interop.inspect_in import SCORER_IN_LOOP, import_inspect
from reflexion_bench.interop.inspect_out import export_inspect
from reflexion_bench.interop.lm_eval import import_lm_eval

__all__ = [
    "DEFAULT_THRESHOLD",
    "DEFAULT_VALUES",
    "SCORER_IN_LOOP",
    "InteropError",
    "VerdictMap",
    "export_inspect",
    "import_inspect",
    "import_lm_eval",
    "parse_verdict_options",
]

"""Analysis: everything computed from run logs (never from in-memory run state).

- :mod:`~reflexion_bench.analysis.metrics`: one run's metrics (``summarize``, ``trials_frame``).
- :mod:`~reflexion_bench.analysis.report`: run outputs (summary.json, curve.png, the printed
  table) and multi-run comparisons (``build_comparison``, ``write_comparison``).
- :mod:`~reflexion_bench.analysis.runs`: find, load and group run folders.
- :mod:`~reflexion_bench.analysis.tables`: paper-style tables and their rendering.
- :mod:`~reflexion_bench.analysis.stats`: bootstrap intervals, McNemar, paired bootstrap.
- :mod:`~reflexion_bench.analysis.budget`: spend curves, equal-budget success, best_of_n's n.
- :mod:`~reflexion_bench.analysis.plots`: figures (PNG + PDF, grey-scale safe).
- :mod:`~reflexion_bench.analysis.paper`: the paper's published figures.
- :mod:`~reflexion_bench.analysis.imports`: the paper's own logs -> run folders.

Submodules are imported on use (nothing here), so reading a summary does not load
matplotlib or scipy.
"""

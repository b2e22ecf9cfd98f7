"""Runner: the one trial loop (:mod:`~reflexion_bench.runner.loop`), the run around it
(:mod:`~reflexion_bench.runner.run`: concurrency, resume, provenance), sweeps and the
cost estimate.

Nothing is imported here, so that importing one module of the runner does not load
the others. The run log and the shards it writes are in :mod:`reflexion_bench.core`
(``runner.runlog`` and ``runner.shards`` re-export them): every layer reads them.
"""

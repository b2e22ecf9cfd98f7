"""The supervisor's script cache (``_driver.warm_code``), on every backend, for real.

A trusted job's cacheable script (first line ``CACHE_MARK``: the judge) is compiled
once per worker and its module body run once, in the supervisor; each job forks with
the module built and runs its ``main()``, on a pristine copy. A program's file that
starts with the same line is neither run nor kept there: the supervisor is forked into
every later job, so anything kept in it is readable by the next program.
"""

from __future__ import annotations

import pytest

from reflexion_bench.sandbox._pool import CACHE_MARK
from reflexion_bench.sandbox.base import ExecRequest, Sandbox

#: A cacheable script that reports where its body ran, whether a previous job's change
#: to its module reached this job, and the name it runs under.
WARM_SCRIPT = (
    CACHE_MARK
    + """import os
BODY_PID = os.getpid()
SEEN = []

def main():
    SEEN.append(1)
    print("body_elsewhere", BODY_PID != os.getpid(), "seen", len(SEEN), __name__)

if __name__ == "__main__":
    main()
"""
)

#: A program that looks, through the frames above it, for what the supervisor keeps
#: of cacheable scripts (it runs in a fork of the supervisor; its own code object is
#: never the supervisor's ``_SOURCES``).
PEEK = """import sys
f = sys._getframe()
kept = None
while f is not None:
    if "_SOURCES" in f.f_globals and "warm_code" in f.f_globals:
        kept = sorted(v.splitlines()[1] for v in f.f_globals["_SOURCES"].values())
        break
    f = f.f_back
print("kept", kept)
"""


@pytest.mark.asyncio
async def test_a_trusted_scripts_body_runs_once_and_each_job_gets_a_fresh_copy(
    sandbox: Sandbox,
) -> None:
    req = ExecRequest(argv=("{python}", "warm.py"), files={"warm.py": WARM_SCRIPT}, trusted=True)
    outs = [await sandbox.exec(req) for _ in range(3)]
    assert [r.ok for r in outs] == [True] * 3, [r.stderr for r in outs]
    # The first job already forks after the body ran; no job sees another's append.
    assert [r.stdout.strip() for r in outs] == ["body_elsewhere True seen 1 __main__"] * 3


@pytest.mark.asyncio
async def test_a_programs_file_with_the_mark_is_neither_run_nor_kept_by_the_supervisor(
    sandbox: Sandbox,
) -> None:
    first = await sandbox.exec(
        ExecRequest(argv=("{python}", "warm.py"), files={"warm.py": WARM_SCRIPT})
    )
    assert first.ok, first.stderr
    # Its body ran in its own job, like any program's.
    assert first.stdout.strip() == "body_elsewhere False seen 1 __main__"
    peek = await sandbox.exec(ExecRequest(argv=("{python}", "peek.py"), files={"peek.py": PEEK}))
    assert peek.ok, peek.stderr
    kept = peek.stdout.strip()
    # Where the program can reach the supervisor's cache (an in-process job), it is empty
    # of the first program; elsewhere (a fresh interpreter per program) there is none.
    assert kept in ("kept []", "kept None"), kept

"""The game worker process: hosts several ALFWorld games and answers requests over a pipe.

Run as ``python -m reflexion_bench.environments.alfworld.worker REQ_FD RESP_FD DATA_DIR
CACHE`` by the pool; ``textworld``/``alfworld`` are imported here, never in the parent.
Requests are ``(op, session_id, arg)`` tuples; every answer is ``("ok", payload)`` or
``("error", message)``, so a game's exception never kills the worker. The worker exits
when the parent's end of the pipe closes (parent gone) or on ``shutdown``.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections import OrderedDict
from multiprocessing.connection import Connection
from typing import Any


def _state_payload(state: Any, done: bool) -> tuple[str, bool, bool, list[str]]:
    return (
        str(state.feedback),
        bool(state.won),
        bool(done),
        [str(c) for c in (state.admissible_commands or [])],
    )


def worker_main(conn: Connection, out: Connection, data_dir: str, cache_games: int = 4) -> None:
    """Serve requests read from ``conn``, answering on ``out``, until shutdown or EOF.

    Args:
        conn: The request pipe (read end).
        out: The answer pipe (write end).
        data_dir: The ALFWORLD_DATA root (set before alfworld is imported: without it
            alfworld creates and searches ``~/.cache/alfworld``).
        cache_games: Closed games kept loaded, so that the next trial of the same task
            skips parsing the game file (a reset still re-grounds the PDDL problem).
    """
    os.environ["ALFWORLD_DATA"] = data_dir
    import textworld
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler

    infos = textworld.EnvInfos(won=True, admissible_commands=True)
    sessions: dict[str, Any] = {}
    session_game: dict[str, str] = {}
    idle: OrderedDict[str, Any] = OrderedDict()

    def open_game(gamefile: str) -> Any:
        env = idle.pop(gamefile, None)
        if env is None:
            env = textworld.start(gamefile, infos, wrappers=[AlfredDemangler(shuffle=False)])
        return env

    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            break
        op, sid, arg = msg
        try:
            payload: Any = None
            if op == "open":
                env = open_game(str(arg))
                state = env.reset()
                sessions[sid] = env
                session_game[sid] = str(arg)
                payload = _state_payload(state, False)
            elif op == "step":
                if sid not in sessions:
                    raise KeyError(f"no open game session {sid!r} in this worker")
                state, _score, done = sessions[sid].step(str(arg))
                payload = _state_payload(state, done)
            elif op == "close":
                env = sessions.pop(sid, None)
                game = session_game.pop(sid, None)
                if env is not None and game is not None:
                    if cache_games > 0:
                        old = idle.pop(game, None)
                        if old is not None:
                            old.close()
                        idle[game] = env
                        while len(idle) > cache_games:
                            idle.popitem(last=False)[1].close()
                    else:
                        env.close()
            elif op == "ping":
                payload = os.getpid()
            elif op == "shutdown":
                out.send(("ok", None))
                break
            else:
                raise ValueError(f"unknown request {op!r}")
            out.send(("ok", payload))
        except Exception as exc:  # a game's failure is answered, never fatal to the worker
            try:
                out.send(("error", f"{type(exc).__name__}: {exc}"))
            except (EOFError, OSError):
                break
    for env in [*sessions.values(), *idle.values()]:
        with contextlib.suppress(Exception):  # closing at exit must not mask the exit
            env.close()


def main(argv: list[str]) -> int:
    req_fd, resp_fd, data_dir, cache = argv
    worker_main(
        Connection(int(req_fd), writable=False),
        Connection(int(resp_fd), readable=False),
        data_dir,
        int(cache),
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

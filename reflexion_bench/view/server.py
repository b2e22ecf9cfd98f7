"""The viewer's local server: stdlib ``http.server``, bound to 127.0.0.1 by default.

A request is answered only when its ``Host`` header names the server as its user opened
it: ``127.0.0.1:<port>``, ``localhost:<port>``, the bound host, or an ``--allowed-host``
(a forwarded port: ``ssh -L 9000:127.0.0.1:8765`` opens it as ``localhost:9000``). Any
other Host, as a DNS-rebinding page sends, gets 403.

Routes (GET only):
  /                               the page (run list embedded; everything else fetched)
  /api/index                      the runs (sweep page rows)
  /api/routes                     each run's id and URL name (no log read)
  /api/run/<i>                    a run page: summary, curve, task table (no trial text)
  /api/run/<i>/task?id=<task>     one task's trials, loaded when the task is opened
  /api/task-runs?id=<task>        the ids of the runs that have the task
  /api/run/<i>/search?q=<text>    task ids whose id or text contains <text>
  /api/run/<i>/intervals          the run's 95% intervals (the slow part)
  /api/compare/<i>/<j>            two runs task by task, with the McNemar table

Every request re-checks the run's log (size, mtime), so a refresh during a live run
shows the trials written since. The server has no write route and serves no files.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from reflexion_bench.view.data import Catalog, dumps
from reflexion_bench.view.page import served_page

HOST = "127.0.0.1"
log = logging.getLogger(__name__)

_RUN = re.compile(r"^/api/run/(\d+)$")
_TASK = re.compile(r"^/api/run/(\d+)/task$")
_SEARCH = re.compile(r"^/api/run/(\d+)/search$")
_INTERVALS = re.compile(r"^/api/run/(\d+)/intervals$")
_COMPARE = re.compile(r"^/api/compare/(\d+)/(\d+)$")


class _NotFound(Exception):
    pass


def host_allowed(host_header: str, allowed: frozenset[str]) -> bool:
    """Whether a request's ``Host`` is one of ``allowed``: ``name:port`` entries match
    exactly, bare ``name`` entries that name with any port (case-insensitive)."""
    host = host_header.strip().lower()
    if not host:
        return False
    if host in allowed:
        return True
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    return name in allowed


def answered_hosts(bind: str, port: int, extra: Sequence[str] = ()) -> frozenset[str]:
    """The Host values the server answers (see :func:`host_allowed`)."""
    own = {f"127.0.0.1:{port}", f"localhost:{port}"}
    if bind not in ("0.0.0.0", ""):  # a wildcard bind is opened by no such name
        own.add(f"{bind.lower()}:{port}")
    return frozenset(own | {h.strip().lower() for h in extra if h.strip()})


def _handler(catalog: Catalog) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "reflexion-bench-view"

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("view: " + format, *args)

        def _send(self, status: int, body: str, ctype: str) -> None:
            data = body.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(data)

        def _json(self, value: Any, status: int = HTTPStatus.OK) -> None:
            self._send(status, dumps(value), "application/json; charset=utf-8")

        def do_GET(self) -> None:
            # Only pages opened by a name the user chose: another site reaching this port
            # through a rebound DNS name sends its own Host and reads nothing.
            host = (self.headers.get("Host") or "").lower()
            allowed: frozenset[str] = self.server.allowed_hosts  # type: ignore[attr-defined]
            if not host_allowed(host, allowed):
                self._json(
                    {
                        "error": f"unexpected Host {host!r}: open the viewer as one of "
                        f"{sorted(allowed)}, or start it with --allowed-host {host or 'HOST:PORT'}"
                    },
                    HTTPStatus.FORBIDDEN,
                )
                return
            url = urlsplit(self.path)
            query = parse_qs(url.query)
            try:
                if url.path in ("/", "/index.html"):
                    self._send(HTTPStatus.OK, served_page(catalog), "text/html; charset=utf-8")
                elif url.path == "/api/index":
                    self._json(catalog.index())
                elif url.path == "/api/routes":
                    self._json({"runs": catalog.routes()})
                elif url.path == "/api/task-runs":
                    task_id = (query.get("id") or [""])[0]
                    self._json({"id": task_id, "runs": catalog.runs_with_task(task_id)})
                elif m := _RUN.match(url.path):
                    self._json(catalog.run_page(int(m.group(1))))
                elif m := _TASK.match(url.path):
                    task_id = (query.get("id") or [""])[0]
                    task = catalog.run(int(m.group(1))).task(task_id)
                    if task is None:
                        raise _NotFound(f"no task {task_id!r} in run {m.group(1)}")
                    self._json(task)
                elif m := _SEARCH.match(url.path):
                    q = (query.get("q") or [""])[0]
                    self._json({"task_ids": catalog.run(int(m.group(1))).search(q)})
                elif m := _INTERVALS.match(url.path):
                    self._json(catalog.intervals(int(m.group(1))))
                elif m := _COMPARE.match(url.path):
                    self._json(catalog.compare(int(m.group(1)), int(m.group(2))))
                else:
                    raise _NotFound(f"no route {url.path}")
            except (BrokenPipeError, ConnectionResetError):
                return  # the browser left before the answer (navigated away): nothing to do
            except (_NotFound, KeyError) as exc:
                self._json({"error": str(exc).strip("'\"")}, HTTPStatus.NOT_FOUND)
            except (OSError, ValueError) as exc:
                # A run folder that vanished or a log being rewritten: say so, keep serving.
                log.warning("view: %s: %s", url.path, exc)
                self._json(
                    {"error": f"{type(exc).__name__}: {exc}"}, HTTPStatus.INTERNAL_SERVER_ERROR
                )

    return Handler


class ViewServer:
    """The server on ``host`` (127.0.0.1 by default; ``port=0``: any free port), in a
    background thread or in the foreground (:meth:`serve_forever`). ``allowed_hosts``:
    further ``Host`` values to answer (``name:port``, or ``name`` for any port)."""

    def __init__(
        self,
        catalog: Catalog,
        port: int = 0,
        host: str = HOST,
        allowed_hosts: Sequence[str] = (),
    ) -> None:
        self.catalog = catalog
        self.host = host
        self.httpd = ThreadingHTTPServer((host, port), _handler(catalog))
        self.httpd.daemon_threads = True
        bound = int(self.httpd.server_address[1])
        # On the server object: the handler class is shared, the server is per instance.
        self.httpd.allowed_hosts = answered_hosts(host, bound, allowed_hosts)  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None

    @property
    def allowed(self) -> frozenset[str]:
        return self.httpd.allowed_hosts  # type: ignore[attr-defined,no-any-return]

    @property
    def url(self) -> str:
        shown = HOST if self.host in ("0.0.0.0", "") else self.host
        return f"http://{shown}:{self.httpd.server_address[1]}/"

    def start(self) -> ViewServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self.httpd.serve_forever()

    def close(self) -> None:
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread.join(timeout=5)
        self.httpd.server_close()

    def __enter__(self) -> ViewServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

"""Headless Chromium for the viewer's browser tests and benchmark (Debian's ``chromium``).

Two ways in: :func:`dump_dom` (``--dump-dom``: the DOM after the page's scripts ran,
for static checks of a file) and :class:`Browser` (the DevTools protocol over a
websocket on 127.0.0.1: navigate, evaluate, click, reload, screenshot). ``--no-sandbox``
because the tests run as root, where Chromium's own sandbox refuses to start.
"""

from __future__ import annotations

import base64
import contextlib
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "chrome")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-background-networking",
    "--disable-component-update",
    "--mute-audio",
)


def find_chromium() -> str | None:
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


def _binary(binary: str | None) -> str:
    found = binary or find_chromium()
    if not found:
        raise FileNotFoundError("no Chromium found (apt-get install chromium)")
    return found


def dump_dom(
    url: str, *, budget_ms: int = 5000, timeout_s: float = 90.0, binary: str | None = None
) -> str:
    """The serialised DOM of ``url`` after its scripts ran (``--virtual-time-budget`` lets
    timers and promises settle before the dump)."""
    with tempfile.TemporaryDirectory(prefix="rb-chromium-") as profile:
        out = subprocess.run(
            [
                _binary(binary),
                *FLAGS,
                f"--user-data-dir={profile}",
                f"--virtual-time-budget={budget_ms}",
                "--dump-dom",
                url,
            ],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    if out.returncode != 0 or not out.stdout.strip():
        raise RuntimeError(
            f"chromium --dump-dom {url} failed ({out.returncode}): {out.stderr[-2000:]}"
        )
    return out.stdout


class CDPError(RuntimeError):
    pass


class Browser:
    """One headless Chromium with one page, driven over the DevTools protocol."""

    def __init__(self, *, width: int = 1280, height: int = 900, binary: str | None = None) -> None:
        self.binary = _binary(binary)
        self.width = width
        self.height = height
        self._profile = tempfile.mkdtemp(prefix="rb-chromium-")
        self._proc: subprocess.Popen[bytes] | None = None
        self._ws: Any = None
        self._id = 0
        self.events: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ lifecycle
    def start(self, timeout_s: float = 30.0) -> Browser:
        from websockets.sync.client import connect

        self._proc = subprocess.Popen(
            [
                self.binary,
                *FLAGS,
                f"--user-data-dir={self._profile}",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",  # any free port, written to DevToolsActivePort
                f"--window-size={self.width},{self.height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port_file = Path(self._profile) / "DevToolsActivePort"
        deadline = time.monotonic() + timeout_s
        while not (port_file.exists() and port_file.read_text().strip()):
            if self._proc.poll() is not None:
                raise CDPError(f"chromium exited with {self._proc.returncode} at start")
            if time.monotonic() > deadline:
                raise CDPError("chromium did not open its DevTools port")
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as res:
            targets = json.loads(res.read())
        page = next(t for t in targets if t.get("type") == "page")
        self._ws = connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=timeout_s)
        self.send("Page.enable")
        self.send("Runtime.enable")
        return self

    def close(self) -> None:
        if self._ws is not None:
            with contextlib.suppress(Exception):  # the browser may already be gone
                self._ws.close()
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ protocol
    def send(
        self, method: str, params: dict[str, Any] | None = None, timeout_s: float = 60.0
    ) -> Any:
        self._id += 1
        msg_id = self._id
        self._ws.send(json.dumps({"id": msg_id, "method": method, "params": params or {}}))
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CDPError(f"{method}: no answer in {timeout_s} s")
            msg = json.loads(self._ws.recv(timeout=left))
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise CDPError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def navigate(self, url: str, *, ready: str | None = None, timeout_s: float = 30.0) -> None:
        """Open ``url``; with ``ready``, wait until ``document.body.dataset.rbReady`` is it."""
        self.send("Page.navigate", {"url": url})
        if ready is not None:
            self.wait_for(
                f"document.body && document.body.dataset.rbReady === {json.dumps(ready)}", timeout_s
            )

    def reload(self) -> None:
        self.send("Page.reload", {"ignoreCache": True})

    def evaluate(self, expression: str, *, await_promise: bool = False) -> Any:
        res = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": await_promise},
        )
        if "exceptionDetails" in res:
            raise CDPError(f"{expression}: {res['exceptionDetails']}")
        return res.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout_s: float = 30.0) -> Any:
        """Poll ``expression`` until it is truthy; return its value."""
        deadline = time.monotonic() + timeout_s
        last: Any = None
        while time.monotonic() < deadline:
            try:
                last = self.evaluate(expression)
            except CDPError:
                last = None  # a page still loading: its globals are not there yet
            if last:
                return last
            time.sleep(0.02)
        raise CDPError(f"timed out waiting for {expression!r} (last value {last!r})")

    def text(self, selector: str) -> str:
        """The text of the first element matching ``selector`` ('' if none)."""
        sel = json.dumps(selector)
        return str(self.evaluate(f"(document.querySelector({sel}) || {{}}).textContent || ''"))

    def texts(self, selector: str) -> list[str]:
        sel = json.dumps(selector)
        out = self.evaluate(f"[...document.querySelectorAll({sel})].map(e => e.textContent)")
        return [str(x) for x in out or []]

    def click(self, selector: str) -> None:
        sel = json.dumps(selector)
        if not self.evaluate(
            f"(() => {{ const e = document.querySelector({sel}); if (e) e.click(); return !!e; }})()"
        ):
            raise CDPError(f"nothing to click at {selector}")

    def screenshot(self, path: Path, *, full_page: bool = True) -> Path:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            size = self.evaluate(
                "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
            )
            params["clip"] = {
                "x": 0,
                "y": 0,
                "width": size[0],
                "height": min(size[1], 6000),
                "scale": 1,
            }
            params["captureBeyondViewport"] = True
        data = self.send("Page.captureScreenshot", params)["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

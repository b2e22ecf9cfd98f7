"""A pool of OpenAI-compatible servers of one model, used as one client.

``model=openai_pool model.base_urls=[http://a:8000/v1,http://b:8000/v1,...]`` sends each
call to the endpoint with the fewest calls in flight (each within ``max_connections``)
and moves a call that fails there (connection refused or dropped, timeout, 5xx) to
another endpoint without spending one of the layer's retries. A failed endpoint is
marked dead for ``endpoint_cooldown_s``; after that one probe call may use it again, and
it is alive once that call succeeds (while every endpoint is dead, calls probe without
waiting for the cooldowns). Rate limits (429) and bad requests are not the
endpoint's fault: they go to the model layer as from a single server.

At start each endpoint is asked ``GET /v1/models``: one that does not answer is marked
dead (not an error, unless none answers), and endpoints that report different models
are refused unless ``model.allow_mixed_pool=true``. The pool's identity (the response
cache key) is provider + ``model.name`` + the served model id (+ request settings), not
the list of URLs: a pool of 8 servers and a pool of 3 servers of one model, on this
machine or another, share cache entries. The URLs are recorded in provenance
(``endpoints``, not keyed) and each call's URL in its ``model_calls`` entry
(``endpoint``; ``endpoint_failovers`` lists the endpoints that failed it first).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.types import GenerateConfig, Message, ModelOutput
from reflexion_bench.models._http import TRANSIENT_STATUSES, scrub
from reflexion_bench.models.base import ModelClient, ModelError, TransientModelError
from reflexion_bench.models.identity import public_settings, public_url
from reflexion_bench.models.openai import OpenAIChatClient, read_api_key

log = logging.getLogger(__name__)

#: Failures that say the endpoint, not the request, is the problem: move the call on.
#: 429 (and 408/409/425) are excluded: a busy server is alive, the layer waits and retries.
FAILOVER_KINDS = frozenset(
    {"timeout", "connection"} | {str(s) for s in TRANSIENT_STATUSES if s >= 500}
)


class PoolUnavailableError(ModelError):
    """No endpoint of ``model.base_urls`` answers at start."""


@dataclass
class Endpoint:
    """One server of the pool and its bookkeeping (event-loop state: no locks needed)."""

    url: str
    public: str
    client: OpenAIChatClient
    in_flight: int = 0
    dead_until: float | None = None
    """``time.monotonic()`` after which one probe call may try it; None while alive."""
    probing: bool = False
    calls: int = 0
    failures: int = 0
    last_error: str | None = None
    served: dict[str, Any] | None = None
    """What ``GET /v1/models`` said it serves (``id``, ``root`` when reported)."""
    ids: list[str] = field(default_factory=list)

    def usable(self, now: float) -> bool:
        if self.dead_until is None:
            return True
        return now >= self.dead_until and not self.probing

    def state(self) -> dict[str, Any]:
        return {
            "endpoint": self.public,
            "alive": self.dead_until is None,
            "calls": self.calls,
            "failures": self.failures,
            "in_flight": self.in_flight,
            "last_error": self.last_error,
            "served": self.served,
        }


class PooledOpenAIClient(ModelClient):
    """Several OpenAI-compatible servers of one model behind one client.

    Args:
        name: Model name sent to every endpoint.
        base_urls: The endpoints' roots (e.g. ``http://10.0.0.5:8000/v1``), at least one.
        api_key_env: Environment variable holding the key, if the servers want one.
        timeout_s: Per-request timeout on one endpoint; past it the endpoint is marked
            dead and the call moves on (the layer bounds an attempt at ``timeout_s``
            times the number of endpoints, so every endpoint can be tried once).
        max_connections: Calls in flight per endpoint (the layer admits the sum).
        allow_mixed_pool: Pool endpoints that report different models anyway (their
            identity then lists every model seen, so such a pool shares no cache
            entries with a pool of one model).
        endpoint_cooldown_s: How long a failed endpoint is left alone before a probe.
        probe_timeout_s: Timeout of ``GET /v1/models`` at start.
        engine: What the servers run with, as declared (the API reports no engine
            flags), e.g. ``{name: vllm, prefix_caching: true, batch_invariant: true}``:
            recorded in provenance and part of the identity (the cache key).
        max_tokens_param, omit_params, extra_body, provider: As
            :class:`~reflexion_bench.models.openai.OpenAIChatClient`.
    """

    provider = "openai_compatible"

    def __init__(
        self,
        name: str,
        base_urls: Sequence[str] | str,
        api_key_env: str | None = None,
        timeout_s: float = 300.0,
        max_connections: int = 8,
        allow_mixed_pool: bool = False,
        endpoint_cooldown_s: float = 30.0,
        probe_timeout_s: float = 10.0,
        max_tokens_param: str = "max_tokens",
        omit_params: Sequence[str] = (),
        extra_body: dict[str, Any] | None = None,
        provider: str = "openai_compatible",
        engine: dict[str, Any] | None = None,
    ) -> None:
        urls = _url_list(base_urls)
        if engine is not None and not isinstance(engine, dict):
            raise ConfigError(
                "model.engine", engine, "a mapping, e.g. {name: vllm, batch_invariant: true}"
            )
        if not isinstance(max_connections, int) or isinstance(max_connections, bool):
            raise ConfigError("model.max_connections", max_connections, "a positive integer")
        if max_connections < 1:
            raise ConfigError("model.max_connections", max_connections, "a positive integer")
        for key, value in (
            ("model.endpoint_cooldown_s", endpoint_cooldown_s),
            ("model.probe_timeout_s", probe_timeout_s),
        ):
            if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
                raise ConfigError(key, value, "a positive number")
        self.name = name
        self.provider = provider
        self.api_key_env = api_key_env
        self.timeout_s = float(timeout_s)
        self.max_connections = int(max_connections)
        self.allow_mixed_pool = bool(allow_mixed_pool)
        self.cooldown_s = float(endpoint_cooldown_s)
        self.probe_timeout_s = float(probe_timeout_s)
        self.omit_params = tuple(omit_params)
        self.extra_body = dict(extra_body or {})
        # What the servers run with, as declared: the OpenAI API reports no engine flags.
        self.engine = {str(k): v for k, v in (engine or {}).items()}
        self.endpoints = [
            Endpoint(
                url=url,
                public=public_url(url) or url,
                client=OpenAIChatClient(
                    name=name,
                    base_url=url,
                    api_key_env=api_key_env,
                    timeout_s=timeout_s,
                    max_tokens_param=max_tokens_param,
                    omit_params=omit_params,
                    extra_body=extra_body,
                    provider=provider,
                ),
            )
            for url in urls
        ]
        self._surveyed = False
        self._started = False
        self._waiters: list[asyncio.Future[None]] = []

    # -- what the model layer reads ---------------------------------------------------
    @property
    def total_connections(self) -> int:
        """Calls in flight the layer admits for the pool: every endpoint's limit."""
        return self.max_connections * len(self.endpoints)

    @property
    def endpoints_per_attempt(self) -> int:
        """How many endpoints one layer attempt may try (each within ``timeout_s``)."""
        return len(self.endpoints)

    @property
    def endpoint_key(self) -> str:
        """What the layer keys its shared connection limit by: this set of servers."""
        return f"{self.provider}|pool:" + ",".join(sorted(e.public for e in self.endpoints))

    def stats(self) -> list[dict[str, Any]]:
        """Each endpoint's calls, failures, liveness and what it serves."""
        return [e.state() for e in self.endpoints]

    # -- start: ask every endpoint what it serves --------------------------------------
    def _survey(self) -> None:
        """``GET /v1/models`` on every endpoint at once (blocking: run in a thread)."""
        if self._surveyed:
            return
        import openai  # lazily: only when this provider is chosen

        key = read_api_key(self.api_key_env, self.provider) or "not-needed"

        def ask(ep: Endpoint) -> None:
            client = openai.OpenAI(
                api_key=key, base_url=ep.url, max_retries=0, timeout=self.probe_timeout_s
            )
            try:
                cards = list(client.models.list())
            except openai.OpenAIError as exc:
                self._mark_dead(ep, scrub(f"GET /v1/models: {exc}", key), "start")
                return
            finally:
                client.close()
            ep.ids = [str(c.id) for c in cards]
            chosen = next((c for c in cards if c.id == self.name), None)
            if chosen is None and len(cards) == 1:
                chosen = cards[0]  # a server of one model whatever the request names
            if chosen is None:
                ep.served = {"id": None, "ids": sorted(ep.ids)}
                log.warning(
                    "%s serves %s, not model.name=%r: calls there may be refused",
                    ep.public,
                    ep.ids,
                    self.name,
                )
                return
            served: dict[str, Any] = {"id": str(chosen.id)}
            root = getattr(chosen, "root", None)  # vLLM: the weights behind the id
            if isinstance(root, str) and root:
                served["root"] = root
            ep.served = served

        with ThreadPoolExecutor(max_workers=len(self.endpoints)) as executor:
            list(executor.map(ask, self.endpoints))
        self._surveyed = True

    def _served_models(self) -> list[dict[str, Any]]:
        """The distinct models the answering endpoints report; refuses a mixed pool."""
        self._survey()
        seen: dict[str, dict[str, Any]] = {}
        for ep in self.endpoints:
            if ep.served is not None:
                seen.setdefault(repr(sorted(ep.served.items())), ep.served)
        if len(seen) > 1 and not self.allow_mixed_pool:
            report = "; ".join(
                f"{ep.public} serves {ep.served}" for ep in self.endpoints if ep.served
            )
            raise ConfigError(
                "model.base_urls",
                [e.public for e in self.endpoints],
                f"endpoints that serve one model, but they differ: {report}. Point "
                "model.base_urls at servers of one model, or set model.allow_mixed_pool=true "
                "to pool them anyway (one cache identity naming every model seen)",
            )
        return [seen[k] for k in sorted(seen)]

    def identity(self) -> dict[str, Any]:
        """Provider + model + served model id (+ request settings); the endpoints are
        recorded (``endpoints``) but not keyed: the layer leaves them out of the cache key.

        When no endpoint answers (e.g. a read-only replay with the servers gone) the
        served id is taken to be ``model.name``, what a vLLM server reports for it.
        """
        served = self._served_models()
        out: dict[str, Any] = {"provider": self.provider, "model": self.name}
        if len(served) == 1:
            out["served_model"] = served[0].get("id")
            if "root" in served[0]:
                out["served_root"] = served[0]["root"]
            if "ids" in served[0]:
                out["served_ids"] = served[0]["ids"]
        elif served:
            out["served_models"] = served
        else:
            out["served_model"] = self.name
        settings: dict[str, Any] = {}
        if self.omit_params:
            settings["omit_params"] = sorted(self.omit_params)
        if self.extra_body:
            settings["extra_body"] = public_settings(self.extra_body)
        if settings:
            out["request_settings"] = settings
        if self.engine:
            # Keyed: a batch-invariant engine and a batching one do not reply alike.
            out["engine"] = dict(sorted(self.engine.items()))
        out["endpoints"] = [e.public for e in self.endpoints]
        return out

    async def start(self) -> None:
        if self._started:
            return
        await asyncio.to_thread(self._served_models)
        alive = [e for e in self.endpoints if e.dead_until is None]
        if not alive:
            raise PoolUnavailableError(
                "model.base_urls: none of the endpoints answers GET /v1/models ("
                + "; ".join(f"{e.public}: {e.last_error}" for e in self.endpoints)
                + "); start the servers or fix the URLs"
            )
        for ep in self.endpoints:
            await ep.client.start()
        down = [e.public for e in self.endpoints if e.dead_until is not None]
        if down:
            log.warning(
                "model pool: %d of %d endpoints do not answer (%s): marked dead, retried "
                "after %g s",
                len(down),
                len(self.endpoints),
                ", ".join(down),
                self.cooldown_s,
            )
        self._started = True

    async def aclose(self) -> None:
        self._started = False
        for ep in self.endpoints:
            await ep.client.aclose()

    # -- routing -------------------------------------------------------------------
    def _mark_dead(self, ep: Endpoint, error: str, when: str) -> None:
        # Logged once per fall (the other calls in flight there fail too) and per probe.
        newly = ep.dead_until is None or ep.probing
        ep.failures += 1
        ep.probing = False
        ep.last_error = error
        ep.dead_until = time.monotonic() + self.cooldown_s
        if newly:
            log.warning(
                "model pool: %s failed (%s: %s); marked dead, tried again after %g s",
                ep.public,
                when,
                error,
                self.cooldown_s,
            )
        self._wake()

    def _mark_alive(self, ep: Endpoint) -> None:
        if ep.dead_until is not None:
            log.warning("model pool: %s answers again", ep.public)
        ep.dead_until = None
        ep.probing = False

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)

    async def _acquire(self, tried: set[int]) -> Endpoint | None:
        """The usable endpoint (alive, or due a probe) with the fewest calls in flight,
        not yet tried by this call, waiting for a free slot; None when there is none."""
        while True:
            now = time.monotonic()
            untried = [(i, e) for i, e in enumerate(self.endpoints) if i not in tried]
            usable = [(i, e) for i, e in untried if e.usable(now)]
            if not usable and all(e.dead_until is not None for e in self.endpoints):
                # Every endpoint is dead: waiting out the cooldowns would only fail the
                # call; probe the one due soonest (the layer's backoff paces the retries).
                waiting = [(i, e) for i, e in untried if not e.probing]
                usable = sorted(waiting, key=lambda p: p[1].dead_until or 0.0)[:1]
            if not usable:
                return None
            free = [(i, e) for i, e in usable if e.in_flight < self.max_connections]
            if free:
                # Fewest in flight; among equals the one that served least (spreads a
                # cold start over every endpoint instead of the first one).
                _, ep = min(free, key=lambda p: (p[1].in_flight, p[1].calls, p[0]))
                if ep.dead_until is not None:
                    ep.probing = True  # one probe call at a time on a dead endpoint
                ep.in_flight += 1
                ep.calls += 1
                return ep
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(fut)
            # Woken by a finished call or a state change; at the latest when the next
            # cooldown ends (a dead endpoint may become due a probe).
            dues = [e.dead_until for e in self.endpoints if e.dead_until is not None]
            wait = max(0.0, min(dues) - now) if dues else None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(fut), wait)

    def _release(self, ep: Endpoint) -> None:
        ep.in_flight -= 1
        self._wake()

    async def generate(self, messages: Sequence[Message], config: GenerateConfig) -> ModelOutput:
        if not self._started:
            await self.start()
        tried: set[int] = set()
        failovers: list[str] = []
        while True:
            ep = await self._acquire(tried)
            if ep is None:
                err = TransientModelError(
                    "model pool: no endpoint can take the call ("
                    + "; ".join(
                        f"{e.public}: {'alive' if e.dead_until is None else e.last_error}"
                        for e in self.endpoints
                    )
                    + ")",
                    kind="pool_down",
                )
                err.endpoint_failovers = failovers or None  # type: ignore[attr-defined]
                raise err
            try:
                out = await ep.client.generate(messages, config)
            except TransientModelError as exc:
                if exc.kind not in FAILOVER_KINDS:
                    if ep.probing:
                        self._mark_alive(ep)  # it answered (busy, but alive)
                    exc.endpoint_failovers = failovers or None  # type: ignore[attr-defined]
                    raise
                self._mark_dead(ep, f"{exc.kind}: {exc}", "call")
                failovers.append(f"{ep.public}: {exc.kind}")
                tried.add(self.endpoints.index(ep))
                continue
            except ModelError as exc:
                # The server answered (a bad request, an unknown model): it is alive,
                # and another endpoint would give the same answer.
                if ep.probing:
                    self._mark_alive(ep)
                exc.endpoint_failovers = failovers or None  # type: ignore[attr-defined]
                raise
            except BaseException:
                # Cancelled (the layer's timeout, the run stopping): not the endpoint's
                # fault; a probe that did not finish leaves the endpoint due another.
                ep.probing = False
                raise
            finally:
                self._release(ep)
            self._mark_alive(ep)
            out.endpoint = ep.public
            out.endpoint_failovers = failovers or None
            return out


def _url_list(base_urls: Sequence[str] | str) -> list[str]:
    """The configured URLs (a list, or one comma-separated string), each once."""
    raw = base_urls.split(",") if isinstance(base_urls, str) else list(base_urls or [])
    urls = [str(u).strip() for u in raw]
    if not urls or not all(urls):
        raise ConfigError(
            "model.base_urls", base_urls, "a non-empty list of endpoint URLs (http://host:port/v1)"
        )
    seen: set[str] = set()
    for url in urls:
        pub = public_url(url) or url
        if pub in seen:
            raise ConfigError("model.base_urls", urls, f"each endpoint once ({pub} is repeated)")
        seen.add(pub)
    return urls

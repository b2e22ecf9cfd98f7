"""The model layer: what wraps every client between the roles and the provider.

:class:`ModelLayer` adds, around any :class:`~reflexion_bench.models.base.ModelClient`:

- bounded concurrency: ``max_connections`` calls in flight per provider endpoint,
  shared by every client of that provider in the process (one pool per event loop);
  optional requests- and tokens-per-minute limits (``aiolimiter``), shared the same way;
- retries with ``tenacity`` on transient failures (429, overload, 5xx, timeouts, dropped
  connections): exponential backoff with jitter, ``Retry-After`` honoured, a bounded
  number of attempts, the count returned in ``ModelOutput.retries``;
- a per-call timeout (``asyncio.wait_for``) whatever the client does;
- the response cache (:mod:`reflexion_bench.models.cache`), which doubles as replay,
  keyed on the client's :meth:`~reflexion_bench.models.base.ModelClient.identity`;
- accounting (tokens, latency, cost from a price table) and run budgets
  (``max_cost_usd``, ``max_tokens_budget``) raising :class:`BudgetExceeded`. A replayed
  call reports what its live call spent ("as run live"); the budgets count only what
  this run paid ("paid now": live calls), see :class:`Usage`;
- stop sequences enforced on the text of every provider.

Configs build it with :func:`build_layered_model`, which takes the client's options and
the layer's side by side, so a user sets ``model.name=...`` and ``model.max_connections=...``
alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import inspect
import logging
import math
import random
import time
import weakref
from collections import Counter, deque
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential_jitter,
)

from reflexion_bench.config import redact_text
from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.types import GenerateConfig, Message, ModelOutput, SentParams
from reflexion_bench.models.base import (
    BudgetExceeded,
    CacheMissError,
    ModelClient,
    ModelError,
    TransientModelError,
)
from reflexion_bench.models.cache import CACHE_MODES, ResponseCache, request_key
from reflexion_bench.models.formatting import truncate_at_stop
from reflexion_bench.models.identity import public_url

log = logging.getLogger(__name__)

_DEFAULT_SAMPLE_INDEX = GenerateConfig().sample_index


# --------------------------------------------------------------------------- prices


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1e6


def parse_prices(prices: Mapping[str, Any] | None) -> dict[str, Price]:
    """``{model: {input: usd_per_mtok, output: usd_per_mtok}}`` -> prices; errors name the key."""
    out: dict[str, Price] = {}
    for model, entry in (prices or {}).items():
        key = f"model.prices.{model}"
        if not isinstance(entry, Mapping) or set(entry) != {"input", "output"}:
            raise ConfigError(
                key, entry, "a mapping {input: USD per 1M tokens, output: USD per 1M tokens}"
            )
        try:
            price = Price(float(entry["input"]), float(entry["output"]))
        except (TypeError, ValueError):
            raise ConfigError(key, entry, "numbers (USD per 1M tokens)") from None
        if price.input < 0 or price.output < 0:
            raise ConfigError(key, entry, "non-negative prices")
        out[str(model)] = price
    return out


def lookup_price(prices: Mapping[str, Price], model: str) -> Price | None:
    """Exact match, else the longest table entry that prefixes ``model`` (dated snapshots)."""
    if model in prices:
        return prices[model]
    matches = [k for k in prices if model.startswith(k)]
    return prices[max(matches, key=len)] if matches else None


# --------------------------------------------------------------------------- usage


@dataclass
class Usage:
    """Running totals of one layer.

    ``prompt_tokens``, ``completion_tokens``, ``cost_usd`` and ``latency_s`` are *paid
    now*: live calls only, what ``max_cost_usd`` and ``max_tokens_budget`` count. The
    ``replayed_*`` fields are what the cache hits' live calls spent when recorded;
    :meth:`as_run_live` adds both: what the run would have spent without the cache.
    """

    calls: int = 0
    live_calls: int = 0
    cached_calls: int = 0
    failed_calls: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    replayed_prompt_tokens: int = 0
    replayed_completion_tokens: int = 0
    replayed_cost_usd: float = 0.0
    replayed_latency_s: float = 0.0

    @property
    def tokens(self) -> int:
        """Tokens paid now (live calls)."""
        return self.prompt_tokens + self.completion_tokens

    def paid_now(self) -> dict[str, Any]:
        return {
            "calls": self.live_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "tokens": self.tokens,
            "cost_usd": self.cost_usd,
            "latency_s": self.latency_s,
        }

    def as_run_live(self) -> dict[str, Any]:
        pt = self.prompt_tokens + self.replayed_prompt_tokens
        ct = self.completion_tokens + self.replayed_completion_tokens
        return {
            "calls": self.live_calls + self.cached_calls,
            "prompt_tokens": pt,
            "completion_tokens": ct,
            "tokens": pt + ct,
            "cost_usd": self.cost_usd + self.replayed_cost_usd,
            "latency_s": self.latency_s + self.replayed_latency_s,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "tokens": self.tokens,
            "paid_now": self.paid_now(),
            "as_run_live": self.as_run_live(),
        }


# --------------------------------------------------------------------------- shared limits


class ConnectionPool:
    """A semaphore shared by every layer of one provider endpoint in the process.

    Its size is the smallest ``max_connections`` among the layers using it (a provider's
    limit belongs to the account, so the strictest client wins); a closed or collected
    layer stops counting, so a later run in the same process gets its own setting.
    """

    def __init__(self) -> None:
        self._owners: weakref.WeakKeyDictionary[object, int] = weakref.WeakKeyDictionary()
        self._waiters: deque[asyncio.Future[None]] = deque()
        self.in_use = 0

    @property
    def limit(self) -> int:
        return min(self._owners.values(), default=1)

    def join(self, owner: object, max_connections: int) -> None:
        if self._owners.get(owner) != max_connections:
            self._owners[owner] = max_connections
            self._wake()

    def leave(self, owner: object) -> None:
        if self._owners.pop(owner, None) is not None:
            self._wake()

    async def acquire(self) -> None:
        while self.in_use >= self.limit:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(fut)
            try:
                await fut
            except asyncio.CancelledError:
                if fut.done() and not fut.cancelled():
                    self._wake()  # we were handed a slot we will not use: pass it on
                else:
                    with contextlib.suppress(ValueError):
                        self._waiters.remove(fut)
                raise
        self.in_use += 1

    def release(self) -> None:
        self.in_use -= 1
        self._wake()

    def _wake(self) -> None:
        free = self.limit - self.in_use
        while free > 0 and self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(None)
                free -= 1


@dataclass
class _Shared:
    """Per event loop: asyncio primitives belong to a loop, and a test suite or a sweep
    may run several loops in one process."""

    pools: dict[str, ConnectionPool] = field(default_factory=dict)
    limiters: dict[tuple[str, str, float, float], Any] = field(default_factory=dict)


_SHARED: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Shared] = weakref.WeakKeyDictionary()


def _shared() -> _Shared:
    return _SHARED.setdefault(asyncio.get_running_loop(), _Shared())


def connection_pool(endpoint: str) -> ConnectionPool:
    """The process-wide (per event loop) connection pool of a provider endpoint."""
    pools = _shared().pools
    if endpoint not in pools:
        pools[endpoint] = ConnectionPool()
    return pools[endpoint]


def rate_limiter(endpoint: str, kind: str, rate: float, window_s: float) -> Any:
    """A shared ``aiolimiter.AsyncLimiter`` of ``rate`` per ``window_s`` (requests or tokens)."""
    from aiolimiter import AsyncLimiter

    limiters = _shared().limiters
    key = (endpoint, kind, float(rate), float(window_s))
    if key not in limiters:
        limiters[key] = AsyncLimiter(rate, window_s)
    return limiters[key]


# --------------------------------------------------------------------------- the layer


class ModelLayer(ModelClient):
    """Concurrency limits, retries, timeout, cache/replay, accounting and budgets around a client.

    Args:
        client: The provider client to wrap.
        max_connections: Calls in flight at once for this provider endpoint, shared by
            every client of that provider in the process.
        rpm: Optional requests-per-minute limit (shared likewise).
        tpm: Optional tokens-per-minute limit (prompt estimate + ``max_tokens``).
        rate_window_s: The window ``rpm``/``tpm`` count over (60 s; shorter in tests).
        retries: Retries after the first attempt for transient failures.
        timeout_s: Per-attempt timeout; the call's ``GenerateConfig.timeout_s`` also
            applies (the smaller wins).
        backoff_s: First backoff wait; doubles per retry, with jitter.
        max_backoff_s: Cap of one backoff wait.
        max_retry_after_s: Cap of a server's ``Retry-After`` (a longer one is capped).
        cache: ``read_write`` (replay hits, record misses), ``read_only`` (replay only: a
            miss is an error and the client is never started), or ``off``.
        cache_path: SQLite file of the cache.
        cache_sampled: Also cache calls at temperature > 0 that carry no explicit
            ``sample_index`` (by default they are always live).
        prices: ``{model: {input: ..., output: ...}}`` in USD per million tokens.
        prices_date: When the table's list prices were read (configs/prices/default.yaml);
            recorded with the config and printed by ``run --estimate``.
        max_cost_usd: Budget in USD of live calls; beyond it calls raise BudgetExceeded.
        max_tokens_budget: Budget in tokens (prompt + completion) of live calls.
        shared_rpm: Optional requests per ``rate_window_s`` shared by every *process*
            that uses the same ``shared_limit_key`` and ``shared_limit_path`` (a sweep's
            jobs calling one account); see :mod:`reflexion_bench.models.shared_limit`.
        shared_limit_key: What the shared limit is keyed by (default: the endpoint).
        shared_limit_path: SQLite file of the shared limit (default: beside the cache).
    """

    def __init__(
        self,
        client: ModelClient,
        *,
        max_connections: int = 8,
        rpm: float | None = None,
        tpm: float | None = None,
        rate_window_s: float = 60.0,
        retries: int = 4,
        timeout_s: float | None = None,
        backoff_s: float = 1.0,
        max_backoff_s: float = 60.0,
        max_retry_after_s: float = 120.0,
        cache: str | bool = "off",
        cache_path: str | None = None,
        cache_sampled: bool = False,
        prices: Mapping[str, Any] | None = None,
        prices_date: str | None = None,
        max_cost_usd: float | None = None,
        max_tokens_budget: int | None = None,
        shared_rpm: int | None = None,
        shared_limit_key: str | None = None,
        shared_limit_path: str | None = None,
    ) -> None:
        if cache is False:  # YAML 1.1 reads an unquoted `off` as false
            cache = "off"
        if cache not in CACHE_MODES:
            raise ConfigError("model.cache", cache, CACHE_MODES)
        if cache != "off" and not cache_path:
            raise ConfigError("model.cache_path", cache_path, "a file path when model.cache is on")
        _positive("model.max_connections", max_connections, integer=True)
        _non_negative("model.retries", retries, integer=True)
        _positive("model.rate_window_s", rate_window_s)
        for key, value in (("model.rpm", rpm), ("model.tpm", tpm), ("model.timeout_s", timeout_s)):
            if value is not None:
                _positive(key, value)
        if max_cost_usd is not None:
            _non_negative("model.max_cost_usd", max_cost_usd)
        if max_tokens_budget is not None:
            _non_negative("model.max_tokens_budget", max_tokens_budget, integer=True)
        self.shared_limit = None
        if shared_rpm is not None:
            from pathlib import Path

            from reflexion_bench.models.shared_limit import SharedRateLimit

            path = shared_limit_path or str(
                Path(cache_path).with_name("rate_limits.sqlite")
                if cache_path
                else Path.home() / ".cache" / "reflexion-bench" / "rate_limits.sqlite"
            )
            self.shared_limit = SharedRateLimit(
                path,
                # Stored in a file shared by processes: no credentials from the URL.
                key=shared_limit_key
                or f"{client.provider}|{public_url(getattr(client, 'base_url', None)) or ''}",
                rate=int(shared_rpm),
                window_s=float(rate_window_s),
            )
        self.client = client
        self.provider = client.provider
        self.name = client.name
        self.max_connections = int(max_connections)
        self.rpm = rpm
        self.tpm = tpm
        self.rate_window_s = float(rate_window_s)
        self.retries = int(retries)
        self.timeout_s = timeout_s
        self.backoff_s = float(backoff_s)
        self.max_backoff_s = float(max_backoff_s)
        self.max_retry_after_s = float(max_retry_after_s)
        self.cache_mode: str = str(cache)
        self.cache_path = cache_path
        self.cache_sampled = bool(cache_sampled)
        self.prices = parse_prices(prices)
        self.prices_date = None if prices_date is None else str(prices_date)
        self.price = lookup_price(self.prices, client.name)
        if self.price is None and (max_cost_usd is not None or self.prices):
            if max_cost_usd is not None:
                raise ConfigError(
                    "model.prices",
                    sorted(self.prices),
                    f"an entry for model {client.name!r} (needed by model.max_cost_usd)",
                )
            log.warning(
                "no price for model %r in model.prices: its cost is recorded as 0", client.name
            )
        self.max_cost_usd = max_cost_usd
        self.max_tokens_budget = max_tokens_budget
        self.usage = Usage()
        self.retry_reasons: Counter[str] = Counter()
        self._cache: ResponseCache | None = None
        self._identity: dict[str, Any] | None = None
        self._started = False
        self._start_lock: asyncio.Lock | None = None
        self._pool: ConnectionPool | None = None
        self._warned_unsent = False

    # -- lifecycle ---------------------------------------------------------------
    def identity(self) -> dict[str, Any]:
        """The wrapped client's identity (computed once: for local weights it may hash
        the file the first time), which keys the cache; provenance records it."""
        if self._identity is None:
            self._identity = self.client.identity()
        return copy.deepcopy(self._identity)

    async def start(self) -> None:
        if self._identity is None:
            # In a thread: the first look at local weights hashes them (seconds).
            self._identity = await asyncio.to_thread(self.client.identity)
        if self.cache_mode != "off" and self._cache is None:
            assert self.cache_path is not None
            self._cache = ResponseCache(self.cache_path)
        # A read-only replay needs no model at all: no server, no key, no network.
        if self.cache_mode != "read_only" and not self._started:
            await self.client.start()
        self._started = True

    async def aclose(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.leave(self)  # a later layer of this endpoint is not bound by our limit
        try:
            if self._started and self.cache_mode != "read_only":
                await self.client.aclose()
        finally:
            self._started = False
            if self._cache is not None:
                self._cache.close()
                self._cache = None

    async def _ensure_started(self) -> None:
        if self._started:
            return
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if not self._started:
                await self.start()

    # -- the call ------------------------------------------------------------------
    @property
    def unsent_params(self) -> tuple[str, ...]:
        """Sampling fields the client does not send (e.g. Anthropic's temperature)."""
        return tuple(getattr(self.client, "unsent_params", ()))

    def sent_params(self, config: GenerateConfig) -> SentParams:
        # The wrapped provider decides what goes out (its omitted or unsent fields).
        return self.client.sent_params(config)

    def cacheable(self, config: GenerateConfig) -> bool:
        """Greedy calls are cached; samples only with an explicit index or ``cache_sampled``.

        A call whose temperature is not sent is sampled at the provider's default, so it
        is not greedy whatever ``generate.temperature`` says.
        """
        greedy = config.temperature == 0 and "temperature" not in self.unsent_params
        return greedy or self.cache_sampled or config.sample_index != _DEFAULT_SAMPLE_INDEX

    def _warn_unsent(self, config: GenerateConfig) -> None:
        # Once per layer: a requested setting the provider cannot take is not silently
        # dropped; the cache key and provenance record it as not sent.
        if self._warned_unsent:
            return
        self._warned_unsent = True
        dropped = [
            f"{p}={getattr(config, p)}"
            for p in self.unsent_params
            if p in ("temperature", "top_p") or getattr(config, p, None) is not None
        ]
        if dropped:
            log.warning(
                "%s/%s: %s requested but not sent (the provider does not take it: "
                "model.sampling=%s); the provider's default applies, and the cache key and "
                "provenance record it as not sent%s",
                self.provider,
                self.name,
                ", ".join(dropped),
                getattr(self.client, "sampling", "n/a"),
                "; such calls are sampled, so cached only with model.cache_sampled=true or "
                "a sample index"
                if "temperature" in self.unsent_params
                else "",
            )

    async def generate(self, messages: Sequence[Message], config: GenerateConfig) -> ModelOutput:
        await self._ensure_started()
        self.usage.calls += 1
        key: str | None = None
        request: dict[str, Any] = {}
        if self.unsent_params:
            self._warn_unsent(config)
        use_cache = self._cache is not None and self.cacheable(config)
        if use_cache:
            key, request = request_key(
                _keyed(self.identity()), messages, config, self.unsent_params
            )
            assert self._cache is not None
            hit = await self._cache.aget(key)
            if hit is not None:
                self._account_replay(hit)
                return hit
        if self.cache_mode == "read_only":
            self.usage.failed_calls += 1
            why = (
                f"no recorded response for this request (key {key[:16]}...)"
                if key
                else "this call samples at temperature > 0 without a sample_index, so it was "
                "never cached (set model.cache_sampled=true when recording)"
            )
            raise CacheMissError(
                f"model.cache=read_only: {why} in {self.cache_path} "
                f"(model identity {self.identity()}); record it first with "
                "model.cache=read_write, or point model.cache_path at the recording "
                "(entries recorded for another identity, or before the cache was keyed on "
                "model identity, are never served)"
            )
        self._check_budget()
        out = await self._call_with_retries(messages, config)
        if use_cache and key is not None:
            assert self._cache is not None
            await self._cache.aput(key, request, out)
        return out

    def _check_budget(self) -> None:
        u = self.usage
        if self.max_cost_usd is not None and u.cost_usd >= self.max_cost_usd:
            raise BudgetExceeded(
                f"model.max_cost_usd={self.max_cost_usd} reached (spent ${u.cost_usd:.4f} "
                f"on {u.live_calls} calls); raise it to continue"
            )
        if self.max_tokens_budget is not None and u.tokens >= self.max_tokens_budget:
            raise BudgetExceeded(
                f"model.max_tokens_budget={self.max_tokens_budget} reached ({u.tokens} tokens "
                f"on {u.live_calls} calls); raise it to continue"
            )

    @property
    def endpoint(self) -> str:
        """What connection limits are shared by: the provider and its base URL (a pool of
        servers names its own key: its set of URLs)."""
        pooled = getattr(self.client, "endpoint_key", None)
        if isinstance(pooled, str):
            return pooled
        return f"{self.provider}|{public_url(getattr(self.client, 'base_url', None)) or ''}"

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        retry_after = getattr(exc, "retry_after", None)
        if retry_after is not None:
            # A little jitter on top, so calls told the same Retry-After do not all
            # come back in the same instant.
            wait = min(float(retry_after), self.max_retry_after_s)
            return wait + random.uniform(0.0, min(1.0, 0.1 * wait))
        return float(
            wait_exponential_jitter(
                initial=self.backoff_s, max=self.max_backoff_s, jitter=self.backoff_s
            )(state)
        )

    def _before_sleep(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        kind = getattr(exc, "kind", type(exc).__name__)
        self.retry_reasons[str(kind)] += 1
        wait = state.next_action.sleep if state.next_action else 0.0
        log.warning(
            "%s/%s: retry %d/%d in %.2f s after %s",
            self.provider,
            self.name,
            state.attempt_number,
            self.retries,
            wait,
            redact_text(str(exc)),
        )

    async def _call_with_retries(
        self, messages: Sequence[Message], config: GenerateConfig
    ) -> ModelOutput:
        attempts = 0
        kinds: list[str] = []
        try:
            async for attempt in AsyncRetrying(
                stop=stop_after_attempt(self.retries + 1),
                wait=self._wait,
                retry=retry_if_exception_type(TransientModelError),
                before_sleep=self._before_sleep,
                reraise=True,
            ):
                with attempt:
                    attempts += 1
                    try:
                        out = await self._attempt(messages, config)
                    except TransientModelError as exc:
                        kinds.append(exc.kind)
                        raise
        except ModelError as exc:
            self.usage.failed_calls += 1
            self.usage.retries += attempts - 1
            if isinstance(exc, TransientModelError):
                summary = ", ".join(f"{k} x{n}" for k, n in Counter(kinds).items())
                raise ModelError(
                    redact_text(
                        f"{self.provider}/{self.name}: gave up after {attempts} attempts "
                        f"({summary}); last error: {exc}"
                    ),
                    retries=attempts - 1,
                ) from None
            exc.retries = attempts - 1
            raise
        out.retries = attempts - 1
        self._account(out)
        return out

    async def _attempt(self, messages: Sequence[Message], config: GenerateConfig) -> ModelOutput:
        endpoint = self.endpoint
        pool = connection_pool(endpoint)
        pool.join(self, self.max_connections)
        self._pool = pool
        await pool.acquire()
        slot: int | None = None
        try:
            if self.rpm:
                await rate_limiter(endpoint, "rpm", self.rpm, self.rate_window_s).acquire()
            if self.shared_limit is not None:
                slot = await self.shared_limit.acquire()
            if self.tpm:
                estimate = sum(len(m.content) for m in messages) / 4 + config.max_tokens
                limiter = rate_limiter(endpoint, "tpm", self.tpm, self.rate_window_s)
                await limiter.acquire(min(estimate, self.tpm))
            timeout = min(self.timeout_s or math.inf, config.timeout_s)
            # A pool of servers may try each endpoint once in one attempt, each within
            # the timeout; bounding the whole attempt at one timeout would cancel the
            # move to the next endpoint.
            timeout *= int(getattr(self.client, "endpoints_per_attempt", 1))
            started = time.perf_counter()
            try:
                out = await asyncio.wait_for(self.client.generate(messages, config), timeout)
            except TimeoutError:
                raise TransientModelError(
                    f"{self.provider}/{self.name}: no answer within {timeout:g} s", kind="timeout"
                ) from None
            elapsed = time.perf_counter() - started
        finally:
            pool.release()
            if slot is not None and self.shared_limit is not None:
                await asyncio.to_thread(self.shared_limit.release, slot)
        if not out.latency_s:
            out.latency_s = elapsed
        text, stopped = truncate_at_stop(out.text, config.stop)
        if stopped:
            out.text, out.finish_reason = text, "stop"
        # Before the cache and the log see it: one runaway reply of 50 MB would
        # otherwise be stored, replayed and copied into every later prompt.
        out.cap_reply(config.max_reply_chars)
        out.model = out.model or self.name
        return out

    def _account_replay(self, out: ModelOutput) -> None:
        """A replay reports what its live call spent (tokens, latency as recorded; cost at
        this run's price where the model has one, else as recorded) and pays nothing now."""
        if self.price is not None:
            out.cost_usd = self.price.cost(out.prompt_tokens, out.completion_tokens)
        u = self.usage
        u.cached_calls += 1
        u.replayed_prompt_tokens += out.prompt_tokens
        u.replayed_completion_tokens += out.completion_tokens
        u.replayed_cost_usd += out.cost_usd
        u.replayed_latency_s += out.latency_s

    def _account(self, out: ModelOutput) -> None:
        if self.price is not None:
            out.cost_usd = self.price.cost(out.prompt_tokens, out.completion_tokens)
        u = self.usage
        u.live_calls += 1
        u.retries += out.retries
        u.prompt_tokens += out.prompt_tokens
        u.completion_tokens += out.completion_tokens
        u.cost_usd += out.cost_usd
        u.latency_s += out.latency_s

    # -- conveniences ------------------------------------------------------------------
    def __getattr__(self, item: str) -> Any:
        # Delegate the wrapped client's extras (e.g. the mock's `.calls`/`.prompts`), so
        # code written against a bare client keeps working through the layer.
        client = self.__dict__.get("client")
        if client is None or item.startswith("__"):
            raise AttributeError(item)
        return getattr(client, item)


#: Identity fields that are recorded (provenance) but do not key the cache: *where* a
#: model runs (a pool's endpoints), not what answers.
UNKEYED_IDENTITY = ("endpoints",)


def _keyed(identity: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in identity.items() if k not in UNKEYED_IDENTITY}


def _positive(key: str, value: Any, integer: bool = False) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
    if integer:
        ok = ok and float(value).is_integer()
    if not ok:
        raise ConfigError(key, value, "a positive integer" if integer else "a positive number")


def _non_negative(key: str, value: Any, integer: bool = False) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
    if integer:
        ok = ok and float(value).is_integer()
    if not ok:
        raise ConfigError(key, value, "an integer >= 0" if integer else "a number >= 0")


# --------------------------------------------------------------------------- config factory

_LAYER_OPTIONS = frozenset(
    name
    for name in inspect.signature(ModelLayer.__init__).parameters
    if name not in ("self", "client")
)


def _plain(value: Any) -> Any:
    if isinstance(value, DictConfig | ListConfig):
        return OmegaConf.to_container(value, resolve=True)
    return value


def build_layered_model(client_target: str, **options: Any) -> ModelLayer:
    """Build ``client_target`` wrapped in a :class:`ModelLayer`, from one flat config node.

    Each option goes to the layer if it is one of the layer's options, to the client if
    its constructor takes it (``timeout_s`` goes to both); anything else is an error
    naming the key. This keeps ``configs/model/*.yaml`` flat: ``model.name``,
    ``model.base_url`` and ``model.max_connections`` are set the same way.

    Args:
        client_target: Dotted path of the client class (a Hydra ``_target_``-style path).
        **options: Client and layer options.
    """
    from hydra.utils import get_class

    try:
        cls = get_class(client_target)
    except Exception as exc:
        raise ConfigError(
            "model.client_target", client_target, f"an importable class ({exc})"
        ) from None
    if not (isinstance(cls, type) and issubclass(cls, ModelClient)):
        raise ConfigError("model.client_target", client_target, "a ModelClient subclass")
    params = inspect.signature(cls.__init__).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    client_opts: dict[str, Any] = {}
    layer_opts: dict[str, Any] = {}
    for key, raw in options.items():
        value = _plain(raw)
        to_client = key in params or (takes_any and key not in _LAYER_OPTIONS)
        if key in _LAYER_OPTIONS:
            layer_opts[key] = value
        if to_client:
            client_opts[key] = value
        if key not in _LAYER_OPTIONS and not to_client:
            allowed = sorted((set(params) - {"self"}) | _LAYER_OPTIONS)
            raise ConfigError(f"model.{key}", value, "one of " + ", ".join(allowed))
    try:
        client = cls(**client_opts)
    except (TypeError, ValueError) as exc:
        raise ConfigError("model", client_target, redact_text(str(exc))) from None
    from reflexion_bench.models.resources import is_auto

    if is_auto(layer_opts.get("max_connections")):
        # One connection per server slot (the embedded model); a run resolves this in
        # its config first (runner/auto.py), a model built directly here.
        slots = getattr(client, "n_parallel", None)
        if not isinstance(slots, int):
            raise ConfigError(
                "model.max_connections", "auto", "an integer (`auto` is for the embedded model)"
            )
        layer_opts["max_connections"] = slots
    total = getattr(client, "total_connections", None)
    if isinstance(total, int):
        # A pool of servers: model.max_connections is per endpoint, the layer admits all.
        layer_opts["max_connections"] = total
    return ModelLayer(client, **layer_opts)

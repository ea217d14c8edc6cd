"""The synchronous Mnemos client (standard library only)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Generator, Iterator, Optional, TypeVar

from . import _calls as calls
from ._base import ClientBase, describe_method
from ._stream import ReflectEvents, ReflectStreamEvent, read_line, stream_request
from ._wire import Attempts, Call, Done, OpenStream, build_request, exchange, open_stream, parse_retry_after
from .models import Bank, Memory, ReflectResult

if TYPE_CHECKING:
    from typing_extensions import Concatenate, ParamSpec

    from ._wire import Settings

    P = ParamSpec("P")

T = TypeVar("T")

__all__ = ["Mnemos", "parse_retry_after"]


def _blocking(build: "Callable[Concatenate[Settings, P], Call[T]]") -> "Callable[Concatenate[Mnemos, P], T]":
    """Makes a call builder a method that sends the call and returns its result."""

    def method(self: Mnemos, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._run(build(self._settings, *args, **kwargs))

    describe_method(method, build, "{}")
    return method


class Mnemos(ClientBase):
    """Client for a Mnemos engine or gateway.

    ``Mnemos(base_url="http://localhost:8888")`` talks to a self-hosted engine (paths under ``/v1/default``);
    ``Mnemos(base_url="https://gateway.example", api_key="mnm_live_...")`` talks to a gateway as the key's project
    (paths under ``/v1/me``, ``Authorization: Bearer <key>``). ``tenant`` names the path tenant explicitly, for an
    engine with ``MNEMOS_API_AUTH_TOKEN`` set (``api_key`` is then that token).

    ``space`` is the default space of every call that takes one (a call's own ``space`` wins). ``timeout`` bounds
    each attempt's connect and each read, in seconds. Answers 429 and 503 are retried up to ``max_retries`` times,
    waiting what ``Retry-After`` says (seconds or an HTTP date) or else an exponential backoff with jitter; a wait
    longer than ``max_retry_delay`` is not attempted and the error is raised at once. Connection failures are retried
    the same way (every call of this client is idempotent: retain drops exact duplicates server-side). Timeouts are not
    retried. Every failure raises :class:`MnemosError`. :class:`AsyncMnemos` is the same client for ``asyncio``.
    """

    def __enter__(self) -> "Mnemos":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to release (each call opens its own connection); present for ``with`` blocks."""

    def _sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def _run(self, call: "Call[T]") -> T:
        request = build_request(self._settings, call)
        attempts = Attempts(self._settings, call)
        while True:
            step = attempts.settle(exchange(request, self._settings.timeout, self._settings.base_url))
            if isinstance(step, Done):
                return step.value
            self._sleep(step)

    def reflect_stream(self, bank_id: str, query: str,
                       **options: Any) -> Generator[ReflectStreamEvent, None, ReflectResult]:
        """``reflect`` streamed: yields :class:`ReflectDelta` events (``.text``, the answer as the LLM writes it),
        then one :class:`ReflectDone` (``.result``, what ``reflect`` returns; also the generator's return value).
        Takes the same arguments as ``reflect``. A failure once the stream has begun raises the MnemosError of the
        problem the server sent; failures before it are retried as every call's are. Leaving the loop early closes
        the connection, which stops the server's LLM call.

        >>> for event in mnemos.reflect_stream("alice", "What does Alice drink?"):   # doctest: +SKIP
        ...     print(event.text if event.type == "delta" else event.result.citations)
        """
        call = calls.reflect(self._settings, bank_id, query, **options)
        request = stream_request(build_request(self._settings, call))
        attempts = Attempts(self._settings, call)
        timeout, base_url = self._settings.timeout, self._settings.base_url
        while True:
            outcome = open_stream(request, timeout, base_url)
            if isinstance(outcome, OpenStream):
                break
            step = attempts.settle(outcome)
            if isinstance(step, Done):  # only a 2xx answer is done, and it arrives as an OpenStream
                return step.value
            self._sleep(step)
        events = ReflectEvents()
        with outcome.response as response:
            while events.result is None:
                line = read_line(response, base_url, timeout)
                if not line:
                    break
                yield from events.push(line.decode("utf-8"))
        return events.finished()

    retain = _blocking(calls.retain)
    retain_batch = _blocking(calls.retain_batch)
    retain_messages = _blocking(calls.retain_messages)
    recall = _blocking(calls.recall)
    reflect = _blocking(calls.reflect)
    retain_org = _blocking(calls.retain_org)
    recall_org = _blocking(calls.recall_org)
    list_banks = _blocking(calls.list_banks)
    get_bank = _blocking(calls.get_bank)
    put_bank = _blocking(calls.put_bank)
    create_bank = put_bank
    update_bank = _blocking(calls.update_bank)
    delete_bank = _blocking(calls.delete_bank)
    list_memories = _blocking(calls.list_memories)
    get_memory = _blocking(calls.get_memory)
    update_memory = _blocking(calls.update_memory)
    memory_history = _blocking(calls.memory_history)
    list_entities = _blocking(calls.list_entities)
    get_entity = _blocking(calls.get_entity)
    delete_memory = _blocking(calls.delete_memory)
    delete_matching = _blocking(calls.delete_matching)
    clear_memories = _blocking(calls.clear_memories)
    update_memories = _blocking(calls.update_memories)
    get_memories = _blocking(calls.get_memories)
    export_memories = _blocking(calls.export_memories)
    export_text = _blocking(calls.export_text)
    import_memories = _blocking(calls.import_memories)
    operation = _blocking(calls.operation)
    usage = _blocking(calls.usage)
    health = _blocking(calls.health)
    version = _blocking(calls.version)
    request = _blocking(calls.request)

    def iterate_memories(self, bank_id: str, **filters: Any) -> Iterator[Memory]:
        """Every memory :meth:`list_memories` lists with ``filters`` (``limit`` is the page size), newest first, page
        by page through ``next_cursor``: memories added meanwhile do not shift the pages."""
        cursor: Optional[str] = None
        while True:
            page = self.list_memories(bank_id, cursor=cursor, **filters)
            yield from page.items
            cursor = page.next_cursor
            if cursor is None:
                return

    def iterate_banks(self, **filters: Any) -> Iterator[Bank]:
        """Every bank :meth:`list_banks` lists with ``filters``, page by page through ``next_cursor``."""
        cursor: Optional[str] = None
        while True:
            page = self.list_banks(cursor=cursor, **filters)
            yield from page.banks
            cursor = page.next_cursor
            if cursor is None:
                return

"""The asyncio Mnemos client: the same calls, request building, error mapping and retries as :class:`Mnemos`, awaited.

Each attempt's HTTP exchange runs the standard library's blocking urllib in the event loop's default executor (a
worker thread), so the loop never blocks and no third-party HTTP stack is needed; waits between retries are
``asyncio.sleep``. Cancelling the awaiting task ends the call at once; an exchange already under way finishes in its
thread (bounded by ``timeout``) and its answer is dropped."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, AsyncGenerator, AsyncIterator, Callable, Coroutine, Optional, TypeVar

from . import _calls as calls
from ._base import ClientBase, describe_method
from ._stream import ReflectEvents, ReflectStreamEvent, read_line, stream_request
from ._wire import Attempts, Call, Done, OpenStream, build_request, exchange, open_stream
from .models import Bank, Memory

if TYPE_CHECKING:
    from typing_extensions import Concatenate, ParamSpec

    from ._wire import Settings

    P = ParamSpec("P")

T = TypeVar("T")

__all__ = ["AsyncMnemos"]


def _awaitable(
    build: "Callable[Concatenate[Settings, P], Call[T]]",
) -> "Callable[Concatenate[AsyncMnemos, P], Coroutine[Any, Any, T]]":
    """Makes a call builder a coroutine method that sends the call and returns its result."""

    async def method(self: AsyncMnemos, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._run(build(self._settings, *args, **kwargs))

    describe_method(method, build, "Coroutine[Any, Any, {}]")
    return method


class AsyncMnemos(ClientBase):
    """The Mnemos client for ``asyncio``: every method of :class:`Mnemos`, as a coroutine.

    >>> async with AsyncMnemos("http://localhost:8888") as mnemos:           # doctest: +SKIP
    ...     await mnemos.retain("alice", "Alice prefers green tea.")
    ...     hits = await mnemos.recall("alice", "What does Alice drink?")

    The constructor takes the same arguments as :class:`Mnemos`; so do the methods.
    """

    async def __aenter__(self) -> "AsyncMnemos":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Nothing to release (each call opens its own connection); present for ``async with`` blocks."""

    async def _sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    async def _run(self, call: "Call[T]") -> T:
        request = build_request(self._settings, call)
        attempts = Attempts(self._settings, call)
        loop = asyncio.get_running_loop()
        while True:
            outcome = await loop.run_in_executor(
                None, exchange, request, self._settings.timeout, self._settings.base_url)
            step = attempts.settle(outcome)
            if isinstance(step, Done):
                return step.value
            await self._sleep(step)

    async def reflect_stream(self, bank_id: str, query: str,
                             **options: Any) -> AsyncGenerator[ReflectStreamEvent, None]:
        """``reflect`` streamed, for ``async for``: :class:`ReflectDelta` events, then one :class:`ReflectDone`
        with the result. Takes the same arguments as ``reflect``; fails and stops as :meth:`Mnemos.reflect_stream`
        does (each read of the stream runs in a worker thread, as every exchange of this client does)."""
        call = calls.reflect(self._settings, bank_id, query, **options)
        request = stream_request(build_request(self._settings, call))
        attempts = Attempts(self._settings, call)
        timeout, base_url = self._settings.timeout, self._settings.base_url
        loop = asyncio.get_running_loop()
        while True:
            outcome = await loop.run_in_executor(None, open_stream, request, timeout, base_url)
            if isinstance(outcome, OpenStream):
                break
            step = attempts.settle(outcome)
            if isinstance(step, Done):  # only a 2xx answer is done, and it arrives as an OpenStream
                return
            await self._sleep(step)
        events = ReflectEvents()
        try:
            while events.result is None:
                line = await loop.run_in_executor(None, read_line, outcome.response, base_url, timeout)
                if not line:
                    break
                for event in events.push(line.decode("utf-8")):
                    yield event
        finally:
            outcome.response.close()
        events.finished()

    retain = _awaitable(calls.retain)
    retain_batch = _awaitable(calls.retain_batch)
    retain_messages = _awaitable(calls.retain_messages)
    recall = _awaitable(calls.recall)
    reflect = _awaitable(calls.reflect)
    retain_org = _awaitable(calls.retain_org)
    recall_org = _awaitable(calls.recall_org)
    list_banks = _awaitable(calls.list_banks)
    get_bank = _awaitable(calls.get_bank)
    put_bank = _awaitable(calls.put_bank)
    create_bank = put_bank
    update_bank = _awaitable(calls.update_bank)
    delete_bank = _awaitable(calls.delete_bank)
    list_memories = _awaitable(calls.list_memories)
    get_memory = _awaitable(calls.get_memory)
    update_memory = _awaitable(calls.update_memory)
    memory_history = _awaitable(calls.memory_history)
    list_entities = _awaitable(calls.list_entities)
    get_entity = _awaitable(calls.get_entity)
    delete_memory = _awaitable(calls.delete_memory)
    delete_matching = _awaitable(calls.delete_matching)
    clear_memories = _awaitable(calls.clear_memories)
    update_memories = _awaitable(calls.update_memories)
    get_memories = _awaitable(calls.get_memories)
    export_memories = _awaitable(calls.export_memories)
    export_text = _awaitable(calls.export_text)
    import_memories = _awaitable(calls.import_memories)
    operation = _awaitable(calls.operation)
    usage = _awaitable(calls.usage)
    health = _awaitable(calls.health)
    version = _awaitable(calls.version)
    request = _awaitable(calls.request)

    async def iterate_memories(self, bank_id: str, **filters: Any) -> AsyncIterator[Memory]:
        """Every memory :meth:`list_memories` lists with ``filters`` (``limit`` is the page size), newest first, page
        by page through ``next_cursor``: memories added meanwhile do not shift the pages."""
        cursor: Optional[str] = None
        while True:
            page = await self.list_memories(bank_id, cursor=cursor, **filters)
            for memory in page.items:
                yield memory
            cursor = page.next_cursor
            if cursor is None:
                return

    async def iterate_banks(self, **filters: Any) -> AsyncIterator[Bank]:
        """Every bank :meth:`list_banks` lists with ``filters``, page by page through ``next_cursor``."""
        cursor: Optional[str] = None
        while True:
            page = await self.list_banks(cursor=cursor, **filters)
            for bank in page.banks:
                yield bank
            cursor = page.next_cursor
            if cursor is None:
                return

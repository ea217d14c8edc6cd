"""AsyncMnemos against a scripted local HTTP server: the same requests, parsing, errors and retries as the sync
client, awaited; concurrent calls; cancellation; and the two clients' surfaces compared with each other and with the
TypeScript client."""

from __future__ import annotations

import asyncio
import inspect
import os
import re
import threading
import unittest
from typing import Any, List

from helpers import ScriptedServerCase, closed_port_url, problem

from mnemos_client import AsyncMnemos, Memory, Mnemos, MnemosError, RecallResult

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TS_CLIENT = os.path.join(REPO_ROOT, "packages", "client", "src", "client.ts")


class AsyncClientTestCase(ScriptedServerCase, unittest.IsolatedAsyncioTestCase):
    def client(self, **kwargs: Any) -> AsyncMnemos:
        client = AsyncMnemos(self.server.url, **kwargs)

        async def record(seconds: float) -> None:
            self.sleeps.append(seconds)

        client._sleep = record  # type: ignore[method-assign]
        return client


class Requests(AsyncClientTestCase):
    async def test_recall_builds_the_same_request_and_parses_the_answer(self) -> None:
        self.server.answer(200, {"results": [{"id": "m1", "text": "Alice prefers green tea", "score": 0.8}],
                                 "usage": {"tokens": 5}})
        async with self.client(api_key="mnm_live_x", space="acme") as client:
            result = await client.recall("alice@example.com", "What does Alice drink?", max_tokens=64)
        req = self.server.last
        self.assertEqual((req.method, req.path), ("POST", "/v1/me/banks/alice%40example.com/memories/recall"))
        self.assertEqual(req.headers["Authorization"], "Bearer mnm_live_x")
        self.assertEqual(req.body, {"query": "What does Alice drink?", "space": "acme", "max_tokens": 64})
        self.assertIsInstance(result, RecallResult)
        self.assertEqual([m.text for m in result], ["Alice prefers green tea"])

    async def test_update_memory_org_calls_and_version(self) -> None:
        client = self.client()
        self.server.answer(200, {"id": "m1", "text": "edited", "tags": ["x"]})
        memory = await client.update_memory("alice", "m1", text="edited", tags=["x"])
        self.assertEqual((self.server.last.method, self.server.last.body), ("PATCH", {"text": "edited", "tags": ["x"]}))
        self.assertIsInstance(memory, Memory)
        await client.retain_org("acme", "policy")
        self.assertEqual(self.server.last.path, "/v1/default/spaces/acme/memories")
        await client.recall_org("acme", "policy?")
        self.assertEqual(self.server.last.path, "/v1/default/spaces/acme/memories/recall")
        self.server.answer(200, {"version": "9.9.9"})
        self.assertEqual(await client.version(), {"version": "9.9.9"})

    async def test_calls_run_concurrently(self) -> None:
        # No answer is sent before all five requests have arrived: calls sent one after another would never get
        # there (the gate gives up after 30 s and the calls fail).
        everyone = threading.Barrier(5)
        for _ in range(5):
            self.server.answer(200, {"banks": [], "total": 0, "limit": 10, "offset": 0},
                               gate=lambda: everyone.wait(timeout=30))
        client = self.client()
        pages = await asyncio.gather(*(client.list_banks(limit=10) for _ in range(5)))
        self.assertEqual([p.total for p in pages], [0] * 5)
        self.assertEqual(len(self.server.requests), 5)

    async def test_the_loop_runs_while_a_call_waits(self) -> None:
        # The server answers only once a coroutine on the loop has seen the request arrive, so a client that blocked
        # the loop while waiting would get the gate's failure instead.
        seen = threading.Event()
        self.server.answer(200, {"banks": [], "total": 0, "limit": 10, "offset": 0},
                           gate=lambda: None if seen.wait(timeout=30) else _fail("the loop did not run"))

        async def watch() -> None:
            while not self.server.requests:
                await asyncio.sleep(0.01)
            seen.set()

        watcher = asyncio.ensure_future(watch())
        page = await self.client().list_banks()
        await watcher
        self.assertEqual(page.total, 0)

    async def test_cancelling_the_task_ends_the_call(self) -> None:
        release = threading.Event()
        self.addCleanup(release.set)
        self.server.answer(200, {"banks": []}, gate=lambda: release.wait(timeout=30))
        task = asyncio.ensure_future(self.client().list_banks())
        while not self.server.requests:
            await asyncio.sleep(0.01)
        task.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await task
        release.set()


def _fail(reason: str) -> None:
    raise AssertionError(reason)


class ErrorsAndRetries(AsyncClientTestCase):
    async def test_problem_json_is_mapped(self) -> None:
        errors = [{"pointer": "/query", "detail": "must not be empty"}]
        self.server.answer(400, problem(400, "validation_failed", "query must not be empty.", errors=errors))
        with self.assertRaises(MnemosError) as caught:
            await self.client().recall("alice", "")
        self.assertEqual((caught.exception.status, caught.exception.code, caught.exception.errors),
                         (400, "validation_failed", errors))
        self.assertEqual(len(self.server.requests), 1)

    async def test_429_with_retry_after_is_retried_after_an_awaited_wait(self) -> None:
        self.server.answer(429, problem(429, "rate_limited", "Slow down."), headers={"Retry-After": "3"})
        self.server.answer(200, {"success": True, "bank_id": "alice", "items_count": 1, "memory_ids": ["m1"]})
        result = await self.client().retain("alice", "x")
        self.assertEqual(result.memory_ids, ["m1"])
        self.assertEqual(self.sleeps, [3.0])
        self.assertEqual(self.server.requests[0].body, self.server.requests[1].body)

    async def test_permanent_codes_and_long_waits_are_not_retried(self) -> None:
        self.server.answer(503, problem(503, "llm_not_configured", "Set an LLM provider to use reflect."))
        with self.assertRaises(MnemosError) as caught:
            await self.client().reflect("alice", "q")
        self.assertEqual(caught.exception.code, "llm_not_configured")
        self.server.answer(429, problem(429, "rate_limited", "Slow down."), headers={"Retry-After": "3600"})
        with self.assertRaises(MnemosError) as caught:
            await self.client(max_retry_delay=30).recall("alice", "q")
        self.assertEqual(caught.exception.retry_after, 3600.0)
        self.assertEqual(self.sleeps, [])
        self.assertEqual(len(self.server.requests), 2)

    async def test_retries_are_capped(self) -> None:
        for _ in range(3):
            self.server.answer(503, raw=b"busy")
        with self.assertRaises(MnemosError) as caught:
            await self.client(max_retries=2, backoff_base=1.0, backoff_max=100.0).list_banks()
        self.assertEqual((caught.exception.status, caught.exception.code), (503, "service_unavailable"))
        self.assertEqual(len(self.server.requests), 3)
        self.assertEqual(len(self.sleeps), 2)
        self.assertTrue(0.5 <= self.sleeps[0] <= 1.0 and 1.0 <= self.sleeps[1] <= 2.0, self.sleeps)

    async def test_timeout_and_connection_errors(self) -> None:
        self.server.answer(200, {"banks": []}, delay=1.5)
        with self.assertRaises(MnemosError) as caught:
            await self.client(timeout=0.2).list_banks()
        self.assertEqual((caught.exception.status, caught.exception.code), (0, "timeout"))
        self.assertEqual(self.sleeps, [])

        client = AsyncMnemos(closed_port_url(), max_retries=1)
        waits: List[float] = []

        async def record(seconds: float) -> None:
            waits.append(seconds)

        client._sleep = record  # type: ignore[method-assign]
        with self.assertRaises(MnemosError) as caught:
            await client.health()
        self.assertEqual((caught.exception.status, caught.exception.code), (0, "connection_error"))
        self.assertEqual(len(waits), 1)

    async def test_real_sleep_path(self) -> None:
        self.server.answer(429, problem(429, "rate_limited", "Slow down."), headers={"Retry-After": "0"})
        self.server.answer(200, {"banks": [], "total": 0, "limit": 100, "offset": 0})
        self.assertEqual((await AsyncMnemos(self.server.url).list_banks()).total, 0)
        self.assertEqual(len(self.server.requests), 2)


def _public_methods(cls: type) -> List[str]:
    return sorted(name for name, value in vars(cls).items() if callable(value) and not name.startswith("_"))


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class Surface(unittest.TestCase):
    def test_async_client_has_every_sync_method_with_the_same_parameters(self) -> None:
        sync_methods = [m for m in _public_methods(Mnemos) if m not in ("close",)]
        async_methods = [m for m in _public_methods(AsyncMnemos) if m not in ("aclose",)]
        self.assertEqual(sync_methods, async_methods)
        for name in sync_methods:
            sync_params = inspect.signature(getattr(Mnemos, name)).parameters
            async_params = inspect.signature(getattr(AsyncMnemos, name)).parameters
            self.assertEqual(list(sync_params.values()), list(async_params.values()), name)
            if name == "reflect_stream":  # a generator, and an async generator for `async for`
                self.assertTrue(inspect.isasyncgenfunction(getattr(AsyncMnemos, name)), name)
                self.assertTrue(inspect.isgeneratorfunction(getattr(Mnemos, name)), name)
            else:
                # Paging iterators are async generators (``async for``); every other call is a coroutine.
                awaitable = getattr(AsyncMnemos, name)
                self.assertTrue(inspect.iscoroutinefunction(awaitable) or inspect.isasyncgenfunction(awaitable), name)
                self.assertFalse(inspect.iscoroutinefunction(getattr(Mnemos, name)), name)
            self.assertTrue(getattr(Mnemos, name).__doc__, f"{name} has a docstring")
        self.assertEqual(list(inspect.signature(Mnemos.__init__).parameters),
                         list(inspect.signature(AsyncMnemos.__init__).parameters))

    def test_every_typescript_client_call_has_a_python_counterpart(self) -> None:
        with open(TS_CLIENT, encoding="utf-8") as handle:
            source = handle.read()
        # The public methods of the TS class: two-space indented `name(` lines that are not private or the ctor.
        ts_methods = set(re.findall(r"^  (?:async \*?)?([a-z][A-Za-z]*)(?:<[^>]*>)?\(", source, flags=re.MULTILINE))
        ts_methods -= {"constructor"}
        self.assertGreater(len(ts_methods), 15, ts_methods)
        missing = sorted(m for m in ts_methods if not hasattr(Mnemos, _snake(m)) or not hasattr(AsyncMnemos, _snake(m)))
        self.assertEqual(missing, [], "TypeScript client calls without a Python method")


if __name__ == "__main__":
    unittest.main()

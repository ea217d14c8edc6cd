"""Streamed reflect in both clients against the scripted server: the request asks for server-sent events, delta and
done events are read into ReflectDelta and ReflectDone, an error event raises the problem's MnemosError, a failure
before the stream is retried like any call's, and a stream cut before its done event is an error. The event-stream
reader is checked against the format's framing rules."""

from __future__ import annotations

import json
import unittest
from typing import Any, Dict, List

from helpers import ScriptedServerCase, problem

from mnemos_client import AsyncMnemos, Mnemos, MnemosError, ReflectDelta, ReflectDone, ReflectResult
from mnemos_client._stream import EventStreamReader

RESULT: Dict[str, Any] = {"text": "Green tea.", "citations": ["m1"], "usage": {"input_tokens": 5, "output_tokens": 2}}
STREAM_HEADERS = {"Content-Type": "text/event-stream; charset=utf-8"}


def frames(*events: Any) -> bytes:
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode("utf-8")


GOOD = frames(("delta", {"text": "Green "}), ("delta", {"text": "tea."}), ("done", RESULT))


class SyncStream(ScriptedServerCase, unittest.TestCase):
    def client(self) -> Mnemos:
        client = Mnemos(self.server.url)
        client._sleep = self.sleeps.append
        return client

    def test_events_then_the_result(self) -> None:
        self.server.answer(200, raw=GOOD, headers=STREAM_HEADERS)
        stream = self.client().reflect_stream("alice", "What does Alice drink?", budget="low")
        events: List[Any] = []
        try:
            while True:
                events.append(next(stream))
        except StopIteration as stop:
            returned = stop.value
        req = self.server.last
        self.assertEqual((req.method, req.path), ("POST", "/v1/default/banks/alice/reflect"))
        self.assertEqual(req.headers["Accept"], "text/event-stream, application/problem+json")
        self.assertEqual(req.body, {"query": "What does Alice drink?", "budget": "low"})
        self.assertEqual(events[:2], [ReflectDelta("Green "), ReflectDelta("tea.")])
        self.assertEqual([e.type for e in events], ["delta", "delta", "done"])
        self.assertIsInstance(events[2], ReflectDone)
        self.assertEqual(events[2].result.citations, ["m1"])
        self.assertIsInstance(returned, ReflectResult)
        self.assertEqual(returned.text, "Green tea.")

    def test_an_error_event_raises_the_problem(self) -> None:
        failed = problem(503, "llm_unavailable", "The LLM is unavailable: the stream broke. Try again shortly.")
        self.server.answer(200, raw=frames(("delta", {"text": "Gre"}), ("error", failed)), headers=STREAM_HEADERS)
        seen: List[str] = []
        with self.assertRaises(MnemosError) as caught:
            for event in self.client().reflect_stream("alice", "q"):
                seen.append(event.type)
        self.assertEqual(seen, ["delta"])
        self.assertEqual((caught.exception.status, caught.exception.code), (503, "llm_unavailable"))
        self.assertIn("stream broke", caught.exception.detail)

    def test_failures_before_the_stream_are_retried_or_raised(self) -> None:
        self.server.answer(503, problem(503, "llm_unavailable", "busy"), headers={"Retry-After": "2"})
        self.server.answer(200, raw=GOOD, headers=STREAM_HEADERS)
        texts = [e.text for e in self.client().reflect_stream("alice", "q") if isinstance(e, ReflectDelta)]
        self.assertEqual(texts, ["Green ", "tea."])
        self.assertEqual(self.sleeps, [2.0])
        self.server.answer(400, problem(400, "validation_failed", "query must not be empty"))
        with self.assertRaises(MnemosError) as caught:
            list(self.client().reflect_stream("alice", ""))
        self.assertEqual(caught.exception.code, "validation_failed")

    def test_a_stream_cut_before_done_is_an_error(self) -> None:
        self.server.answer(200, raw=frames(("delta", {"text": "Green "})), headers=STREAM_HEADERS)
        with self.assertRaises(MnemosError) as caught:
            list(self.client().reflect_stream("alice", "q"))
        self.assertEqual(caught.exception.code, "invalid_response")


class AsyncStream(ScriptedServerCase, unittest.IsolatedAsyncioTestCase):
    async def test_events_error_event_and_retry(self) -> None:
        client = AsyncMnemos(self.server.url)
        client._sleep = self._record  # type: ignore[method-assign]
        self.server.answer(429, problem(429, "rate_limited", "slow down"), headers={"Retry-After": "1"})
        self.server.answer(200, raw=GOOD, headers=STREAM_HEADERS)
        events = [event async for event in client.reflect_stream("alice", "q")]
        self.assertEqual([e.type for e in events], ["delta", "delta", "done"])
        self.assertEqual(events[-1].result.text, "Green tea.")
        self.assertEqual(self.sleeps, [1.0])

        failed = problem(502, "llm_bad_answer", "The LLM's answer could not be used.")
        self.server.answer(200, raw=frames(("delta", {"text": "x"}), ("error", failed)), headers=STREAM_HEADERS)
        with self.assertRaises(MnemosError) as caught:
            async for _ in client.reflect_stream("alice", "q"):
                pass
        self.assertEqual((caught.exception.status, caught.exception.code), (502, "llm_bad_answer"))

    async def _record(self, seconds: float) -> None:
        self.sleeps.append(seconds)


class Reader(unittest.TestCase):
    def test_pieces_split_anywhere_and_every_line_end(self) -> None:
        text = "event: delta\r\ndata: a\rdata: b\n\n: comment\nevent: ping\n\ndata: {}\r\n\r\n"
        for cut in range(len(text) + 1):
            reader = EventStreamReader()
            self.assertEqual(reader.push(text[:cut]) + reader.push(text[cut:]),
                             [("delta", "a\nb"), ("message", "{}")], cut)


if __name__ == "__main__":
    unittest.main()

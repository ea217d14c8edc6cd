"""Client behaviour against a scripted local HTTP server: paths, headers, bodies, parsing, errors, retries, timeouts."""

from __future__ import annotations

import datetime as dt
import email.utils
import time
import unittest
from typing import Any, Dict, List

from helpers import ScriptedServerCase, closed_port_url, problem

from mnemos_client import (
    Bank,
    Memory,
    Mnemos,
    MnemosError,
    RecallResult,
    RetainItem,
    parse_retry_after,
)

MEMORY: Dict[str, Any] = {
    "id": "0b7f3c1e-8e2a-4a53-9d55-3f1d4c1f2a10",
    "type": "raw",
    "text": "Alice prefers green tea",
    "score": 0.83,
    "scores": {"semantic": 0.71, "keyword": 0.4},
    "occurred_at": "2024-01-15T10:30:00Z",
    "created_at": "2024-01-15T10:30:01Z",
    "space": "default",
    "tags": ["drinks"],
    "metadata": {"source": "chat"},
    "document_id": None,
}


class ClientTestCase(ScriptedServerCase, unittest.TestCase):
    def client(self, **kwargs: Any) -> Mnemos:
        client = Mnemos(self.server.url, **kwargs)
        client._sleep = self.sleeps.append
        return client


class PathsAndHeaders(ClientTestCase):
    def test_without_api_key_targets_default_tenant_without_authorization(self) -> None:
        self.server.answer(200, {"success": True, "bank_id": "alice@example.com", "items_count": 1,
                                 "memory_ids": [MEMORY["id"]], "async": False})
        result = self.client().retain("alice@example.com", "Alice prefers green tea")
        req = self.server.last
        self.assertEqual(req.method, "POST")
        self.assertEqual(req.path, "/v1/default/banks/alice%40example.com/memories")
        self.assertNotIn("Authorization", req.headers)
        self.assertEqual(req.headers["Content-Type"], "application/json")
        self.assertTrue(req.headers["User-Agent"].startswith("mnemos-client-python/"))
        self.assertEqual(req.body, {"content": "Alice prefers green tea"})
        self.assertTrue(result.success)
        self.assertEqual(result.bank_id, "alice@example.com")
        self.assertEqual(result.memory_ids, [MEMORY["id"]])
        self.assertFalse(result.async_)

    def test_api_key_targets_me_with_bearer_token(self) -> None:
        client = self.client(api_key="mnm_live_secret")
        client.recall("bob", "tea?")
        req = self.server.last
        self.assertEqual(req.path, "/v1/me/banks/bob/memories/recall")
        self.assertEqual(req.headers["Authorization"], "Bearer mnm_live_secret")
        client.usage()
        self.assertEqual(self.server.last.path, "/v1/me/usage")
        self.assertEqual(self.server.last.method, "GET")

    def test_explicit_tenant_with_engine_token(self) -> None:
        self.client(api_key="engine-token", tenant="proj_1").list_banks()
        self.assertEqual(self.server.last.path, "/v1/proj_1/banks")
        self.assertEqual(self.server.last.headers["Authorization"], "Bearer engine-token")

    def test_bank_and_memory_ids_are_url_encoded(self) -> None:
        client = self.client()
        client.get_memory("team:a/b c", "id/with?odd#chars")
        self.assertEqual(self.server.last.path, "/v1/default/banks/team%3Aa%2Fb%20c/memories/id%2Fwith%3Fodd%23chars")
        client.get_bank("a+b@c")
        self.assertEqual(self.server.last.path, "/v1/default/banks/a%2Bb%40c")

    def test_trailing_slash_in_base_url(self) -> None:
        client = Mnemos(self.server.url + "/")
        client.list_banks()
        self.assertEqual(self.server.last.path, "/v1/default/banks")

    def test_empty_bank_id_is_refused_locally(self) -> None:
        with self.assertRaises(ValueError):
            self.client().recall("", "q")
        self.assertEqual(self.server.requests, [])


class Bodies(ClientTestCase):
    def test_default_space_and_per_call_override(self) -> None:
        client = self.client(space="acme")
        client.retain("alice", "x")
        self.assertEqual(self.server.last.body, {"content": "x", "space": "acme"})
        client.retain("alice", "y", "other")
        self.assertEqual(self.server.last.body["space"], "other")
        client.recall("alice", "q")
        self.assertEqual(self.server.last.body, {"query": "q", "space": "acme"})
        client.list_memories("alice")
        self.assertEqual(self.server.last.query, {"space": ["acme"]})

    def test_retain_with_all_options(self) -> None:
        self.client().retain(
            "alice", "met Bob", timestamp=dt.datetime(2024, 1, 15, 10, 30), context="meeting",
            metadata={"source": "slack"}, tags=["work"], document_id="doc-1")
        self.assertEqual(self.server.last.body, {
            "content": "met Bob", "timestamp": "2024-01-15T10:30:00Z", "context": "meeting",
            "metadata": {"source": "slack"}, "tags": ["work"], "document_id": "doc-1"})

    def test_retain_batch_accepts_strings_dicts_and_items(self) -> None:
        self.server.answer(200, {"success": True, "bank_id": "alice", "items_count": 3, "async": True,
                                 "operation_id": "op-1", "memory_ids": []})
        tz = dt.timezone(dt.timedelta(hours=2))
        result = self.client().retain_batch("alice", [
            "plain",
            {"content": "dict", "timestamp": dt.date(2024, 10, 15), "tags": ["a"]},
            RetainItem("item", timestamp=dt.datetime(2024, 1, 1, 12, 0, tzinfo=tz), metadata={"k": "v"}),
        ], space="acme", async_=True)
        self.assertEqual(self.server.last.body, {
            "items": [
                {"content": "plain"},
                {"content": "dict", "timestamp": "2024-10-15", "tags": ["a"]},
                {"content": "item", "timestamp": "2024-01-01T12:00:00+02:00", "metadata": {"k": "v"}},
            ],
            "space": "acme",
            "async": True,
        })
        self.assertTrue(result.async_)
        self.assertEqual(result.operation_id, "op-1")
        self.assertEqual(result.items_count, 3)

    def test_recall_options_and_result_parsing_ignores_unknown_fields(self) -> None:
        self.server.answer(200, {
            "results": [dict(MEMORY, brand_new_field={"x": 1}), {"id": "m2", "text": "org fact", "org": True}],
            "usage": {"tokens": 12},
            "trace": {"embed_ms": 3.1},
            "entities": {"Alice": {}},
        })
        result = self.client().recall(
            "alice", "What does Alice drink?", space="acme", max_tokens=512, budget="high", include_org=True,
            types=["raw", "world"], tags=["drinks"], tags_match="any", query_timestamp="2024-02-01T00:00:00Z",
            trace=True)
        self.assertEqual(self.server.last.body, {
            "query": "What does Alice drink?", "space": "acme", "max_tokens": 512, "budget": "high",
            "include_org": True, "types": ["raw", "world"], "tags": ["drinks"], "tags_match": "any",
            "query_timestamp": "2024-02-01T00:00:00Z", "trace": True})
        self.assertIsInstance(result, RecallResult)
        self.assertEqual(len(result), 2)
        first = result.results[0]
        self.assertIsInstance(first, Memory)
        self.assertEqual(first.id, MEMORY["id"])
        self.assertEqual(first.type, "raw")
        self.assertEqual(first.text, "Alice prefers green tea")
        self.assertEqual(first.score, 0.83)
        self.assertEqual(first.scores, {"semantic": 0.71, "keyword": 0.4})
        self.assertEqual(first.tags, ["drinks"])
        self.assertEqual(first.metadata, {"source": "chat"})
        self.assertIsNone(first.document_id)
        self.assertFalse(first.org)
        self.assertEqual(first.raw["brand_new_field"], {"x": 1})
        self.assertTrue(result.results[1].org)
        self.assertIsNone(result.results[1].score)
        self.assertEqual(result.usage, {"tokens": 12})
        self.assertEqual(result.trace, {"embed_ms": 3.1})
        self.assertEqual([m.id for m in result], [MEMORY["id"], "m2"])

    def test_numeric_budget(self) -> None:
        self.client().recall("alice", "q", budget=250)
        self.assertEqual(self.server.last.body["budget"], 250)

    def test_reflect_body_and_result(self) -> None:
        self.server.answer(200, {"text": "Green tea.", "citations": [MEMORY["id"]], "based_on": [MEMORY],
                                 "structured_output": {"drink": "tea"}, "usage": {"input_tokens": 5},
                                 "extra": True})
        schema = {"type": "object", "properties": {"drink": {"type": "string"}}}
        result = self.client().reflect("alice", "What does Alice drink?", budget="mid", response_schema=schema,
                                       include_facts=True)
        self.assertEqual(self.server.last.path, "/v1/default/banks/alice/reflect")
        self.assertEqual(self.server.last.body, {"query": "What does Alice drink?", "budget": "mid",
                                                 "response_schema": schema, "include": {"facts": {}}})
        self.assertEqual(result.text, "Green tea.")
        self.assertEqual(result.citations, [MEMORY["id"]])
        self.assertEqual(result.structured_output, {"drink": "tea"})
        self.assertEqual(result.usage, {"input_tokens": 5})
        self.assertEqual(result.based_on, [MEMORY])
        self.client().reflect("alice", "q")
        self.assertEqual(self.server.last.body, {"query": "q"})

    def test_banks(self) -> None:
        client = self.client()
        self.server.answer(200, {"bank_id": "alice", "name": "Alice", "mission": "help", "disposition": {"empathy": 3},
                                 "background": "help"})
        bank = client.put_bank("alice", name="Alice", mission="help", background="help")
        self.assertEqual(self.server.last.method, "PUT")
        self.assertEqual(self.server.last.body, {"name": "Alice", "mission": "help", "background": "help"})
        self.assertIsInstance(bank, Bank)
        self.assertEqual((bank.bank_id, bank.name, bank.mission), ("alice", "Alice", "help"))
        self.assertEqual(bank.raw["background"], "help")
        self.assertIs(Mnemos.create_bank, Mnemos.put_bank)

        client.update_bank("alice", mission="m2")
        self.assertEqual((self.server.last.method, self.server.last.body), ("PATCH", {"mission": "m2"}))

        self.server.answer(200, {"banks": [{"bank_id": "alice", "name": "Alice"}], "total": 7, "limit": 1,
                                 "offset": 2})
        page = client.list_banks(limit=1, offset=2, q="ali")
        self.assertEqual(self.server.last.query, {"limit": ["1"], "offset": ["2"], "q": ["ali"]})
        self.assertEqual((page.total, page.limit, page.offset), (7, 1, 2))
        self.assertEqual(page.banks[0].name, "Alice")

        self.server.answer(200, {"success": True, "deleted_count": 4})
        deleted = client.delete_bank("alice")
        self.assertEqual(self.server.last.method, "DELETE")
        self.assertEqual(self.server.last.path, "/v1/default/banks/alice")
        self.assertTrue(deleted.success)
        self.assertEqual(deleted.deleted_count, 4)

    def test_memories(self) -> None:
        client = self.client()
        self.server.answer(200, {"items": [MEMORY], "total": 1, "limit": 10, "offset": 0})
        page = client.list_memories("alice", space="acme", type="raw", q="tea", tags=["a", "b"], limit=10, offset=0,
                                    since=dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc), until="2024-12-31")
        req = self.server.last
        self.assertEqual((req.method, req.path), ("GET", "/v1/default/banks/alice/memories"))
        self.assertEqual(req.query, {"space": ["acme"], "type": ["raw"], "q": ["tea"], "tags": ["a", "b"],
                                     "limit": ["10"], "offset": ["0"], "since": ["2024-01-01T00:00:00Z"],
                                     "until": ["2024-12-31"]})
        self.assertEqual(page.total, 1)
        self.assertEqual(page.items[0].text, MEMORY["text"])

        self.server.answer(200, MEMORY)
        memory = client.get_memory("alice", MEMORY["id"])
        self.assertEqual(self.server.last.path, f"/v1/default/banks/alice/memories/{MEMORY['id']}")
        self.assertEqual(memory.occurred_at, "2024-01-15T10:30:00Z")

        client.delete_memory("alice", MEMORY["id"])
        self.assertEqual(self.server.last.method, "DELETE")
        client.clear_memories("alice", space="acme", type="raw")
        self.assertEqual((self.server.last.method, self.server.last.path, self.server.last.query),
                         ("DELETE", "/v1/default/banks/alice/memories", {"space": ["acme"], "type": ["raw"]}))

    def test_operation_and_usage(self) -> None:
        client = self.client()
        self.server.answer(200, {"id": "op-1", "status": "completed", "items": 3})
        op = client.operation("op-1")
        self.assertEqual(self.server.last.path, "/v1/default/operations/op-1")
        self.assertEqual((op.id, op.status, op.raw["items"]), ("op-1", "completed", 3))
        self.server.answer(200, {"period": "2025-01", "memories": {"used": 3, "limit": 1000},
                                 "recalls": {"used": 1, "limit": 5000}, "reflects": {"used": 0, "limit": 100}})
        usage = client.usage()
        self.assertEqual(usage.period, "2025-01")
        self.assertEqual((usage.memories.used, usage.memories.limit), (3, 1000))
        self.assertEqual(usage.reflects.limit, 100)

    def test_update_memory(self) -> None:
        self.server.answer(200, dict(MEMORY, tags=["health"], state="invalidated"))
        memory = self.client().update_memory("alice@example.com", MEMORY["id"], tags=["health"], state="invalidated",
                                              occurred_at=dt.date(2024, 3, 1), metadata={"k": "v"})
        req = self.server.last
        self.assertEqual((req.method, req.path),
                         ("PATCH", f"/v1/default/banks/alice%40example.com/memories/{MEMORY['id']}"))
        self.assertEqual(req.body, {"tags": ["health"], "state": "invalidated", "occurred_at": "2024-03-01",
                                    "metadata": {"k": "v"}})
        self.assertIsInstance(memory, Memory)
        self.assertEqual((memory.tags, memory.state), (["health"], "invalidated"))
        self.client().update_memory("alice", "m1", text="new text")
        self.assertEqual(self.server.last.body, {"text": "new text"})

    def test_org_memory_calls_target_the_space(self) -> None:
        client = self.client(space="ignored-default")
        self.server.answer(200, {"success": True, "bank_id": "", "items_count": 1, "memory_ids": ["o1"]})
        retained = client.retain_org("acme corp", "All launches need a rollback plan.", tags=["policy"])
        self.assertEqual((self.server.last.method, self.server.last.path),
                         ("POST", "/v1/default/spaces/acme%20corp/memories"))
        # The space is in the path: the client's default space is not sent in the body.
        self.assertEqual(self.server.last.body, {"content": "All launches need a rollback plan.", "tags": ["policy"]})
        self.assertEqual(retained.memory_ids, ["o1"])
        self.server.answer(200, {"results": [{"id": "o1", "text": "All launches need a rollback plan.", "org": True}]})
        recalled = client.recall_org("acme corp", "rollback?", max_tokens=100)
        self.assertEqual(self.server.last.path, "/v1/default/spaces/acme%20corp/memories/recall")
        self.assertEqual(self.server.last.body, {"query": "rollback?", "max_tokens": 100})
        self.assertTrue(recalled.results[0].org)
        client.recall_org("acme corp", "rollback?", min_relevance=0.5)
        self.assertEqual(self.server.last.body, {"query": "rollback?", "min_relevance": 0.5})
        with self.assertRaises(ValueError):
            client.recall_org("", "q")

    def test_version_and_raw_request(self) -> None:
        client = self.client(api_key="k")
        self.server.answer(200, {"version": "0.1.0", "features": {"llm": False}})
        self.assertEqual(client.version(), {"version": "0.1.0", "features": {"llm": False}})
        self.assertEqual((self.server.last.method, self.server.last.path), ("GET", "/version"))
        self.server.answer(200, {"stats": 1})
        answer = client.request("get", client.prefix + "/banks/a/stats", query={"x": True})
        self.assertEqual(answer, {"stats": 1})
        self.assertEqual((self.server.last.method, self.server.last.path, self.server.last.query),
                         ("GET", "/v1/me/banks/a/stats", {"x": ["true"]}))
        self.assertEqual(self.server.last.headers["Authorization"], "Bearer k")
        with self.assertRaises(ValueError):
            client.request("GET", "banks")

    def test_reflect_and_list_filters_cover_the_wire_fields(self) -> None:
        client = self.client()
        client.reflect("alice", "q", context="support chat", max_tokens=300, types=["world"], fact_types=["world"],
                       tags=["a"], tags_match="all", query_timestamp=dt.date(2024, 5, 1), include={"entities": {}},
                       include_facts=True)
        self.assertEqual(self.server.last.body, {
            "query": "q", "context": "support chat", "max_tokens": 300, "types": ["world"], "fact_types": ["world"],
            "tags": ["a"], "tags_match": "all", "query_timestamp": "2024-05-01",
            "include": {"entities": {}, "facts": {}}})
        client.list_memories("alice", document_id="doc-1", state="invalidated")
        self.assertEqual(self.server.last.query, {"document_id": ["doc-1"], "state": ["invalidated"]})
        client.retain("alice", "x", async_=True)
        self.assertEqual(self.server.last.body, {"content": "x", "async": True})
        client.recall("alice", "q", include={"entities": {"max_tokens": 50}})
        self.assertEqual(self.server.last.body, {"query": "q", "include": {"entities": {"max_tokens": 50}}})

    def test_with_options_changes_a_copy(self) -> None:
        client = self.client(space="acme")
        narrowed = client.with_options(space="other", max_retries=0, timeout=5)
        self.assertEqual((client.space, client.max_retries, client.timeout), ("acme", 3, 30.0))
        self.assertEqual((narrowed.space, narrowed.max_retries, narrowed.timeout), ("other", 0, 5))
        self.server.answer(503, problem(503, "unavailable", "Busy."), headers={"Retry-After": "0"})
        with self.assertRaises(MnemosError):
            narrowed.recall("alice", "q")
        self.assertEqual(self.server.last.body, {"query": "q", "space": "other"})
        self.assertEqual((len(self.server.requests), self.sleeps), (1, []))
        with self.assertRaises(ValueError):
            client.with_options(max_retries=-1)

    def test_empty_2xx_body_is_accepted(self) -> None:
        self.server.answer(200, None)
        self.assertTrue(self.client().delete_memory("alice", "m1").success)


class Errors(ClientTestCase):
    def test_problem_json_is_mapped(self) -> None:
        errors = [{"pointer": "/query", "detail": "must not be empty"}]
        self.server.answer(400, problem(400, "validation_failed", "query must not be empty: send a question.",
                                        errors=errors))
        with self.assertRaises(MnemosError) as caught:
            self.client().recall("alice", "")
        error = caught.exception
        self.assertEqual(error.status, 400)
        self.assertEqual(error.code, "validation_failed")
        self.assertEqual(error.detail, "query must not be empty: send a question.")
        self.assertEqual(error.errors, errors)
        self.assertEqual(error.title, "Validation failed")
        self.assertEqual(error.type, "/errors/validation_failed")
        self.assertIn("validation_failed", str(error))
        self.assertEqual(len(self.server.requests), 1)  # not retried

    def test_not_found_and_unauthorized(self) -> None:
        self.server.answer(404, problem(404, "memory_not_found", "No memory with this id in bank alice."))
        with self.assertRaises(MnemosError) as caught:
            self.client().get_memory("alice", "nope")
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "memory_not_found"))
        self.server.answer(401, problem(401, "unauthorized", "Send Authorization: Bearer <key>."))
        with self.assertRaises(MnemosError) as caught:
            self.client(api_key="bad").list_banks()
        self.assertEqual((caught.exception.status, caught.exception.code), (401, "unauthorized"))

    def test_fastapi_detail_string_and_list(self) -> None:
        self.server.answer(404, {"detail": "Memory unit 'x' not found"})
        with self.assertRaises(MnemosError) as caught:
            self.client().get_memory("alice", "x")
        self.assertEqual((caught.exception.code, caught.exception.detail), ("not_found", "Memory unit 'x' not found"))
        pydantic = [{"type": "missing", "loc": ["body", "query"], "msg": "Field required"}]
        self.server.answer(422, {"detail": pydantic})
        with self.assertRaises(MnemosError) as caught:
            self.client().recall("alice", "q")
        self.assertEqual(caught.exception.status, 422)
        self.assertEqual(caught.exception.code, "validation_failed")
        self.assertEqual(caught.exception.detail, "Field required")
        self.assertEqual(caught.exception.errors, pydantic)

    def test_non_json_error_falls_back_to_text(self) -> None:
        self.server.answer(502, raw=b"<html>Bad gateway</html>", headers={"Content-Type": "text/html"})
        with self.assertRaises(MnemosError) as caught:
            self.client().list_banks()
        self.assertEqual((caught.exception.status, caught.exception.code), (502, "bad_gateway"))
        self.assertEqual(caught.exception.detail, "<html>Bad gateway</html>")
        self.server.answer(418, raw=b"")
        with self.assertRaises(MnemosError) as caught:
            self.client().list_banks()
        self.assertEqual(caught.exception.code, "client_error")
        self.assertIn("418", caught.exception.detail)

    def test_openai_style_error_object(self) -> None:
        self.server.answer(500, {"error": {"message": "upstream exploded", "code": "upstream_error"}})
        with self.assertRaises(MnemosError) as caught:
            self.client().list_banks()
        self.assertEqual((caught.exception.status, caught.exception.code, caught.exception.detail),
                         (500, "upstream_error", "upstream exploded"))

    def test_non_json_success_is_an_error(self) -> None:
        self.server.answer(200, raw=b"not json")
        with self.assertRaises(MnemosError) as caught:
            self.client().list_banks()
        self.assertEqual((caught.exception.status, caught.exception.code), (200, "invalid_response"))

    def test_llm_not_configured_is_not_retried(self) -> None:
        self.server.answer(503, problem(503, "llm_not_configured", "Set MNEMOS_API_LLM_PROVIDER to use reflect."))
        with self.assertRaises(MnemosError) as caught:
            self.client().reflect("alice", "q")
        self.assertEqual((caught.exception.status, caught.exception.code), (503, "llm_not_configured"))
        self.assertEqual(len(self.server.requests), 1)
        self.assertEqual(self.sleeps, [])


class Retries(ClientTestCase):
    def test_429_then_200_is_retried_with_backoff(self) -> None:
        self.server.answer(429, problem(429, "rate_limited", "Slow down."))
        self.server.answer(200, {"results": [MEMORY], "usage": {"tokens": 5}})
        result = self.client().recall("alice", "tea")
        self.assertEqual(result.results[0].id, MEMORY["id"])
        self.assertEqual(len(self.server.requests), 2)
        self.assertEqual(self.server.requests[0].body, self.server.requests[1].body)
        self.assertEqual(len(self.sleeps), 1)
        self.assertGreater(self.sleeps[0], 0)
        self.assertLessEqual(self.sleeps[0], 0.5)  # first backoff step: base 0.5 s with jitter

    def test_503_retry_after_seconds_is_honoured(self) -> None:
        self.server.answer(503, problem(503, "unavailable", "Warming up."), headers={"Retry-After": "2"})
        self.server.answer(200, {"success": True, "bank_id": "alice", "items_count": 1, "async": False})
        result = self.client().retain("alice", "x")
        self.assertTrue(result.success)
        self.assertEqual(self.sleeps, [2.0])
        self.assertEqual(len(self.server.requests), 2)

    def test_retry_after_http_date_is_honoured(self) -> None:
        when = email.utils.formatdate(time.time() + 5, usegmt=True)
        self.server.answer(429, problem(429, "rate_limited", "Slow down."), headers={"Retry-After": when})
        self.server.answer(200, {"banks": [], "total": 0, "limit": 100, "offset": 0})
        self.client().list_banks()
        self.assertEqual(len(self.sleeps), 1)
        self.assertGreater(self.sleeps[0], 3)
        self.assertLessEqual(self.sleeps[0], 5)

    def test_retries_are_capped_then_the_error_is_raised(self) -> None:
        for _ in range(4):
            self.server.answer(429, problem(429, "rate_limited", "Slow down."), headers={"Retry-After": "1"})
        with self.assertRaises(MnemosError) as caught:
            self.client(max_retries=2).recall("alice", "q")
        self.assertEqual((caught.exception.status, caught.exception.code), (429, "rate_limited"))
        self.assertEqual(caught.exception.retry_after, 1.0)
        self.assertEqual(len(self.server.requests), 3)
        self.assertEqual(self.sleeps, [1.0, 1.0])

    def test_backoff_grows_exponentially(self) -> None:
        for _ in range(4):
            self.server.answer(503, raw=b"busy")
        with self.assertRaises(MnemosError):
            self.client(max_retries=3, backoff_base=1.0, backoff_max=100.0).list_banks()
        self.assertEqual(len(self.sleeps), 3)
        for attempt, delay in enumerate(self.sleeps):
            self.assertGreaterEqual(delay, 2 ** attempt / 2)
            self.assertLessEqual(delay, 2 ** attempt)

    def test_too_long_retry_after_is_not_waited(self) -> None:
        self.server.answer(429, problem(429, "rate_limited", "Slow down."), headers={"Retry-After": "3600"})
        with self.assertRaises(MnemosError) as caught:
            self.client(max_retry_delay=30).recall("alice", "q")
        self.assertEqual(caught.exception.retry_after, 3600.0)
        self.assertEqual(self.sleeps, [])
        self.assertEqual(len(self.server.requests), 1)

    def test_quota_exceeded_is_not_retried(self) -> None:
        self.server.answer(429, problem(429, "quota_exceeded", "Monthly recall quota used.", limit=5000),
                           headers={"Retry-After": "10"})
        with self.assertRaises(MnemosError) as caught:
            self.client().recall("alice", "q")
        self.assertEqual(caught.exception.code, "quota_exceeded")
        self.assertEqual(caught.exception.body["limit"], 5000)
        self.assertEqual(len(self.server.requests), 1)

    def test_max_retries_zero_disables_retries(self) -> None:
        self.server.answer(503, problem(503, "unavailable", "Busy."), headers={"Retry-After": "0"})
        with self.assertRaises(MnemosError):
            self.client(max_retries=0).list_banks()
        self.assertEqual(len(self.server.requests), 1)

    def test_real_sleep_path(self) -> None:
        self.server.answer(429, problem(429, "rate_limited", "Slow down."), headers={"Retry-After": "0"})
        self.server.answer(200, {"banks": [], "total": 0, "limit": 100, "offset": 0})
        self.assertEqual(Mnemos(self.server.url).list_banks().total, 0)
        self.assertEqual(len(self.server.requests), 2)

    def test_other_statuses_are_not_retried(self) -> None:
        for status in (400, 401, 404, 500):
            self.server.reset()
            self.server.answer(status, problem(status, "x", "no"))
            with self.assertRaises(MnemosError):
                self.client().list_banks()
            self.assertEqual(len(self.server.requests), 1, status)


class Transport(ClientTestCase):
    def test_timeout_raises_mnemos_error_and_is_not_retried(self) -> None:
        self.server.answer(200, {"banks": []}, delay=1.5)
        with self.assertRaises(MnemosError) as caught:
            self.client(timeout=0.2).list_banks()
        self.assertEqual((caught.exception.status, caught.exception.code), (0, "timeout"))
        self.assertEqual(len(self.server.requests), 1)
        self.assertEqual(self.sleeps, [])

    def test_connection_refused_is_retried_then_raised(self) -> None:
        client = Mnemos(closed_port_url(), max_retries=2)
        sleeps: List[float] = []
        client._sleep = sleeps.append
        with self.assertRaises(MnemosError) as caught:
            client.recall("alice", "q")
        self.assertEqual((caught.exception.status, caught.exception.code), (0, "connection_error"))
        self.assertEqual(len(sleeps), 2)

    def test_context_manager(self) -> None:
        with self.client() as client:
            client.list_banks()
        self.assertEqual(len(self.server.requests), 1)


class RetryAfterParsing(unittest.TestCase):
    def test_values(self) -> None:
        now = time.time()
        self.assertEqual(parse_retry_after("3"), 3.0)
        self.assertEqual(parse_retry_after(" 0 "), 0.0)
        self.assertAlmostEqual(parse_retry_after(email.utils.formatdate(now + 60, usegmt=True), now=now) or 0,
                               60, delta=1)
        self.assertEqual(parse_retry_after(email.utils.formatdate(now - 60, usegmt=True), now=now), 0.0)
        for bad in (None, "", "soon", "-5", "nan"):
            self.assertIsNone(parse_retry_after(bad), bad)


if __name__ == "__main__":
    unittest.main()

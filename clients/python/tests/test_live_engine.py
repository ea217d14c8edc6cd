"""The client against a real Mnemos engine whose address is in ``MNEMOS_URL``.

The Node test ``packages/engine/test/clients-python.test.ts`` starts an engine (real database, real embedding model)
and runs this suite with ``MNEMOS_URL`` set, and ``MNEMOS_FAKE_LLM=1`` when that engine talks to the fake LLM server.
Without ``MNEMOS_URL`` these tests fail on purpose: they are never skipped.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import subprocess
import sys
import unittest
import uuid

import helpers

import mnemos_client
from mnemos_client import NEVER, AsyncMnemos, Mnemos, MnemosError, ReflectDelta, ReflectDone, RetainItem

URL = os.environ.get("MNEMOS_URL", "")
PROJECT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(PROJECT)), "examples")
FAKE_LLM = os.environ.get("MNEMOS_FAKE_LLM", "") not in ("", "0", "false")


def unique_bank(prefix: str) -> str:
    # An '@' makes every call exercise path encoding (alice%40example.com).
    return f"{prefix}-{uuid.uuid4().hex[:10]}@example.com"


def require_engine() -> None:
    if not URL:
        raise AssertionError(
            "MNEMOS_URL is not set: these tests need a running engine. Run them through "
            "`node scripts/run-tests.mjs packages/engine/test/clients-python.test.ts`, which starts one, or set "
            "MNEMOS_URL=http://127.0.0.1:8888 for an engine you started yourself.")


class LiveEngine(unittest.TestCase):
    client: Mnemos

    @classmethod
    def setUpClass(cls) -> None:
        require_engine()
        cls.client = Mnemos(URL, timeout=60)

    def test_the_package_under_test_is_the_one_asked_for(self) -> None:
        package_dir = os.path.dirname(os.path.abspath(mnemos_client.__file__))
        source_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src",
                                  "mnemos_client")
        if helpers.INSTALLED:
            self.assertNotEqual(package_dir, source_dir, "MNEMOS_CLIENT_INSTALLED=1 but the source tree was imported")
            self.assertIn("site-packages", package_dir)
        else:
            self.assertEqual(package_dir, source_dir)
        self.assertTrue(os.path.isfile(os.path.join(package_dir, "py.typed")), "PEP 561 marker is shipped")

    def test_retain_then_recall(self) -> None:
        bank = unique_bank("alice")
        retained = self.client.retain(bank, "Alice prefers green tea over coffee in the morning.",
                                      tags=["drinks"], metadata={"source": "chat"})
        self.assertTrue(retained.success)
        self.assertEqual(retained.bank_id, bank)
        self.assertEqual(retained.items_count, 1)
        self.assertEqual(len(retained.memory_ids), 1)
        memory_id = retained.memory_ids[0]

        self.client.retain(bank, "The office moved to the third floor last spring.")
        recalled = self.client.recall(bank, "What does Alice like to drink?")
        raw_results = [m for m in recalled.results if m.type == "raw"]
        self.assertGreaterEqual(len(raw_results), 1)
        top = raw_results[0]  # (with an LLM, facts extracted from it may rank alongside)
        self.assertEqual(top.id, memory_id)
        self.assertEqual(top.text, "Alice prefers green tea over coffee in the morning.")
        self.assertEqual(top.type, "raw")
        self.assertIsInstance(top.score, float)
        self.assertEqual(top.tags, ["drinks"])
        self.assertEqual(top.metadata, {"source": "chat"})
        self.assertEqual(top.space, "default")
        self.assertIsInstance(recalled.usage.get("tokens"), int)

        memory = self.client.get_memory(bank, memory_id)
        self.assertEqual((memory.id, memory.text, memory.type), (memory_id, top.text, "raw"))

    def test_retain_batch_list_get_delete(self) -> None:
        bank = unique_bank("batch")
        result = self.client.retain_batch(bank, [
            "Bob's birthday is on the 4th of March.",
            {"content": "Bob works as a nurse in Lyon.", "tags": ["work"], "timestamp": "2024-10-15"},
            RetainItem("Bob plays the cello on Sundays.", context="hobbies", metadata={"k": "v"},
                       document_id="doc-bob"),
        ])
        self.assertEqual(result.items_count, 3)
        self.assertEqual(len(result.memory_ids), 3)

        page = self.client.list_memories(bank, type="raw")
        self.assertEqual(page.total, 3)
        self.assertEqual({m.id for m in page.items}, set(result.memory_ids))
        two = self.client.list_memories(bank, type="raw", limit=2, offset=0)
        self.assertEqual((len(two.items), two.total, two.limit), (2, 3, 2))
        tagged = self.client.list_memories(bank, type="raw", tags=["work"])
        self.assertEqual([m.text for m in tagged.items], ["Bob works as a nurse in Lyon."])

        cello = self.client.get_memory(bank, result.memory_ids[2])
        self.assertEqual(cello.metadata, {"k": "v"})
        self.assertEqual(cello.document_id, "doc-bob")
        self.assertEqual(cello.context, "hobbies")
        self.assertEqual(cello.bank_id, bank)
        self.assertIsInstance(cello.created_at, str)
        nurse = self.client.get_memory(bank, result.memory_ids[1])
        self.assertTrue((nurse.occurred_at or "").startswith("2024-10-15"), nurse.occurred_at)

        self.client.delete_memory(bank, result.memory_ids[0])
        with self.assertRaises(MnemosError) as caught:
            self.client.get_memory(bank, result.memory_ids[0])
        self.assertEqual(caught.exception.status, 404)
        self.assertTrue(caught.exception.code)
        self.assertEqual(self.client.list_memories(bank, type="raw").total, 2)

        self.client.clear_memories(bank)
        self.assertEqual(self.client.list_memories(bank).total, 0)

    def test_retain_is_idempotent(self) -> None:
        bank = unique_bank("dup")
        first = self.client.retain(bank, "Carol is allergic to peanuts.")
        second = self.client.retain(bank, "Carol is allergic to peanuts.")
        self.assertTrue(second.success)
        self.assertEqual(self.client.list_memories(bank, type="raw").total, 1)
        self.assertEqual(len(first.memory_ids), 1)

    def test_spaces_partition_memory(self) -> None:
        bank = unique_bank("spaces")
        acme = Mnemos(URL, space="acme", timeout=60)
        in_acme = acme.retain(bank, "The acme launch date is the 12th of June.").memory_ids[0]
        in_default = self.client.retain(bank, "The default launch date is the 1st of July.").memory_ids[0]

        acme_ids = {m.id for m in acme.recall(bank, "When is the launch date?").results}
        self.assertIn(in_acme, acme_ids)
        self.assertNotIn(in_default, acme_ids)
        default_ids = {m.id for m in self.client.recall(bank, "When is the launch date?").results}
        self.assertIn(in_default, default_ids)
        self.assertNotIn(in_acme, default_ids)
        # A per-call space overrides the client's default.
        override = {m.id for m in self.client.recall(bank, "When is the launch date?", space="acme").results}
        self.assertIn(in_acme, override)
        self.assertEqual({m.space for m in acme.list_memories(bank, type="raw").items}, {"acme"})

    def test_recall_on_unknown_bank_is_empty(self) -> None:
        self.assertEqual(self.client.recall(unique_bank("nobody"), "anything at all?").results, [])

    def test_banks(self) -> None:
        bank = unique_bank("profile")
        created = self.client.put_bank(bank, name="Dana", mission="Remember Dana's projects.")
        self.assertEqual((created.bank_id, created.name, created.mission),
                         (bank, "Dana", "Remember Dana's projects."))
        fetched = self.client.get_bank(bank)
        self.assertEqual((fetched.bank_id, fetched.name), (bank, "Dana"))
        self.assertEqual(fetched.memory_count, 0)
        self.assertIn(bank, [b.bank_id for b in self.client.list_banks(limit=1000).banks])
        self.client.delete_bank(bank)
        self.assertNotIn(bank, [b.bank_id for b in self.client.list_banks(limit=1000).banks])
        with self.assertRaises(MnemosError) as caught:
            self.client.get_bank(bank)
        self.assertEqual(caught.exception.status, 404)

    def test_errors_are_mapped(self) -> None:
        bank = unique_bank("errors")
        with self.assertRaises(MnemosError) as caught:
            self.client.recall(bank, "")
        error = caught.exception
        self.assertIn(error.status, (400, 422))
        self.assertEqual(error.code, "validation_failed")
        self.assertTrue(error.detail)

        with self.assertRaises(MnemosError) as caught:
            self.client.retain("not a valid bank id!", "x")
        self.assertIn(caught.exception.status, (400, 422))
        self.assertEqual(caught.exception.code, "validation_failed")

        with self.assertRaises(MnemosError) as caught:
            self.client.get_memory(bank, str(uuid.uuid4()))
        self.assertEqual(caught.exception.status, 404)

        with self.assertRaises(MnemosError) as caught:
            self.client.get_bank(unique_bank("missing"))
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "bank_not_found"))

        with self.assertRaises(MnemosError) as caught:
            self.client.retain(bank, "x" * (2 * 1024 * 1024))
        self.assertEqual((caught.exception.status, caught.exception.code), (413, "payload_too_large"))

    def test_update_memory(self) -> None:
        bank = unique_bank("edit")
        memory_id = self.client.retain(bank, "Frank drives a blue bicycle to work.").memory_ids[0]
        edited = self.client.update_memory(bank, memory_id, tags=["commute"], metadata={"checked": "yes"})
        self.assertEqual((edited.id, edited.tags, edited.metadata), (memory_id, ["commute"], {"checked": "yes"}))
        self.assertEqual(self.client.get_memory(bank, memory_id).tags, ["commute"])
        invalidated = self.client.update_memory(bank, memory_id, state="invalidated")
        self.assertEqual(invalidated.state, "invalidated")
        self.assertEqual([m.id for m in self.client.list_memories(bank, state="invalidated").items], [memory_id])
        self.assertNotIn(memory_id, [m.id for m in self.client.recall(bank, "How does Frank get to work?").results])
        with self.assertRaises(MnemosError) as caught:
            self.client.update_memory(bank, str(uuid.uuid4()), tags=["x"])
        self.assertEqual(caught.exception.status, 404)

    def test_bulk_update_get_delete_export_import(self) -> None:
        bank = unique_bank("bulk")
        ids = self.client.retain_batch(bank, ["Ida sails on Sundays.", "Ida sails a red dinghy.", "Ida bakes bread."]
                                       ).memory_ids
        self.assertEqual(self.client.update_memories(bank, ids=ids[:2], tags=["sailing"], metadata={"k": "v"}), 2)
        missing = str(uuid.uuid4())
        got = self.client.get_memories(bank, [ids[1], missing, ids[2]])
        self.assertEqual([m.tags if m else None for m in got], [["sailing"], None, []])
        later = datetime.datetime(2999, 1, 1, tzinfo=datetime.timezone.utc)
        self.assertEqual(self.client.update_memories(bank, ids=[ids[2]], expires_at=later), 1)
        self.assertEqual(self.client.get_memories(bank, [ids[2]])[0].expires_at, "2999-01-01T00:00:00.000Z")
        self.assertEqual(self.client.update_memories(bank, filter={"tags": {"contains": "sailing"}}, state="invalidated"),
                         2)
        self.assertEqual(self.client.delete_matching(bank, {"metadata.k": "v"}, dry_run=True).deleted_count, 2)
        with self.assertRaises(MnemosError) as caught:
            self.client.update_memories(bank, ids=ids)
        self.assertEqual((caught.exception.status, caught.exception.code), (400, "validation_failed"))
        lines = self.client.export_memories(bank)
        self.assertEqual({line["id"] for line in lines}, set(ids))
        target = unique_bank("bulk-target")
        # Ids are unique per tenant: into another bank of the same engine the lines go without theirs.
        fresh = [{k: v for k, v in line.items() if k != "id"} for line in lines]
        self.assertEqual(self.client.import_memories(bank, lines), {"imported": 0, "skipped": 3, "failed": []})
        result = self.client.import_memories(target, fresh + [{"text": ""}])
        self.assertEqual((result["imported"], result["skipped"], [f["line"] for f in result["failed"]]), (3, 0, [4]))
        mem0 = {"results": [{"id": str(uuid.uuid4()), "memory": "Ida's boat is called Wren.", "user_id": "ida"}]}
        self.assertEqual(self.client.import_memories(target, json.dumps(mem0), format="mem0")["imported"],
                         1)
        self.assertEqual(self.client.delete_matching(target, {"metadata.user_id": "ida"}).deleted_count, 1)

    def test_expiry_and_bank_retention(self) -> None:
        bank = unique_bank("expiry")
        kept = self.client.retain(bank, "Ines has a library card.", expires_at="2099-01-01T00:00:00Z").memory_ids[0]
        self.assertEqual(self.client.get_memory(bank, kept).expires_at, "2099-01-01T00:00:00.000Z")
        self.assertIsNone(self.client.update_memory(bank, kept, expires_at=NEVER).expires_at)
        gone = self.client.retain(bank, "Ines had a coupon.", expires_at=datetime.date(2001, 1, 1)).memory_ids[0]
        with self.assertRaises(MnemosError) as caught:
            self.client.get_memory(bank, gone)
        self.assertEqual(caught.exception.status, 404)
        self.assertEqual(self.client.update_bank(bank, retention_days=30).retention_days, 30)
        batch = self.client.retain_batch(bank, ["Ines cycles to work.",
                                                RetainItem("Ines is vegetarian.", expires_at=NEVER)]).memory_ids
        self.assertIsNotNone(self.client.get_memory(bank, batch[0]).expires_at)
        self.assertIsNone(self.client.get_memory(bank, batch[1]).expires_at)
        said = self.client.retain_messages(bank, [{"role": "user", "content": "I move in May.",
                                                   "expires_at": "2099-06-01"}]).memory_ids[0]
        self.assertEqual(self.client.get_memory(bank, said).expires_at, "2099-06-01T00:00:00.000Z")
        self.assertIsNone(self.client.update_bank(bank, retention_days=NEVER).retention_days)
        with self.assertRaises(MnemosError) as caught:
            self.client.retain(bank, "Ines likes jazz.", expires_at="someday")
        self.assertEqual(caught.exception.status, 400)

    def test_supersedes_validity_and_history(self) -> None:
        bank = unique_bank("validity")
        old = self.client.retain(bank, "Gina lives in Rome.", timestamp="2023-01-01T00:00:00Z").memory_ids[0]
        new = self.client.retain(bank, "Gina moved to Turin.", timestamp="2024-01-01T00:00:00Z",
                                 supersedes=[old]).memory_ids[0]
        question = "Where does Gina live?"
        self.assertEqual([m.id for m in self.client.recall(bank, question).results], [new])
        self.assertEqual([m.id for m in self.client.recall(bank, question, as_of="2023-06-01T00:00:00Z").results],
                         [old])
        listed = self.client.list_memories(bank, include_superseded=True).items
        replaced = next(m for m in listed if m.id == old)
        self.assertEqual((replaced.superseded_by, replaced.valid_to), (new, "2024-01-01T00:00:00.000Z"))
        self.assertEqual([m.id for m in self.client.list_memories(bank).items], [new])
        history = self.client.memory_history(bank, old)
        self.assertEqual([v.change for v in history], ["create", "supersede"])
        self.assertEqual(history[0].text, "Gina lives in Rome.")
        reopened = self.client.update_memory(bank, old, valid_to=NEVER)
        self.assertEqual((reopened.valid_to, reopened.superseded_by), (None, None))
        self.assertEqual({m.id for m in self.client.list_memories(bank).items}, {old, new})
        self.client.update_memory(bank, old, valid_to="2024-01-01T00:00:00Z")
        self.client.delete_memory(bank, old)
        forgotten = self.client.memory_history(bank, old)
        self.assertEqual([v.change for v in forgotten][:2] + [forgotten[-1].change], ["create", "supersede", "delete"])
        self.assertEqual({v.text for v in forgotten}, {None})

    def test_entities(self) -> None:
        bank = unique_bank("entities")
        old = self.client.retain(bank, "Gina lives in Rome.", timestamp="2023-01-01T00:00:00Z").memory_ids[0]
        new = self.client.retain(bank, "Gina moved to Turin.", timestamp="2024-01-01T00:00:00Z",
                                 supersedes=[old]).memory_ids[0]
        page = self.client.list_entities(bank, limit=2)
        self.assertEqual([(e.name, e.memory_count) for e in page.items], [("Gina", 2), ("Rome", 1)])
        self.assertIsNotNone(page.next_cursor)
        rest = self.client.list_entities(bank, limit=2, cursor=page.next_cursor)
        self.assertEqual([e.name for e in rest.items], ["Turin"])
        self.assertEqual([e.name for e in self.client.list_entities(bank, prefix="t").items], ["Turin"])
        gina = self.client.get_entity(bank, "gina")
        self.assertEqual((gina.name, [f.id for f in gina.facts]), ("Gina", [new]))
        self.assertEqual([(e.change, e.memory_id) for e in gina.timeline],
                         [("create", old), ("create", new), ("supersede", old)])
        with self.assertRaises(MnemosError) as caught:
            self.client.get_entity(bank, "Nobody")
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "entity_not_found"))

    def test_org_memory(self) -> None:
        space = f"org-{uuid.uuid4().hex[:8]}"
        bank = unique_bank("member")
        policy = "Every launch needs a written rollback plan."
        org_id = self.client.retain_org(space, policy).memory_ids[0]
        self.client.retain(bank, "The mobile app launches next Tuesday.", space)
        org_only = self.client.recall_org(space, "What do launches need?")
        self.assertEqual([(m.id, m.text) for m in org_only.results][:1], [(org_id, policy)])
        blended = self.client.recall(bank, "What do launches need?", space=space, include_org=True)
        self.assertIn((org_id, True), [(m.id, m.org) for m in blended.results])
        without = self.client.recall(bank, "What do launches need?", space=space)
        self.assertNotIn(org_id, [m.id for m in without.results])

    def test_version(self) -> None:
        version = self.client.version()
        self.assertIsInstance(version.get("version"), str)
        self.assertRegex(str(version["version"]), r"^\d+\.\d+\.\d+")

    def test_reflect(self) -> None:
        bank = unique_bank("reflect")
        memory_id = self.client.retain(bank, "Erin's favourite city is Porto.").memory_ids[0]
        if FAKE_LLM:
            answer = self.client.reflect(bank, "What is Erin's favourite city?")
            self.assertTrue(answer.text)
            self.assertIn(memory_id, answer.citations)
        else:
            with self.assertRaises(MnemosError) as caught:
                self.client.reflect(bank, "What is Erin's favourite city?")
            self.assertEqual((caught.exception.status, caught.exception.code), (503, "llm_not_configured"))

    def test_reflect_stream(self) -> None:
        bank = unique_bank("stream")
        memory_id = self.client.retain(bank, "Erin's favourite city is Porto, for its river.").memory_ids[0]
        question = "What is Erin's favourite city?"
        if not FAKE_LLM:
            with self.assertRaises(MnemosError) as caught:
                list(self.client.reflect_stream(bank, question))
            self.assertEqual((caught.exception.status, caught.exception.code), (503, "llm_not_configured"))
            return
        events = list(self.client.reflect_stream(bank, question))
        deltas = [event.text for event in events if isinstance(event, ReflectDelta)]
        self.assertGreaterEqual(len(deltas), 2, "the answer arrives in several pieces")
        done = events[-1]
        self.assertIsInstance(done, ReflectDone)
        assert isinstance(done, ReflectDone)
        self.assertEqual("".join(deltas), done.result.text)
        self.assertIn(memory_id, done.result.citations)
        self.assertEqual(done.result.citations, self.client.reflect(bank, question).citations)
        for event in self.client.reflect_stream(bank, question):
            self.assertEqual(event.type, "delta")
            break


    def test_retain_messages_relevance_and_truncation(self) -> None:
        bank = unique_bank("chat")
        when = datetime.datetime(2024, 7, 1, 9, 0, tzinfo=datetime.timezone.utc)
        chat = [
            {"role": "user", "name": "Ines", "content": "My flight to Porto leaves on the 3rd."},
            {"role": "assistant", "content": "Noted, I will remind you the day before.", "timestamp": when},
        ]
        result = self.client.retain_messages(bank, chat, tags=["travel"])
        self.assertEqual(result.items_count, 2)
        assert result.messages is not None
        self.assertEqual([m.duplicate for m in result.messages], [False, False])
        first = self.client.get_memory(bank, result.messages[0].memory_ids[0])
        self.assertEqual(first.text, "Ines: My flight to Porto leaves on the 3rd.")
        self.assertEqual(first.metadata, {"role": "user", "speaker": "Ines"})
        second = self.client.get_memory(bank, result.messages[1].memory_ids[0])
        self.assertEqual(second.text, "assistant: Noted, I will remind you the day before.")
        self.assertEqual(second.occurred_at, "2024-07-01T09:00:00.000Z")
        again = self.client.retain_messages(bank, chat[:1])
        assert again.messages is not None
        self.assertEqual((again.messages[0].duplicate, again.messages[0].memory_ids), (True, [first.id]))
        with self.assertRaises(MnemosError) as caught:
            self.client.retain_messages(bank, [{"role": "narrator", "content": "x"}])
        self.assertEqual((caught.exception.status, caught.exception.code), (400, "validation_failed"))

        found = self.client.recall(bank, "When does Ines fly to Porto?")
        top = found.results[0]
        self.assertEqual(top.id, first.id)
        assert top.relevance is not None
        self.assertTrue(0 < top.relevance <= 1)
        strict = self.client.recall(bank, "When does Ines fly to Porto?", min_relevance=top.relevance)
        self.assertTrue(all((m.relevance or 0) >= top.relevance for m in strict.results))
        short = self.client.recall(bank, "When does Ines fly to Porto?", max_tokens=4)
        self.assertEqual(len(short.results), 1)
        self.assertTrue(short.results[0].truncated)
        self.assertTrue(first.text.startswith(short.results[0].text))

    def test_cursor_pages_and_iterators(self) -> None:
        bank = unique_bank("pages")
        ids = self.client.retain_batch(bank, [
            RetainItem(f"Cursor note {i}.", timestamp=f"2024-02-0{i + 1}") for i in range(5)
        ]).memory_ids
        page = self.client.list_memories(bank, limit=2)
        self.assertIsNotNone(page.next_cursor)
        after = self.client.list_memories(bank, limit=2, cursor=page.next_cursor)
        self.assertEqual([m.id for m in after.items], [ids[2], ids[1]])
        self.assertEqual([m.id for m in self.client.iterate_memories(bank, limit=2)], ids[::-1])
        banks = [b.bank_id for b in self.client.iterate_banks(limit=1)]
        self.assertIn(bank, banks)
        self.assertEqual(len(set(banks)), len(banks))
        with self.assertRaises(MnemosError) as caught:
            self.client.list_memories(bank, cursor="not-a-cursor")
        self.assertEqual((caught.exception.status, caught.exception.code), (400, "validation_failed"))

    def test_filters_over_metadata_of_any_json(self) -> None:
        bank = unique_bank("filters")
        ids = self.client.retain_batch(bank, [
            RetainItem("Ann pruned the orchid.", metadata={"priority": 3, "done": True, "owner": {"name": "ann"},
                                                          "labels": ["a", 1]}),
            RetainItem("Bo fed the orchid.", metadata={"priority": 10, "done": False, "owner": {"name": "bo"}}),
            RetainItem("Cy misted the orchid.", metadata={"priority": "3"}),
        ]).memory_ids
        urgent = self.client.recall(bank, "orchid", filter={"metadata.priority": {"gte": 5}})
        self.assertEqual([r.id for r in urgent.results], [ids[1]])
        self.assertEqual(urgent.results[0].metadata, {"priority": 10, "done": False, "owner": {"name": "bo"}})
        listed = self.client.list_memories(
            bank, filter={"or": [{"metadata.owner.name": "ann"}, {"metadata.priority": "3"}]})
        self.assertEqual({m.id for m in listed.items}, {ids[0], ids[2]})
        labelled = self.client.iterate_memories(bank, filter={"metadata.labels": {"contains": 1}})
        self.assertEqual([m.id for m in labelled], [ids[0]])
        if FAKE_LLM:
            answer = self.client.reflect(bank, "Who fed the orchid?", filter={"metadata.done": False})
            self.assertEqual(answer.citations, [ids[1]])
        with self.assertRaises(MnemosError) as caught:
            self.client.recall(bank, "orchid", filter={"metadata.priority": {"near": 3}})
        self.assertEqual((caught.exception.status, caught.exception.code), (400, "validation_failed"))
        dry = self.client.delete_matching(bank, {"metadata.done": {"exists": True}}, dry_run=True)
        self.assertEqual(dry.deleted_count, 2)
        self.assertEqual(self.client.list_memories(bank).total, 3)
        gone = self.client.delete_matching(bank, {"metadata.done": {"exists": True}})
        self.assertEqual(gone.deleted_count, 2)
        self.assertEqual([m.id for m in self.client.list_memories(bank).items], [ids[2]])


class LiveEngineAsync(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        require_engine()
        self.client = AsyncMnemos(URL, timeout=60)

    async def test_retain_concurrently_then_recall_and_reflect(self) -> None:
        bank = unique_bank("async")
        facts = ["Grace keeps bees on her roof.", "Grace's favourite tea is jasmine.", "Grace runs on Saturdays."]
        retained = await asyncio.gather(*(self.client.retain(bank, fact) for fact in facts))
        ids = [r.memory_ids[0] for r in retained]
        self.assertEqual(len(set(ids)), 3)
        self.assertEqual((await self.client.list_memories(bank, type="raw")).total, 3)
        hits = await self.client.recall(bank, "Which tea does Grace like?", types=["raw"])
        self.assertEqual(hits.results[0].id, ids[1])
        if FAKE_LLM:
            answer = await self.client.reflect(bank, "Which tea does Grace like?")
            self.assertTrue(answer.text)
            self.assertTrue(set(answer.citations) & set(ids))
        edited = await self.client.update_memory(bank, ids[0], tags=["hobby"])
        self.assertEqual(edited.tags, ["hobby"])
        self.assertTrue((await self.client.delete_bank(bank)).success)

    async def test_reflect_stream(self) -> None:
        bank = unique_bank("async-stream")
        memory_id = (await self.client.retain(bank, "Hugo's favourite city is Lyon, for its food.")).memory_ids[0]
        stream = self.client.reflect_stream(bank, "What is Hugo's favourite city?")
        if not FAKE_LLM:
            with self.assertRaises(MnemosError) as caught:
                async for _ in stream:
                    pass
            self.assertEqual(caught.exception.code, "llm_not_configured")
            return
        events = [event async for event in stream]
        deltas = [event.text for event in events if isinstance(event, ReflectDelta)]
        self.assertGreaterEqual(len(deltas), 2)
        done = events[-1]
        assert isinstance(done, ReflectDone)
        self.assertEqual("".join(deltas), done.result.text)
        self.assertIn(memory_id, done.result.citations)

    async def test_expiry(self) -> None:
        bank = unique_bank("async-expiry")
        memory_id = (await self.client.retain(bank, "Hugo rents a boat.", expires_at="2099-01-01")).memory_ids[0]
        self.assertEqual((await self.client.get_memory(bank, memory_id)).expires_at, "2099-01-01T00:00:00.000Z")
        self.assertIsNone((await self.client.update_memory(bank, memory_id, expires_at=NEVER)).expires_at)
        self.assertEqual((await self.client.update_bank(bank, retention_days=3)).retention_days, 3)

    async def test_memory_history(self) -> None:
        bank = unique_bank("async-history")
        memory_id = (await self.client.retain(bank, "Hugo plays chess.")).memory_ids[0]
        await self.client.update_memory(bank, memory_id, valid_to="2030-01-01T00:00:00Z")
        history = await self.client.memory_history(bank, memory_id)
        self.assertEqual([v.change for v in history], ["create", "expire"])
        self.assertEqual(history[1].valid_to, "2030-01-01T00:00:00.000Z")

    async def test_bulk_calls(self) -> None:
        bank = unique_bank("async-bulk")
        ids = (await self.client.retain_batch(bank, ["Jon climbs.", "Jon swims."])).memory_ids
        self.assertEqual(await self.client.update_memories(bank, ids=ids, tags=["sport"]), 2)
        self.assertEqual([m.tags for m in await self.client.get_memories(bank, ids) if m], [["sport"], ["sport"]])
        text = await self.client.export_text(bank)
        lines = [{k: v for k, v in json.loads(line).items() if k != "id"} for line in text.splitlines()]
        target = unique_bank("async-bulk-target")
        self.assertEqual((await self.client.import_memories(target, lines))["imported"], 2)
        self.assertEqual((await self.client.delete_matching(target, {"tags": "sport"})).deleted_count, 2)

    async def test_entities(self) -> None:
        bank = unique_bank("async-entities")
        memory_id = (await self.client.retain(bank, "Hugo plays chess in Lyon.")).memory_ids[0]
        page = await self.client.list_entities(bank, prefix="H")
        self.assertEqual([(e.name, e.kinds) for e in page.items], [("Hugo", ["name"])])
        hugo = await self.client.get_entity(bank, "Hugo")
        self.assertEqual([f.id for f in hugo.facts], [memory_id])
        with self.assertRaises(MnemosError) as caught:
            await self.client.list_entities(bank, limit=0)
        self.assertEqual(caught.exception.code, "validation_failed")

    async def test_errors_are_mapped(self) -> None:
        with self.assertRaises(MnemosError) as caught:
            await self.client.get_bank(unique_bank("missing"))
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "bank_not_found"))
        with self.assertRaises(MnemosError) as caught:
            await self.client.recall(unique_bank("errors"), "")
        self.assertEqual(caught.exception.code, "validation_failed")
        self.assertIsInstance((await self.client.version()).get("version"), str)

    async def test_filters_and_delete_matching(self) -> None:
        bank = unique_bank("async-filters")
        ids = (await self.client.retain_batch(bank, [
            {"content": "Ivy repotted the cactus.", "metadata": {"n": 1.5, "deep": {"x": [True]}}},
            {"content": "Jo watered the cactus.", "metadata": {"n": 2}},
        ])).memory_ids
        found = await self.client.recall(bank, "cactus", filter={"metadata.n": {"lt": 2}})
        self.assertEqual([r.id for r in found.results], [ids[0]])
        self.assertEqual(found.results[0].metadata, {"n": 1.5, "deep": {"x": [True]}})
        listed = await self.client.list_memories(bank, filter={"metadata.deep.x": {"contains": True}})
        self.assertEqual([m.id for m in listed.items], [ids[0]])
        if FAKE_LLM:
            answer = await self.client.reflect(bank, "Who watered the cactus?", filter={"metadata.n": 2})
            self.assertEqual(answer.citations, [ids[1]])
        gone = await self.client.delete_matching(bank, {"metadata.n": {"gte": 2}})
        self.assertEqual(gone.deleted_count, 1)
        self.assertEqual((await self.client.list_memories(bank)).total, 1)

    async def test_retain_messages_and_iterate(self) -> None:
        bank = unique_bank("async-chat")
        result = await self.client.retain_messages(bank, [
            {"role": "user", "name": "Kofi", "content": "I moved to Accra in May."},
            {"role": "assistant", "content": "How do you like the city?"},
        ])
        assert result.messages is not None
        self.assertEqual([len(m.memory_ids) for m in result.messages], [1, 1])
        found = await self.client.recall(bank, "Where did Kofi move?")
        self.assertEqual(found.results[0].text, "Kofi: I moved to Accra in May.")
        listed = [m.id async for m in self.client.iterate_memories(bank, limit=1)]
        self.assertEqual(sorted(listed), sorted(i for m in result.messages for i in m.memory_ids))
        self.assertIn(bank, [b.bank_id async for b in self.client.iterate_banks(limit=3)])


class Examples(unittest.TestCase):
    """The Python examples in examples/ run against the engine with the package under test."""

    def run_example(self, name: str) -> str:
        require_engine()
        env = dict(os.environ)
        if not helpers.INSTALLED:
            env["PYTHONPATH"] = os.path.join(PROJECT, "src")
        done = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), URL], capture_output=True, text=True,
                              timeout=180, env=env)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        return done.stdout

    def test_quickstart(self) -> None:
        output = self.run_example("python_quickstart.py")
        self.assertIn("retained 1 memory", output)
        self.assertIn("green tea", output)

    def test_async_quickstart(self) -> None:
        output = self.run_example("python_async_quickstart.py")
        self.assertIn("retained 3 memories", output)
        self.assertIn("Bob is allergic to peanuts.", output)
        self.assertRegex(output, r"reflect(: | skipped: )")

if __name__ == "__main__":
    unittest.main()

"""Every API call of the clients, written once: each function turns its arguments into a :class:`Call` (method, path,
query, body, answer parser). :class:`~mnemos_client.Mnemos` sends them and blocks; :class:`~mnemos_client.AsyncMnemos`
sends them and awaits. The docstrings here are the methods' docstrings."""

from __future__ import annotations

import datetime as _dt
import json
from typing import Any, Iterable, List, Mapping, Optional, Sequence, Union

from ._wire import Call, Settings, encode_segment
from .models import (
    Bank,
    BankList,
    DeleteResult,
    Filter,
    JsonDict,
    Memory,
    MemoryList,
    MemoryVersion,
    Metadata,
    memory_history_from_json,
    EntityDetail,
    EntityList,
    Operation,
    RecallResult,
    ReflectResult,
    RetainItem,
    RetainResult,
    Expiry,
    Timestamp,
    _Never,
    Usage,
    format_expiry,
    format_timestamp,
)

Budget = Union[str, int]
RetainInput = Union[str, RetainItem, Mapping[str, Any]]


def _drop_none(values: Mapping[str, Any]) -> JsonDict:
    return {k: v for k, v in values.items() if v is not None}


def _optional_list(values: Optional[Sequence[str]]) -> Optional[List[str]]:
    return None if values is None else list(values)


def _optional_dict(values: Optional[Mapping[str, Any]]) -> Optional[JsonDict]:
    return None if values is None else dict(values)


def _time(value: Optional[Timestamp]) -> Optional[str]:
    return None if value is None else format_timestamp(value)


def _expiry(values: JsonDict, value: Optional[Expiry]) -> JsonDict:
    """``values`` with ``expires_at`` when one is given (:data:`NEVER` is sent as null)."""
    return values if value is None else {**values, "expires_at": format_expiry(value)}


def _retain_item(item: RetainInput) -> JsonDict:
    if isinstance(item, str):
        return {"content": item}
    if isinstance(item, RetainItem):
        return item.to_json()
    if isinstance(item, Mapping):
        out = dict(item)
        ts = out.get("timestamp")
        if isinstance(ts, (_dt.datetime, _dt.date)):
            out["timestamp"] = format_timestamp(ts)
        return out
    raise TypeError(f"retain_batch items must be str, dict or RetainItem, not {type(item).__name__}")


def _as_dict(answer: Any) -> JsonDict:
    return dict(answer) if isinstance(answer, dict) else {"status": answer}


def _space_path(settings: Settings, /, space: str, rest: str) -> str:
    if not isinstance(space, str) or not space:
        raise ValueError("space must be a non-empty string")
    return f"{settings.prefix}/spaces/{encode_segment(space)}{rest}"


def _memory_path(settings: Settings, /, bank_id: str, memory_id: str) -> str:
    return settings.bank_path(bank_id, f"/memories/{encode_segment(memory_id)}")


def _one_memory_fields(
    content: Optional[str],
    timestamp: Optional[Timestamp],
    context: Optional[str],
    metadata: Optional[Metadata],
    tags: Optional[Sequence[str]],
    document_id: Optional[str],
    async_: Optional[bool],
) -> JsonDict:
    return _drop_none({
        "content": content,
        "timestamp": _time(timestamp),
        "context": context,
        "metadata": _optional_dict(metadata),
        "tags": _optional_list(tags),
        "document_id": document_id,
        "async": async_,
    })


def _search_fields(
    query: str,
    max_tokens: Optional[int],
    budget: Optional[Budget],
    types: Optional[Sequence[str]],
    tags: Optional[Sequence[str]],
    tags_match: Optional[str],
    query_timestamp: Optional[Timestamp],
    trace: Optional[bool],
    include: Optional[Mapping[str, Any]],
    min_relevance: Optional[float],
    as_of: Optional[Timestamp] = None,
    include_superseded: Optional[bool] = None,
) -> JsonDict:
    return _drop_none({
        "as_of": _time(as_of),
        "include_superseded": include_superseded,
        "query": query,
        "max_tokens": max_tokens,
        "budget": budget,
        "types": _optional_list(types),
        "tags": _optional_list(tags),
        "tags_match": tags_match,
        "query_timestamp": _time(query_timestamp),
        "trace": trace,
        "include": _optional_dict(include),
        "min_relevance": min_relevance,
    })


def _bank_fields(name: Optional[str], mission: Optional[str], disposition: Optional[Mapping[str, Any]],
                 space: Optional[str], fields: Mapping[str, Any]) -> JsonDict:
    return _drop_none({"name": name, "mission": mission, "disposition": _optional_dict(disposition), "space": space,
                       **fields})


# ---------------------------------------------------------------------- retain / recall / reflect


def retain(
    settings: Settings,
    /,
    bank_id: str,
    content: str,
    space: Optional[str] = None,
    *,
    timestamp: Optional[Timestamp] = None,
    context: Optional[str] = None,
    metadata: Optional[Metadata] = None,
    tags: Optional[Sequence[str]] = None,
    document_id: Optional[str] = None,
    async_: Optional[bool] = None,
    supersedes: Optional[Sequence[str]] = None,
    expires_at: Optional[Expiry] = None,
) -> Call[RetainResult]:
    """Store one memory. What was retained is recallable as soon as this returns (with ``async_=True`` the call
    returns at once with an ``operation_id``). ``supersedes`` names memories of the same bank and space it
    replaces: they stop being current from its ``timestamp``. ``expires_at`` is when it is forgotten (no read
    answers it from then on); without it the bank's ``retention_days`` applies, and ``NEVER`` keeps it."""
    body = _one_memory_fields(content, timestamp, context, metadata, tags, document_id, async_)
    body = _drop_none({**body, "space": settings.space_or_default(space), "supersedes": _optional_list(supersedes)})
    body = _expiry(body, expires_at)
    return Call("POST", settings.bank_path(bank_id, "/memories"), RetainResult.from_json, body=body)


def retain_batch(
    settings: Settings,
    /,
    bank_id: str,
    items: Iterable[RetainInput],
    space: Optional[str] = None,
    async_: bool = False,
) -> Call[RetainResult]:
    """Store several memories in one transaction. Items are strings, dicts (``{"content": ..., "tags": ...}``)
    or :class:`RetainItem`. With ``async_=True`` the call returns at once with an ``operation_id``."""
    body = _drop_none({
        "items": [_retain_item(item) for item in items],
        "space": settings.space_or_default(space),
        "async": async_,
    })
    return Call("POST", settings.bank_path(bank_id, "/memories"), RetainResult.from_json, body=body)


def retain_messages(
    settings: Settings,
    /,
    bank_id: str,
    messages: Iterable[Mapping[str, Any]],
    space: Optional[str] = None,
    *,
    timestamp: Optional[Timestamp] = None,
    context: Optional[str] = None,
    metadata: Optional[Metadata] = None,
    tags: Optional[Sequence[str]] = None,
    document_id: Optional[str] = None,
    async_: Optional[bool] = None,
    expires_at: Optional[Expiry] = None,
) -> Call[RetainResult]:
    """Store chat turns as they are (``{"role": ..., "content": ..., "name": ..., "timestamp": ...,
    "expires_at": ...}``), one memory each, written ``"speaker: content"`` (the speaker is the name, else the role).
    The other arguments are defaults for every message. ``result.messages`` gives each message's memory ids, in
    order, and ``duplicate=True`` for a message already stored."""
    wire = [
        _expiry(_drop_none({**message, "timestamp": _time(message.get("timestamp")), "expires_at": None}),
                message.get("expires_at"))
        for message in messages
    ]
    body = _one_memory_fields(None, timestamp, context, metadata, tags, document_id, async_)
    body = _expiry({**body, "messages": wire, **_drop_none({"space": settings.space_or_default(space)})}, expires_at)
    return Call("POST", settings.bank_path(bank_id, "/memories"), RetainResult.from_json, body=body)


def recall(
    settings: Settings,
    /,
    bank_id: str,
    query: str,
    *,
    space: Optional[str] = None,
    max_tokens: Optional[int] = None,
    budget: Optional[Budget] = None,
    include_org: Optional[bool] = None,
    types: Optional[Sequence[str]] = None,
    tags: Optional[Sequence[str]] = None,
    tags_match: Optional[str] = None,
    query_timestamp: Optional[Timestamp] = None,
    trace: Optional[bool] = None,
    include: Optional[Mapping[str, Any]] = None,
    min_relevance: Optional[float] = None,
    as_of: Optional[Timestamp] = None,
    include_superseded: Optional[bool] = None,
    filter: Optional[Filter] = None,
) -> Call[RecallResult]:
    """Find the memories relevant to ``query``, best first, cut to ``max_tokens`` (the best memory alone is cut to
    it, marked ``truncated``, when it is larger). ``include_org=True`` blends in the org memory of the space;
    ``min_relevance`` (0 to 1) leaves out results whose ``relevance`` is lower. Current memories only, unless
    ``as_of`` (what was valid then) or ``include_superseded=True`` (everything, marked by ``valid_to``). ``filter``
    is a filter expression: only the memories it passes are ranked, e.g. ``{"metadata.priority": {"gte": 2}}``."""
    body = _search_fields(query, max_tokens, budget, types, tags, tags_match, query_timestamp, trace, include,
                          min_relevance, as_of, include_superseded)
    body = _drop_none({**body, "space": settings.space_or_default(space), "include_org": include_org,
                       "filter": _optional_dict(filter)})
    return Call("POST", settings.bank_path(bank_id, "/memories/recall"), RecallResult.from_json, body=body)


def reflect(
    settings: Settings,
    /,
    bank_id: str,
    query: str,
    *,
    space: Optional[str] = None,
    budget: Optional[Budget] = None,
    response_schema: Optional[Mapping[str, Any]] = None,
    include_facts: bool = False,
    context: Optional[str] = None,
    max_tokens: Optional[int] = None,
    types: Optional[Sequence[str]] = None,
    fact_types: Optional[Sequence[str]] = None,
    tags: Optional[Sequence[str]] = None,
    tags_match: Optional[str] = None,
    query_timestamp: Optional[Timestamp] = None,
    include: Optional[Mapping[str, Any]] = None,
    as_of: Optional[Timestamp] = None,
    include_superseded: Optional[bool] = None,
    filter: Optional[Filter] = None,
) -> Call[ReflectResult]:
    """Ask for an answer synthesised from memory, with the ids of the memories it cites; ``filter`` narrows the
    memories it reads. Raises ``MnemosError`` with code ``llm_not_configured`` (503) when the engine has no LLM."""
    wanted = dict(include or {})
    if include_facts:
        wanted.setdefault("facts", {})
    body = _search_fields(query, max_tokens, budget, types, tags, tags_match, query_timestamp, None,
                          wanted or None, None, as_of, include_superseded)
    body = _drop_none({
        **body,
        "space": settings.space_or_default(space),
        "response_schema": _optional_dict(response_schema),
        "context": context,
        "fact_types": _optional_list(fact_types),
        "filter": _optional_dict(filter),
    })
    return Call("POST", settings.bank_path(bank_id, "/reflect"), ReflectResult.from_json, body=body)


def retain_org(
    settings: Settings,
    /,
    space: str,
    content: str,
    *,
    timestamp: Optional[Timestamp] = None,
    context: Optional[str] = None,
    metadata: Optional[Metadata] = None,
    tags: Optional[Sequence[str]] = None,
    document_id: Optional[str] = None,
    async_: Optional[bool] = None,
) -> Call[RetainResult]:
    """Store org memory of a space: shared by every bank of the space (``recall(..., include_org=True)`` blends it
    in; :meth:`recall_org` searches it alone)."""
    body = _one_memory_fields(content, timestamp, context, metadata, tags, document_id, async_)
    return Call("POST", _space_path(settings, space, "/memories"), RetainResult.from_json, body=body)


def recall_org(
    settings: Settings,
    /,
    space: str,
    query: str,
    *,
    max_tokens: Optional[int] = None,
    budget: Optional[Budget] = None,
    types: Optional[Sequence[str]] = None,
    tags: Optional[Sequence[str]] = None,
    tags_match: Optional[str] = None,
    query_timestamp: Optional[Timestamp] = None,
    trace: Optional[bool] = None,
    include: Optional[Mapping[str, Any]] = None,
    min_relevance: Optional[float] = None,
) -> Call[RecallResult]:
    """Search a space's org memory alone, best first (``min_relevance`` as in :func:`recall`)."""
    body = _search_fields(query, max_tokens, budget, types, tags, tags_match, query_timestamp, trace, include,
                          min_relevance)
    return Call("POST", _space_path(settings, space, "/memories/recall"), RecallResult.from_json, body=body)


# ---------------------------------------------------------------------- banks


def list_banks(settings: Settings, /, *, limit: Optional[int] = None, offset: Optional[int] = None,
               q: Optional[str] = None, cursor: Optional[str] = None) -> Call[BankList]:
    """One page of the tenant's banks, most recently written first (``q`` filters by id or name). ``cursor`` is a
    previous page's ``next_cursor``: the page after it."""
    return Call("GET", f"{settings.prefix}/banks", BankList.from_json,
                query={"limit": limit, "offset": offset, "q": q, "cursor": cursor})


def get_bank(settings: Settings, /, bank_id: str) -> Call[Bank]:
    """A bank's profile (``bank_not_found`` if it does not exist)."""
    return Call("GET", settings.bank_path(bank_id), Bank.from_json)


def put_bank(
    settings: Settings,
    /,
    bank_id: str,
    *,
    name: Optional[str] = None,
    mission: Optional[str] = None,
    disposition: Optional[Mapping[str, Any]] = None,
    space: Optional[str] = None,
    **fields: Any,
) -> Call[Bank]:
    """Create the bank or replace its profile. Extra keyword fields are sent as they are."""
    body = _bank_fields(name, mission, disposition, space, fields)
    return Call("PUT", settings.bank_path(bank_id), Bank.from_json, body=body)


def update_bank(
    settings: Settings,
    /,
    bank_id: str,
    *,
    name: Optional[str] = None,
    mission: Optional[str] = None,
    disposition: Optional[Mapping[str, Any]] = None,
    space: Optional[str] = None,
    retention_days: Union[int, _Never, None] = None,
    **fields: Any,
) -> Call[Bank]:
    """Change some fields of an existing bank's profile (``bank_not_found`` if it does not exist).
    ``retention_days`` gives the memories it stores from now on an ``expires_at`` that many days ahead (those
    already stored keep theirs); ``NEVER`` removes it."""
    body = _bank_fields(name, mission, disposition, space, fields)
    if retention_days is not None:
        body["retention_days"] = None if isinstance(retention_days, _Never) else retention_days
    return Call("PATCH", settings.bank_path(bank_id), Bank.from_json, body=body)


def delete_bank(settings: Settings, /, bank_id: str) -> Call[DeleteResult]:
    """Erase the bank and everything derived from it."""
    return Call("DELETE", settings.bank_path(bank_id), DeleteResult.from_json)


# ---------------------------------------------------------------------- memories


def list_memories(
    settings: Settings,
    /,
    bank_id: str,
    *,
    space: Optional[str] = None,
    type: Optional[str] = None,
    q: Optional[str] = None,
    tags: Optional[Sequence[str]] = None,
    limit: Optional[int] = None,
    offset: Optional[int] = None,
    since: Optional[Timestamp] = None,
    until: Optional[Timestamp] = None,
    document_id: Optional[str] = None,
    state: Optional[str] = None,
    cursor: Optional[str] = None,
    as_of: Optional[Timestamp] = None,
    include_superseded: Optional[bool] = None,
    filter: Optional[Filter] = None,
) -> Call[MemoryList]:
    """One page of the bank's memories, newest first, filtered by space, type, text, tags, time, document or state
    (``valid`` or ``invalidated``), and by ``filter``, a filter expression. ``cursor`` is a previous page's
    ``next_cursor``: the page after it, unmoved by memories added meanwhile (not combined with ``offset``; a cursor
    belongs to its filter)."""
    query = {
        "space": settings.space_or_default(space),
        "type": type,
        "q": q,
        "tags": _optional_list(tags),
        "limit": limit,
        "offset": offset,
        "since": _time(since),
        "until": _time(until),
        "document_id": document_id,
        "state": state,
        "cursor": cursor,
        "as_of": _time(as_of),
        "include_superseded": include_superseded,
        # The query string carries the expression as JSON text.
        "filter": None if filter is None else json.dumps(filter, ensure_ascii=False, separators=(",", ":")),
    }
    return Call("GET", settings.bank_path(bank_id, "/memories"), MemoryList.from_json, query=query)


def get_memory(settings: Settings, /, bank_id: str, memory_id: str) -> Call[Memory]:
    """One memory by id (``memory_not_found`` if the bank has none with it)."""
    return Call("GET", _memory_path(settings, bank_id, memory_id), Memory.from_json)


def update_memory(
    settings: Settings,
    /,
    bank_id: str,
    memory_id: str,
    *,
    text: Optional[str] = None,
    tags: Optional[Sequence[str]] = None,
    metadata: Optional[Metadata] = None,
    context: Optional[str] = None,
    occurred_at: Optional[Timestamp] = None,
    state: Optional[str] = None,
    valid_from: Optional[Timestamp] = None,
    valid_to: Optional[Expiry] = None,
    expires_at: Optional[Expiry] = None,
    **fields: Any,
) -> Call[Memory]:
    """Edit a memory's text, tags, metadata, context or time, or invalidate it with ``state="invalidated"`` (it then
    stays listed but is no longer recalled). ``expires_at`` sets when it is forgotten (with the facts read from it);
    ``NEVER`` keeps it. ``valid_to`` closes its validity at an instant; ``valid_to=NEVER`` makes it current again.
    Answers the memory as it now is."""
    body = _drop_none({
        "text": text,
        "tags": _optional_list(tags),
        "metadata": _optional_dict(metadata),
        "context": context,
        "occurred_at": _time(occurred_at),
        "state": state,
        "valid_from": _time(valid_from),
        **fields,
    })
    if valid_to is not None:
        body["valid_to"] = format_expiry(valid_to)
    body = _expiry(body, expires_at)
    return Call("PATCH", _memory_path(settings, bank_id, memory_id), Memory.from_json, body=body)


def memory_history(settings: Settings, /, bank_id: str, memory_id: str) -> Call[List[MemoryVersion]]:
    """A memory's versions, oldest first; a deleted memory keeps only a tombstone, its text forgotten in every
    version."""
    return Call("GET", _memory_path(settings, bank_id, memory_id) + "/history", memory_history_from_json)


def list_entities(settings: Settings, /, bank_id: str, *, space: Optional[str] = None, prefix: Optional[str] = None,
                  limit: Optional[int] = None, cursor: Optional[str] = None) -> Call[EntityList]:
    """One page of the names the bank's memories carry, in name order, optionally only those starting with
    ``prefix`` (any case). ``cursor`` is a previous page's ``next_cursor``."""
    query = {"space": settings.space_or_default(space), "prefix": prefix, "limit": limit, "cursor": cursor}
    return Call("GET", settings.bank_path(bank_id, "/entities"), EntityList.from_json, query=query)


def get_entity(settings: Settings, /, bank_id: str, name: str, *, space: Optional[str] = None,
               limit: Optional[int] = None) -> Call[EntityDetail]:
    """One entity by name (any case): its current facts and the timeline of their changes, read from the
    ``limit`` latest memories naming it (``entity_not_found`` if none does)."""
    path = settings.bank_path(bank_id, f"/entities/{encode_segment(name)}")
    return Call("GET", path, EntityDetail.from_json, query={"space": settings.space_or_default(space), "limit": limit})


def delete_memory(settings: Settings, /, bank_id: str, memory_id: str) -> Call[DeleteResult]:
    """Hard-delete one memory (and the facts derived from it)."""
    return Call("DELETE", _memory_path(settings, bank_id, memory_id), DeleteResult.from_json)


def delete_matching(settings: Settings, /, bank_id: str, filter: Filter, *, space: Optional[str] = None,
                    dry_run: Optional[bool] = None) -> Call[DeleteResult]:
    """Delete, in one transaction, the memories ``filter`` passes (and the facts derived from them), in ``space``
    (default: the client's space; all spaces when neither is set). ``dry_run=True`` only counts them. The answer's
    ``deleted_count`` is how many (would have) gone."""
    body = _drop_none({"filter": dict(filter), "space": settings.space_or_default(space), "dry_run": dry_run})
    return Call("POST", settings.bank_path(bank_id, "/memories/delete"), DeleteResult.from_json, body=body)


def clear_memories(settings: Settings, /, bank_id: str, *, space: Optional[str] = None,
                   type: Optional[str] = None) -> Call[DeleteResult]:
    """Erase the bank's memories in ``space`` (default: the client's space; all spaces when neither is set),
    optionally of one ``type``."""
    return Call("DELETE", settings.bank_path(bank_id, "/memories"), DeleteResult.from_json,
                query={"space": settings.space_or_default(space), "type": type})


def _updated_count(data: Any) -> int:
    return int(data["updated_count"]) if isinstance(data, dict) else 0


def update_memories(
    settings: Settings,
    /,
    bank_id: str,
    *,
    filter: Optional[Mapping[str, Any]] = None,
    ids: Optional[Sequence[str]] = None,
    metadata: Optional[Metadata] = None,
    tags: Optional[Sequence[str]] = None,
    state: Optional[str] = None,
    expires_at: Optional[Expiry] = None,
    space: Optional[str] = None,
) -> Call[int]:
    """Set ``metadata``, ``tags``, ``state`` or ``expires_at`` on every memory ``filter`` passes or ``ids`` names (one
    of the two), in one transaction; each replaces the old value, as :meth:`update_memory` does (``expires_at=NEVER``
    keeps them). Answers how many memories changed."""
    body = _drop_none({
        "filter": _optional_dict(filter),
        "ids": _optional_list(ids),
        "set": _expiry(
            _drop_none({"metadata": _optional_dict(metadata), "tags": _optional_list(tags), "state": state}),
            expires_at,
        ),
        "space": settings.space_or_default(space),
    })
    return Call("POST", settings.bank_path(bank_id, "/memories/update"), _updated_count, body=body)


def _memories_in_order(data: Any) -> List[Optional[Memory]]:
    items = data.get("items", []) if isinstance(data, dict) else []
    return [Memory.from_json(i["memory"]) if i.get("found") else None for i in items]


def get_memories(settings: Settings, /, bank_id: str, ids: Sequence[str], *,
                 space: Optional[str] = None) -> Call[List[Optional[Memory]]]:
    """Several memories by id (at most 1000), in the order asked: ``None`` where the bank holds no memory of an id."""
    body = _drop_none({"ids": list(ids), "space": settings.space_or_default(space)})
    return Call("POST", settings.bank_path(bank_id, "/memories/get"), _memories_in_order, body=body)


def _ndjson(text: str) -> List[JsonDict]:
    return [json.loads(line) for line in text.split("\n") if line.strip()]


def export_memories(settings: Settings, /, bank_id: str, *, space: Optional[str] = None) -> Call[List[JsonDict]]:
    """Every memory of the bank (retained memories, then facts) as the lines of ``GET .../export``, read whole: for a
    bank larger than memory, stream the export with ``mnemos export BANK > bank.ndjson`` instead."""
    return Call("GET", settings.bank_path(bank_id, "/export"), _ndjson,
                query={"space": settings.space_or_default(space)}, text_answer=True)


def _text(answer: Any) -> str:
    return str(answer)


def export_text(settings: Settings, /, bank_id: str, *, space: Optional[str] = None) -> Call[str]:
    """The bank's export as its NDJSON text (one memory a line), read whole."""
    return Call("GET", settings.bank_path(bank_id, "/export"), _text,
                query={"space": settings.space_or_default(space)}, text_answer=True)


def import_memories(settings: Settings, /, bank_id: str, memories: Union[str, Sequence[Mapping[str, Any]]], *,
                    space: Optional[str] = None, format: Optional[str] = None) -> Call[JsonDict]:
    """Import memories: the lines of an export (NDJSON text, or the memories as dicts), or with ``format="mem0"`` a mem0
    get_all JSON document. Ids are kept, memories already there skipped; answers ``{"imported", "skipped", "failed":
    [{"line", "problem"}]}``. One call is one request, within the server's import limit."""
    text = memories if isinstance(memories, str) else "\n".join(json.dumps(dict(m)) for m in memories)
    media = "application/json" if format == "mem0" else "application/x-ndjson"
    return Call("POST", settings.bank_path(bank_id, "/import"), _as_dict,
                query={"space": space, "format": format}, raw_body=(text.encode("utf-8"), media))


# ---------------------------------------------------------------------- the rest


def operation(settings: Settings, /, operation_id: str) -> Call[Operation]:
    """Status of an asynchronous retain or extraction."""
    return Call("GET", f"{settings.prefix}/operations/{encode_segment(operation_id)}", Operation.from_json)


def usage(settings: Settings, /) -> Call[Usage]:
    """Usage of the key's project against its quotas (gateway only: ``GET /v1/me/usage``)."""
    return Call("GET", "/v1/me/usage", Usage.from_json)


def health(settings: Settings, /) -> Call[JsonDict]:
    """``GET /health``: raises ``MnemosError`` (503) while the server warms up."""
    return Call("GET", "/health", _as_dict)


def version(settings: Settings, /) -> Call[JsonDict]:
    """``GET /version``: the server's version and enabled features."""
    return Call("GET", "/version", _as_dict)


def request(
    settings: Settings,
    /,
    method: str,
    path: str,
    *,
    query: Optional[Mapping[str, Any]] = None,
    body: Optional[Mapping[str, Any]] = None,
) -> Call[Any]:
    """Any other endpoint, with the client's headers, error mapping and retries: ``path`` starts with ``/`` (for
    example ``client.prefix + "/banks"``); answers the decoded JSON."""
    if not path.startswith("/"):
        raise ValueError(f"path must start with '/', e.g. {settings.prefix}/banks")
    return Call(method.upper(), path, query=query, body=body)

"""Result types. Every parser takes the decoded JSON answer, tolerates missing optional fields and ignores unknown
ones; the whole answer stays available as ``raw`` so fields added by newer servers are never lost."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Mapping, Optional, Union

JsonDict = Dict[str, Any]
#: A memory's metadata: any JSON under string keys (strings, numbers, booleans, None, lists, nested dicts), at most
#: 8 levels deep and 64 KiB as JSON. A dict of strings is one case of it.
Metadata = Mapping[str, Any]
#: A filter expression (docs/api.md, "Filters"): ``{"and": [...]}``, ``{"or": [...]}``, ``{"not": {...}}`` or conditions
#: ``{FIELD: {OP: VALUE}}`` such as ``{"metadata.priority": {"gte": 2}}``; a bare value means ``eq``.
Filter = Mapping[str, Any]
Timestamp = Union[str, _dt.datetime, _dt.date]


class _Never:
    """The type of :data:`NEVER`."""

    def __repr__(self) -> str:
        return "NEVER"


#: Sent as JSON ``null`` where ``None`` means "not sent": ``expires_at=NEVER`` keeps a memory (over its bank's
#: retention, or clearing an expiry it had), ``retention_days=NEVER`` removes a bank's retention.
NEVER = _Never()

#: When a memory is forgotten: a date-time or date, or :data:`NEVER`.
Expiry = Union[Timestamp, _Never]


def format_expiry(value: Expiry) -> Optional[str]:
    """An expiry for the wire: ISO 8601, or None (JSON null) for :data:`NEVER`."""
    return None if isinstance(value, _Never) else format_timestamp(value)


def _dict(value: Any) -> JsonDict:
    return dict(value) if isinstance(value, Mapping) else {}


def _list(value: Any) -> List[Any]:
    return list(value) if isinstance(value, (list, tuple)) else []


def _str(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _optional_int(value: Any) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value: Any) -> Optional[float]:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


@dataclass
class Memory:
    """A stored memory, as returned by recall, list and get."""

    id: str
    text: str
    type: Optional[str] = None
    score: Optional[float] = None
    scores: Dict[str, float] = field(default_factory=dict)
    occurred_at: Optional[str] = None
    created_at: Optional[str] = None
    updated_at: Optional[str] = None
    space: Optional[str] = None
    bank_id: Optional[str] = None
    tags: List[str] = field(default_factory=list)
    metadata: Dict[str, Any] = field(default_factory=dict)
    document_id: Optional[str] = None
    context: Optional[str] = None
    source_id: Optional[str] = None
    superseded_by: Optional[str] = None
    #: When it became true (as set, else ``occurred_at``, else ``created_at``); ``valid_to`` is None while current.
    valid_from: Optional[str] = None
    valid_to: Optional[str] = None
    #: When it is forgotten (no read answers it from then on); None while it is kept.
    expires_at: Optional[str] = None
    state: Optional[str] = None
    entities: List[Any] = field(default_factory=list)
    org: bool = False
    #: Recall only: the calibrated chance (0 to 1) that the memory is relevant; it never rises down a result list.
    relevance: Optional[float] = None
    #: Recall only: the text is the memory's beginning, cut to ``max_tokens``.
    truncated: bool = False
    raw: JsonDict = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Any) -> "Memory":
        d = _dict(data)
        return cls(
            id=str(d.get("id", "")),
            text=str(d.get("text", "")),
            type=_str(d.get("type")) or _str(d.get("fact_type")),
            score=_float(d.get("score")),
            scores={k: float(v) for k, v in _dict(d.get("scores")).items() if _float(v) is not None},
            occurred_at=_str(d.get("occurred_at")) or _str(d.get("occurred_start")),
            created_at=_str(d.get("created_at")),
            updated_at=_str(d.get("updated_at")),
            space=_str(d.get("space")),
            bank_id=_str(d.get("bank_id")),
            tags=[t for t in _list(d.get("tags")) if isinstance(t, str)],
            metadata={str(k): v for k, v in _dict(d.get("metadata")).items()},
            document_id=_str(d.get("document_id")),
            context=_str(d.get("context")),
            source_id=_str(d.get("source_id")),
            superseded_by=_str(d.get("superseded_by")),
            valid_from=_str(d.get("valid_from")),
            valid_to=_str(d.get("valid_to")),
            expires_at=_str(d.get("expires_at")),
            state=_str(d.get("state")),
            entities=_list(d.get("entities")),
            org=d.get("org") is True,
            relevance=_float(d.get("relevance")),
            truncated=d.get("truncated") is True,
            raw=d,
        )


@dataclass
class RetainedMessage:
    """What one message of :meth:`~mnemos_client.Mnemos.retain_messages` became: its memory ids (a long message is
    split), and ``duplicate`` when nothing new was stored (the same speaker said the same already; the ids are then
    the existing memories')."""

    memory_ids: List[str]
    duplicate: bool

    @classmethod
    def from_json(cls, data: Any) -> "RetainedMessage":
        d = _dict(data)
        return cls(memory_ids=[str(m) for m in _list(d.get("memory_ids"))], duplicate=d.get("duplicate") is True)


@dataclass
class RetainResult:
    """Answer of retain / retain_batch."""

    success: bool
    bank_id: str
    items_count: int
    memory_ids: List[str] = field(default_factory=list)
    async_: bool = False
    operation_id: Optional[str] = None
    usage: Optional[JsonDict] = None
    #: Per message sent to retain_messages, in order (synchronous retains only).
    messages: Optional[List[RetainedMessage]] = None
    raw: JsonDict = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Any) -> "RetainResult":
        d = _dict(data)
        usage = d.get("usage")
        messages = d.get("messages")
        return cls(
            success=d.get("success") is not False,
            bank_id=str(d.get("bank_id", "")),
            items_count=_int(d.get("items_count")),
            memory_ids=[str(m) for m in _list(d.get("memory_ids"))],
            async_=d.get("async") is True,
            operation_id=_str(d.get("operation_id")),
            usage=dict(usage) if isinstance(usage, Mapping) else None,
            messages=[RetainedMessage.from_json(m) for m in messages] if isinstance(messages, list) else None,
            raw=d,
        )


@dataclass
class RecallResult:
    """Answer of recall: the memories, best first."""

    results: List[Memory]
    usage: JsonDict = field(default_factory=dict)
    trace: Optional[JsonDict] = None
    raw: JsonDict = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Any) -> "RecallResult":
        d = _dict(data)
        trace = d.get("trace")
        return cls(
            results=[Memory.from_json(r) for r in _list(d.get("results"))],
            usage=_dict(d.get("usage")),
            trace=dict(trace) if isinstance(trace, Mapping) else None,
            raw=d,
        )

    def __iter__(self) -> Iterator[Memory]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)


@dataclass
class ReflectResult:
    """Answer of reflect: the synthesised text and the ids of the memories it cites."""

    text: str
    citations: List[str] = field(default_factory=list)
    based_on: Optional[Any] = None
    structured_output: Optional[Any] = None
    usage: JsonDict = field(default_factory=dict)
    raw: JsonDict = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Any) -> "ReflectResult":
        d = _dict(data)
        return cls(
            text=str(d.get("text", "")),
            citations=[str(c) for c in _list(d.get("citations"))],
            based_on=d.get("based_on"),
            structured_output=d.get("structured_output"),
            usage=_dict(d.get("usage")),
            raw=d,
        )


@dataclass
class ReflectDelta:
    """An event of a streamed reflect: the next piece of the answer's text."""

    text: str
    type: str = "delta"


@dataclass
class ReflectDone:
    """The last event of a streamed reflect: the whole result, as ``reflect`` returns it."""

    result: ReflectResult
    type: str = "done"


@dataclass
class Bank:
    """A bank profile."""

    bank_id: str
    name: Optional[str] = None
    mission: Optional[str] = None
    disposition: Optional[JsonDict] = None
    background: Optional[str] = None
    space: Optional[str] = None
    memory_count: Optional[int] = None
    created_at: Optional[str] = None
    updated_at: Optional[str] = None
    last_write_at: Optional[str] = None
    #: Days a memory retained without an expiry of its own is kept; None: kept until deleted.
    retention_days: Optional[int] = None
    raw: JsonDict = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Any) -> "Bank":
        d = _dict(data)
        disposition = d.get("disposition")
        return cls(
            bank_id=str(d.get("bank_id", d.get("id", ""))),
            name=_str(d.get("name")),
            mission=_str(d.get("mission")),
            disposition=dict(disposition) if isinstance(disposition, Mapping) else None,
            background=_str(d.get("background")),
            space=_str(d.get("space")),
            memory_count=_optional_int(d.get("memory_count")),
            created_at=_str(d.get("created_at")),
            updated_at=_str(d.get("updated_at")),
            last_write_at=_str(d.get("last_write_at")),
            retention_days=_optional_int(d.get("retention_days")),
            raw=d,
        )


@dataclass
class BankList:
    """One page of banks."""

    banks: List[Bank]
    total: int
    limit: int
    offset: int
    #: Pass as ``cursor`` for the next page; None when this page is not full.
    next_cursor: Optional[str] = None
    raw: JsonDict = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Any) -> "BankList":
        d = _dict(data)
        banks = [Bank.from_json(b) for b in _list(d.get("banks"))]
        return cls(banks=banks, total=_int(d.get("total"), len(banks)), limit=_int(d.get("limit"), len(banks)),
                   offset=_int(d.get("offset")), next_cursor=_str(d.get("next_cursor")), raw=d)


@dataclass
class MemoryList:
    """One page of memories."""

    items: List[Memory]
    total: int
    limit: int
    offset: int
    #: Pass as ``cursor`` for the next page; None when this page is not full.
    next_cursor: Optional[str] = None
    raw: JsonDict = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Any) -> "MemoryList":
        d = _dict(data)
        items = [Memory.from_json(m) for m in _list(d.get("items"))]
        return cls(items=items, total=_int(d.get("total"), len(items)), limit=_int(d.get("limit"), len(items)),
                   offset=_int(d.get("offset")), next_cursor=_str(d.get("next_cursor")), raw=d)


@dataclass
class DeleteResult:
    """Answer of a delete: whether it succeeded and, when the server says, how many rows went."""

    success: bool
    deleted_count: Optional[int] = None
    raw: JsonDict = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Any) -> "DeleteResult":
        d = _dict(data)
        return cls(success=d.get("success") is not False,
                   deleted_count=_optional_int(d.get("deleted_count", d.get("deleted"))), raw=d)


@dataclass
class Operation:
    """Status of an asynchronous retain or extraction."""

    id: str
    status: str
    raw: JsonDict = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Any) -> "Operation":
        d = _dict(data)
        return cls(id=str(d.get("id", d.get("operation_id", ""))), status=str(d.get("status", "")), raw=d)


@dataclass
class QuotaUsage:
    used: int
    limit: Optional[int] = None

    @classmethod
    def from_json(cls, data: Any) -> "QuotaUsage":
        d = _dict(data)
        return cls(used=_int(d.get("used")), limit=_optional_int(d.get("limit")))


@dataclass
class Usage:
    """Usage of the current project against its quotas (gateway ``GET /v1/me/usage``)."""

    period: Optional[str]
    memories: QuotaUsage
    recalls: QuotaUsage
    reflects: QuotaUsage
    raw: JsonDict = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Any) -> "Usage":
        d = _dict(data)
        period = d.get("period")
        return cls(
            period=period if isinstance(period, str) else (None if period is None else str(period)),
            memories=QuotaUsage.from_json(d.get("memories")),
            recalls=QuotaUsage.from_json(d.get("recalls")),
            reflects=QuotaUsage.from_json(d.get("reflects")),
            raw=d,
        )


@dataclass
class RetainItem:
    """One item of a batch retain. Plain strings and dicts are accepted too."""

    content: str
    timestamp: Optional[Timestamp] = None
    context: Optional[str] = None
    metadata: Optional[Metadata] = None
    tags: Optional[List[str]] = None
    document_id: Optional[str] = None
    #: When its memories are forgotten; :data:`NEVER` keeps them over the bank's retention.
    expires_at: Optional[Expiry] = None

    def to_json(self) -> JsonDict:
        out: JsonDict = {"content": self.content}
        if self.timestamp is not None:
            out["timestamp"] = format_timestamp(self.timestamp)
        if self.context is not None:
            out["context"] = self.context
        if self.metadata is not None:
            out["metadata"] = dict(self.metadata)
        if self.tags is not None:
            out["tags"] = list(self.tags)
        if self.document_id is not None:
            out["document_id"] = self.document_id
        if self.expires_at is not None:
            out["expires_at"] = format_expiry(self.expires_at)
        return out


def format_timestamp(value: Timestamp) -> str:
    """ISO 8601 for the wire. A naive datetime is taken as UTC; a date stays date-only."""
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        text = value.isoformat()
        return text[:-6] + "Z" if text.endswith("+00:00") else text
    if isinstance(value, _dt.date):
        return value.isoformat()
    return str(value)


@dataclass(frozen=True)
class MemoryVersion:
    """One version of a memory's history. A deleted memory's versions keep no ``text`` or ``metadata`` (None)."""

    version: int
    change: str
    text: Optional[str]
    metadata: Optional[Dict[str, Any]]
    state: Optional[str]
    valid_from: Optional[str]
    valid_to: Optional[str]
    superseded_by: Optional[str]
    changed_at: Optional[str]
    operation_id: Optional[str] = None

    @classmethod
    def from_json(cls, data: Any) -> "MemoryVersion":
        d = _dict(data)
        metadata = d.get("metadata")
        return cls(
            version=int(d.get("version", 0)),
            change=str(d.get("change", "")),
            text=_str(d.get("text")),
            metadata=None if metadata is None else {str(k): v for k, v in _dict(metadata).items()},
            state=_str(d.get("state")),
            valid_from=_str(d.get("valid_from")),
            valid_to=_str(d.get("valid_to")),
            superseded_by=_str(d.get("superseded_by")),
            changed_at=_str(d.get("changed_at")),
            operation_id=_str(d.get("operation_id")),
        )


def memory_history_from_json(data: Any) -> List[MemoryVersion]:
    """The versions of ``GET .../memories/{id}/history``, oldest first."""
    return [MemoryVersion.from_json(item) for item in _list(_dict(data).get("items"))]


@dataclass(frozen=True)
class Entity:
    """A name the bank's memories carry: how it was found (``kinds``: ``speaker`` and ``name`` by the cheap
    extractor, ``extracted`` by the LLM, ``given`` by the caller), how many memories name it, and the earliest and
    latest ``valid_from`` of those memories."""

    name: str
    kinds: List[str]
    memory_count: int
    first_seen: Optional[str]
    last_seen: Optional[str]

    @classmethod
    def from_json(cls, data: Any) -> "Entity":
        d = _dict(data)
        return cls(name=str(d.get("name", "")), kinds=[str(k) for k in _list(d.get("kinds"))],
                   memory_count=_int(d.get("memory_count")), first_seen=_str(d.get("first_seen")),
                   last_seen=_str(d.get("last_seen")))


@dataclass
class EntityList:
    """One page of a bank's entities, in name order."""

    items: List[Entity]
    total: int
    limit: int
    #: Pass as ``cursor`` for the next page; None when there is no more.
    next_cursor: Optional[str] = None
    raw: JsonDict = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Any) -> "EntityList":
        d = _dict(data)
        items = [Entity.from_json(e) for e in _list(d.get("items"))]
        return cls(items=items, total=_int(d.get("total"), len(items)), limit=_int(d.get("limit"), len(items)),
                   next_cursor=_str(d.get("next_cursor")), raw=d)


@dataclass(frozen=True)
class EntityEvent:
    """One change in an entity's timeline. ``at`` is when it took effect (a memory's ``valid_from`` when created, its
    ``valid_to`` when closed); ``version`` is None when the event is read from validity (no history kept)."""

    at: str
    change: str
    memory_id: str
    version: Optional[int]
    text: Optional[str]
    valid_from: Optional[str]
    valid_to: Optional[str]
    superseded_by: Optional[str]
    changed_at: Optional[str]

    @classmethod
    def from_json(cls, data: Any) -> "EntityEvent":
        d = _dict(data)
        return cls(at=str(d.get("at", "")), change=str(d.get("change", "")), memory_id=str(d.get("memory_id", "")),
                   version=_optional_int(d.get("version")), text=_str(d.get("text")),
                   valid_from=_str(d.get("valid_from")), valid_to=_str(d.get("valid_to")),
                   superseded_by=_str(d.get("superseded_by")), changed_at=_str(d.get("changed_at")))


@dataclass
class EntityDetail:
    """One entity: its current facts (memories valid now, latest first) and the timeline of their changes."""

    entity: Entity
    facts: List["Memory"]
    timeline: List[EntityEvent]
    raw: JsonDict = field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        return self.entity.name

    @classmethod
    def from_json(cls, data: Any) -> "EntityDetail":
        d = _dict(data)
        return cls(entity=Entity.from_json(d), facts=[Memory.from_json(m) for m in _list(d.get("facts"))],
                   timeline=[EntityEvent.from_json(e) for e in _list(d.get("timeline"))], raw=d)

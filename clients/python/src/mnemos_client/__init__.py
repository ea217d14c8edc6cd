"""Python client for Mnemos, persistent memory for AI agents: retain, recall, reflect.

>>> from mnemos_client import Mnemos
>>> m = Mnemos(base_url="http://localhost:8888")
>>> m.retain("alice", "Alice prefers tea over coffee")          # doctest: +SKIP
>>> m.recall("alice", "What does Alice drink?").results[0].text  # doctest: +SKIP

:class:`AsyncMnemos` has the same methods as coroutines, for ``asyncio``.
"""

from ._version import __version__
from ._wire import parse_retry_after
from .aio import AsyncMnemos
from .client import Mnemos
from .errors import MnemosError
from .models import (
    Bank,
    BankList,
    DeleteResult,
    Entity,
    EntityDetail,
    EntityEvent,
    EntityList,
    Filter,
    NEVER,
    Memory,
    MemoryList,
    MemoryVersion,
    Metadata,
    Operation,
    QuotaUsage,
    RecallResult,
    ReflectDelta,
    ReflectDone,
    ReflectResult,
    RetainItem,
    RetainResult,
    Usage,
    RetainedMessage,
)

__all__ = [
    "__version__",
    "Mnemos",
    "AsyncMnemos",
    "MnemosError",
    "Bank",
    "Entity",
    "EntityDetail",
    "EntityEvent",
    "EntityList",
    "BankList",
    "DeleteResult",
    "Filter",
    "Metadata",
    "NEVER",
    "Memory",
    "MemoryList",
    "MemoryVersion",
    "Operation",
    "QuotaUsage",
    "RecallResult",
    "ReflectResult",
    "ReflectDelta",
    "ReflectDone",
    "RetainItem",
    "RetainResult",
    "Usage",
    "parse_retry_after",
    "RetainedMessage",
]

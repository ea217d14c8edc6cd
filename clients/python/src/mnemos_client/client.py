"""The synchronous Mnemos client (standard library only)."""

from __future__ import annotations

import datetime as _dt
import email.utils
import http.client
import json
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ._version import __version__
from .errors import MnemosError
from .models import (
    Bank,
    BankList,
    DeleteResult,
    JsonDict,
    Memory,
    MemoryList,
    Operation,
    RecallResult,
    ReflectResult,
    RetainItem,
    RetainResult,
    Timestamp,
    Usage,
    format_timestamp,
)

Budget = Union[str, int]
RetainInput = Union[str, RetainItem, Mapping[str, Any]]

#: Codes that a retry cannot fix, even when they come with 429 or 503.
_PERMANENT_CODES = frozenset({"llm_not_configured", "encryption_key_mismatch", "quota_exceeded"})

#: Code used when an error answer carries none (a proxy's HTML page, an older server).
_DEFAULT_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "validation_failed",
    429: "rate_limited",
    500: "internal_error",
    502: "bad_gateway",
    503: "service_unavailable",
    504: "gateway_timeout",
}


class _NoAnswer(Exception):
    """Internal: the request got no HTTP answer (connection refused or reset, timeout)."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP date. None when absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=_dt.timezone.utc)
        current = time.time() if now is None else now
        return max(0.0, when.timestamp() - current)
    if seconds != seconds or seconds < 0:  # NaN or negative
        return None
    return seconds


def _error_from_answer(status: int, retry_after_header: Optional[str], raw: bytes) -> MnemosError:
    """Build a MnemosError from a non-2xx answer: an RFC 9457 problem document, a FastAPI ``{"detail": ...}`` body,
    or plain text."""
    text = raw.decode("utf-8", errors="replace")
    retry_after = parse_retry_after(retry_after_header)
    fallback_code = _DEFAULT_CODES.get(status, "server_error" if status >= 500 else "client_error")
    reason = http.client.responses.get(status, "HTTP error")
    try:
        body: Any = json.loads(text) if text.strip() else None
    except ValueError:
        body = None
    if not isinstance(body, dict):
        detail = text.strip()[:1000] or f"The server answered {status} {reason}."
        return MnemosError(status, fallback_code, detail, retry_after=retry_after, body=text or None)

    error_value = body.get("error")
    nested: Dict[str, Any] = error_value if isinstance(error_value, dict) else {}  # {"error": {"message", "code"}}
    code = body.get("code") or nested.get("code")
    errors = body.get("errors")
    detail_value = body.get("detail")
    if isinstance(detail_value, list):
        # FastAPI / Pydantic validation list: keep it as the field errors.
        if errors is None:
            errors = detail_value
        messages = [str(e.get("msg", e)) if isinstance(e, dict) else str(e) for e in detail_value]
        detail = "; ".join(messages) or "The request was not valid."
    elif isinstance(detail_value, str) and detail_value:
        detail = detail_value
    elif detail_value is not None and detail_value != "":
        detail = json.dumps(detail_value)
    else:
        message = body.get("message") or nested.get("message") or body.get("title") or (
            error_value if isinstance(error_value, str) else None)
        detail = str(message) if message else f"The server answered {status} {reason}."
    title = body.get("title")
    problem_type = body.get("type")
    return MnemosError(
        status,
        code if isinstance(code, str) and code else fallback_code,
        detail,
        errors if isinstance(errors, list) else None,
        title=title if isinstance(title, str) else None,
        type=problem_type if isinstance(problem_type, str) else None,
        retry_after=retry_after,
        body=body,
    )


def _enc(segment: str) -> str:
    """URL-encode one path segment (``alice@example.com`` -> ``alice%40example.com``)."""
    return urllib.parse.quote(str(segment), safe="")


def _drop_none(values: Mapping[str, Any]) -> JsonDict:
    return {k: v for k, v in values.items() if v is not None}


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


def _time_param(value: Optional[Timestamp]) -> Optional[str]:
    return None if value is None else format_timestamp(value)


class Mnemos:
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
    retried. Every failure raises :class:`MnemosError`.
    """

    def __init__(
        self,
        base_url: str = "http://localhost:8888",
        api_key: Optional[str] = None,
        space: Optional[str] = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        *,
        tenant: Optional[str] = None,
        max_retry_delay: float = 60.0,
        backoff_base: float = 0.5,
        backoff_max: float = 8.0,
        headers: Optional[Mapping[str, str]] = None,
        user_agent: Optional[str] = None,
    ) -> None:
        if not base_url:
            raise ValueError("base_url is required, e.g. http://localhost:8888")
        if max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.space = space
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_retry_delay = max_retry_delay
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        if tenant is not None:
            self.prefix = f"/v1/{_enc(tenant)}"
        else:
            self.prefix = "/v1/me" if api_key else "/v1/default"
        self._headers: Dict[str, str] = {
            "Accept": "application/json, application/problem+json",
            "User-Agent": user_agent or f"mnemos-client-python/{__version__}",
        }
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        if headers:
            self._headers.update(headers)
        self._opener = urllib.request.build_opener()
        # Replaceable for tests (record the waits instead of sleeping).
        self._sleep: Callable[[float], None] = time.sleep

    def __repr__(self) -> str:
        return f"Mnemos(base_url={self.base_url!r}, prefix={self.prefix!r}, space={self.space!r})"

    def __enter__(self) -> "Mnemos":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to release (each call opens its own connection); present for ``with`` blocks."""

    # ------------------------------------------------------------------ transport

    def _backoff(self, attempt: int) -> float:
        ceiling = min(float(self.backoff_max), float(self.backoff_base) * 2.0 ** attempt)
        return ceiling / 2 + random.uniform(0, ceiling / 2)

    def _send(self, method: str, url: str, data: Optional[bytes]) -> Tuple[int, Optional[str], bytes]:
        """One attempt: (status, Retry-After header, body), or _NoAnswer."""
        headers = dict(self._headers)
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                return response.status, response.headers.get("Retry-After"), response.read()
        except urllib.error.HTTPError as error:
            try:
                body = error.read()
            except (OSError, http.client.HTTPException):
                body = b""
            return error.code, error.headers.get("Retry-After") if error.headers else None, body
        except urllib.error.URLError as error:
            reason = error.reason
            if isinstance(reason, (socket.timeout, TimeoutError)):
                raise _NoAnswer("timeout", f"No answer from {self.base_url} within {self.timeout} s.") from error
            raise _NoAnswer("connection_error", f"Could not connect to {self.base_url}: {reason}.") from error
        except (socket.timeout, TimeoutError) as error:
            raise _NoAnswer("timeout", f"No answer from {self.base_url} within {self.timeout} s.") from error
        except (OSError, http.client.HTTPException) as error:
            raise _NoAnswer("connection_error", f"The connection to {self.base_url} failed: {error!r}.") from error

    def _request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, Any]] = None,
        body: Optional[Mapping[str, Any]] = None,
    ) -> Any:
        url = self.base_url + path
        if query:
            pairs: List[Tuple[str, str]] = []
            for key, value in query.items():
                if value is None:
                    continue
                if isinstance(value, (list, tuple)):
                    pairs.extend((key, str(v)) for v in value)
                elif isinstance(value, bool):
                    pairs.append((key, "true" if value else "false"))
                else:
                    pairs.append((key, str(value)))
            if pairs:
                url += "?" + urllib.parse.urlencode(pairs)
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")

        attempt = 0
        while True:
            try:
                status, retry_after, raw = self._send(method, url, data)
            except _NoAnswer as failure:
                if failure.code == "connection_error" and attempt < self.max_retries:
                    self._sleep(self._backoff(attempt))
                    attempt += 1
                    continue
                raise MnemosError(0, failure.code, failure.detail) from failure.__cause__
            if 200 <= status < 300:
                return self._decode(status, raw)
            error = _error_from_answer(status, retry_after, raw)
            if status in (429, 503) and attempt < self.max_retries and error.code not in _PERMANENT_CODES:
                delay = error.retry_after if error.retry_after is not None else self._backoff(attempt)
                if delay <= self.max_retry_delay:
                    self._sleep(delay)
                    attempt += 1
                    continue
            raise error

    @staticmethod
    def _decode(status: int, raw: bytes) -> Any:
        if not raw.strip():
            return {}
        try:
            return json.loads(raw.decode("utf-8"))
        except ValueError as error:
            snippet = raw[:200].decode("utf-8", errors="replace")
            raise MnemosError(status, "invalid_response", f"The server answered {status} with a body that is not "
                                                          f"JSON: {snippet!r}.") from error

    def _space(self, space: Optional[str]) -> Optional[str]:
        return space if space is not None else self.space

    def _bank(self, bank_id: str) -> str:
        if not isinstance(bank_id, str) or not bank_id:
            raise ValueError("bank_id must be a non-empty string")
        return f"{self.prefix}/banks/{_enc(bank_id)}"

    # ------------------------------------------------------------------ retain / recall / reflect

    def retain(
        self,
        bank_id: str,
        content: str,
        space: Optional[str] = None,
        *,
        timestamp: Optional[Timestamp] = None,
        context: Optional[str] = None,
        metadata: Optional[Mapping[str, str]] = None,
        tags: Optional[Sequence[str]] = None,
        document_id: Optional[str] = None,
    ) -> RetainResult:
        """Store one memory. What was retained is recallable as soon as this returns."""
        body = _drop_none({
            "content": content,
            "space": self._space(space),
            "timestamp": _time_param(timestamp),
            "context": context,
            "metadata": None if metadata is None else dict(metadata),
            "tags": None if tags is None else list(tags),
            "document_id": document_id,
        })
        return RetainResult.from_json(self._request("POST", f"{self._bank(bank_id)}/memories", body=body))

    def retain_batch(
        self,
        bank_id: str,
        items: Iterable[RetainInput],
        space: Optional[str] = None,
        async_: bool = False,
    ) -> RetainResult:
        """Store several memories in one transaction. Items are strings, dicts (``{"content": ..., "tags": ...}``)
        or :class:`RetainItem`. With ``async_=True`` the call returns at once with an ``operation_id``."""
        body = _drop_none({
            "items": [_retain_item(item) for item in items],
            "space": self._space(space),
            "async": async_,
        })
        return RetainResult.from_json(self._request("POST", f"{self._bank(bank_id)}/memories", body=body))

    def recall(
        self,
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
    ) -> RecallResult:
        """Find the memories relevant to ``query``, best first, cut to ``max_tokens``."""
        body = _drop_none({
            "query": query,
            "space": self._space(space),
            "max_tokens": max_tokens,
            "budget": budget,
            "include_org": include_org,
            "types": None if types is None else list(types),
            "tags": None if tags is None else list(tags),
            "tags_match": tags_match,
            "query_timestamp": _time_param(query_timestamp),
            "trace": trace,
        })
        return RecallResult.from_json(self._request("POST", f"{self._bank(bank_id)}/memories/recall", body=body))

    def reflect(
        self,
        bank_id: str,
        query: str,
        *,
        space: Optional[str] = None,
        budget: Optional[Budget] = None,
        response_schema: Optional[Mapping[str, Any]] = None,
        include_facts: bool = False,
    ) -> ReflectResult:
        """Ask for an answer synthesised from memory, with the ids of the memories it cites. Raises
        ``MnemosError`` with code ``llm_not_configured`` (503) when the engine has no LLM."""
        body = _drop_none({
            "query": query,
            "space": self._space(space),
            "budget": budget,
            "response_schema": None if response_schema is None else dict(response_schema),
            "include": {"facts": {}} if include_facts else None,
        })
        return ReflectResult.from_json(self._request("POST", f"{self._bank(bank_id)}/reflect", body=body))

    # ------------------------------------------------------------------ banks

    def list_banks(self, *, limit: Optional[int] = None, offset: Optional[int] = None,
                   q: Optional[str] = None) -> BankList:
        return BankList.from_json(self._request("GET", f"{self.prefix}/banks",
                                                query={"limit": limit, "offset": offset, "q": q}))

    def get_bank(self, bank_id: str) -> Bank:
        return Bank.from_json(self._request("GET", self._bank(bank_id)))

    def put_bank(
        self,
        bank_id: str,
        *,
        name: Optional[str] = None,
        mission: Optional[str] = None,
        disposition: Optional[Mapping[str, Any]] = None,
        space: Optional[str] = None,
        **fields: Any,
    ) -> Bank:
        """Create the bank or replace its profile. Extra keyword fields are sent as they are."""
        body = _drop_none({"name": name, "mission": mission,
                           "disposition": None if disposition is None else dict(disposition), "space": space,
                           **fields})
        return Bank.from_json(self._request("PUT", self._bank(bank_id), body=body))

    create_bank = put_bank

    def update_bank(
        self,
        bank_id: str,
        *,
        name: Optional[str] = None,
        mission: Optional[str] = None,
        disposition: Optional[Mapping[str, Any]] = None,
        space: Optional[str] = None,
        **fields: Any,
    ) -> Bank:
        """Change some fields of an existing bank's profile (``bank_not_found`` if it does not exist)."""
        body = _drop_none({"name": name, "mission": mission,
                           "disposition": None if disposition is None else dict(disposition), "space": space,
                           **fields})
        return Bank.from_json(self._request("PATCH", self._bank(bank_id), body=body))

    def delete_bank(self, bank_id: str) -> DeleteResult:
        """Erase the bank and everything derived from it."""
        return DeleteResult.from_json(self._request("DELETE", self._bank(bank_id)))

    # ------------------------------------------------------------------ memories

    def list_memories(
        self,
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
    ) -> MemoryList:
        query = {
            "space": self._space(space),
            "type": type,
            "q": q,
            "tags": None if tags is None else list(tags),
            "limit": limit,
            "offset": offset,
            "since": _time_param(since),
            "until": _time_param(until),
        }
        return MemoryList.from_json(self._request("GET", f"{self._bank(bank_id)}/memories", query=query))

    def get_memory(self, bank_id: str, memory_id: str) -> Memory:
        return Memory.from_json(self._request("GET", f"{self._bank(bank_id)}/memories/{_enc(memory_id)}"))

    def delete_memory(self, bank_id: str, memory_id: str) -> DeleteResult:
        """Hard-delete one memory (and the facts derived from it)."""
        return DeleteResult.from_json(
            self._request("DELETE", f"{self._bank(bank_id)}/memories/{_enc(memory_id)}"))

    def clear_memories(self, bank_id: str, *, space: Optional[str] = None,
                       type: Optional[str] = None) -> DeleteResult:
        """Erase the bank's memories in ``space`` (default: the client's space), optionally of one ``type``."""
        return DeleteResult.from_json(self._request(
            "DELETE", f"{self._bank(bank_id)}/memories", query={"space": self._space(space), "type": type}))

    # ------------------------------------------------------------------ other

    def operation(self, operation_id: str) -> Operation:
        """Status of an asynchronous retain or extraction."""
        return Operation.from_json(self._request("GET", f"{self.prefix}/operations/{_enc(operation_id)}"))

    def usage(self) -> Usage:
        """Usage of the key's project against its quotas (gateway only: ``GET /v1/me/usage``)."""
        return Usage.from_json(self._request("GET", "/v1/me/usage"))

    def health(self) -> JsonDict:
        """``GET /health``: raises ``MnemosError`` (503) while the server warms up."""
        answer = self._request("GET", "/health")
        return dict(answer) if isinstance(answer, dict) else {"status": answer}

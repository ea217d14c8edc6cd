"""What the sync and async clients share, free of any way of waiting: the settings, how a call becomes an HTTP
request, how an answer becomes a result or a MnemosError, and when a failed attempt is tried again. Only
:func:`exchange` touches the network (blocking urllib); the async client runs it in a worker thread."""

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
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Generic, List, Mapping, Optional, Tuple, TypeVar, Union

from ._version import __version__
from .errors import MnemosError

T = TypeVar("T")

#: Codes that a retry cannot fix, even when they come with 429 or 503.
PERMANENT_CODES = frozenset({"llm_not_configured", "encryption_key_mismatch", "quota_exceeded"})

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


def encode_segment(segment: str) -> str:
    """URL-encode one path segment (``alice@example.com`` -> ``alice%40example.com``)."""
    return urllib.parse.quote(str(segment), safe="")


@dataclass(frozen=True)
class Settings:
    """Everything a call needs to know about the client that sends it."""

    base_url: str
    prefix: str
    space: Optional[str]
    headers: Mapping[str, str]
    timeout: float
    max_retries: int
    max_retry_delay: float
    backoff_base: float
    backoff_max: float

    @classmethod
    def create(
        cls,
        base_url: str,
        api_key: Optional[str],
        space: Optional[str],
        timeout: float,
        max_retries: int,
        tenant: Optional[str],
        max_retry_delay: float,
        backoff_base: float,
        backoff_max: float,
        headers: Optional[Mapping[str, str]],
        user_agent: Optional[str],
    ) -> "Settings":
        if not base_url:
            raise ValueError("base_url is required, e.g. http://localhost:8888")
        if max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        if tenant is not None:
            prefix = f"/v1/{encode_segment(tenant)}"
        else:
            prefix = "/v1/me" if api_key else "/v1/default"
        all_headers: Dict[str, str] = {
            "Accept": "application/json, application/problem+json",
            "User-Agent": user_agent or f"mnemos-client-python/{__version__}",
        }
        if api_key:
            all_headers["Authorization"] = f"Bearer {api_key}"
        if headers:
            all_headers.update(headers)
        return cls(base_url.rstrip("/"), prefix, space, all_headers, timeout, max_retries, max_retry_delay,
                   backoff_base, backoff_max)

    def space_or_default(self, space: Optional[str]) -> Optional[str]:
        return space if space is not None else self.space

    def bank_path(self, bank_id: str, rest: str = "") -> str:
        if not isinstance(bank_id, str) or not bank_id:
            raise ValueError("bank_id must be a non-empty string")
        return f"{self.prefix}/banks/{encode_segment(bank_id)}{rest}"


def _identity(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Call(Generic[T]):
    """One API call before it is sent: method, path, query, JSON body and how to read the answer."""

    method: str
    path: str
    parse: Callable[[Any], T] = field(default=_identity)
    query: Optional[Mapping[str, Any]] = None
    body: Optional[Mapping[str, Any]] = None
    #: A body sent as it is (an import): its bytes and media type, instead of ``body`` as JSON.
    raw_body: Optional[Tuple[bytes, str]] = None
    #: The answer is not JSON (an export's NDJSON): ``parse`` gets its text.
    text_answer: bool = False


@dataclass(frozen=True)
class HttpRequest:
    method: str
    url: str
    headers: Mapping[str, str]
    data: Optional[bytes]


@dataclass(frozen=True)
class HttpAnswer:
    status: int
    retry_after: Optional[str]
    body: bytes


@dataclass(frozen=True)
class NoAnswer:
    """The attempt got no HTTP answer: ``timeout`` or ``connection_error``."""

    code: str
    detail: str
    cause: BaseException


def _query_pairs(query: Mapping[str, Any]) -> List[Tuple[str, str]]:
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
    return pairs


def build_request(settings: Settings, call: "Call[Any]") -> HttpRequest:
    url = settings.base_url + call.path
    pairs = _query_pairs(call.query) if call.query else []
    if pairs:
        url += "?" + urllib.parse.urlencode(pairs)
    headers = dict(settings.headers)
    data = None
    if call.raw_body is not None:
        data, headers["Content-Type"] = call.raw_body
    elif call.body is not None:
        headers["Content-Type"] = "application/json"
        data = json.dumps(call.body, ensure_ascii=False).encode("utf-8")
    return HttpRequest(call.method, url, headers, data)


_OPENER = urllib.request.build_opener()


@dataclass(frozen=True)
class OpenStream:
    """A 2xx answer left open, its body to be read as it arrives (a streamed reflect). Close it when done."""

    response: Any


def _read_whole(response: Any) -> HttpAnswer:
    with response:
        return HttpAnswer(response.status, response.headers.get("Retry-After"), response.read())


def exchange(request: HttpRequest, timeout: float, base_url: str) -> Union[HttpAnswer, NoAnswer]:
    """One attempt over blocking urllib: the answer, whatever its status, or why none came."""
    return _attempt(request, timeout, base_url, _read_whole)


def open_stream(request: HttpRequest, timeout: float, base_url: str) -> Union[OpenStream, HttpAnswer, NoAnswer]:
    """One attempt whose 2xx answer is left open (``timeout`` then bounds each wait for more of it); any other
    answer is read whole, as :func:`exchange` reads it."""
    return _attempt(request, timeout, base_url, OpenStream)


def _attempt(request: HttpRequest, timeout: float, base_url: str,
             read: Callable[[Any], Union[HttpAnswer, OpenStream]]) -> Union[HttpAnswer, OpenStream, NoAnswer]:
    prepared = urllib.request.Request(request.url, data=request.data, method=request.method,
                                      headers=dict(request.headers))
    try:
        return read(_OPENER.open(prepared, timeout=timeout))
    except urllib.error.HTTPError as error:
        try:
            body = error.read()
        except (OSError, http.client.HTTPException):
            body = b""
        return HttpAnswer(error.code, error.headers.get("Retry-After") if error.headers else None, body)
    except urllib.error.URLError as error:
        reason = error.reason
        if isinstance(reason, (socket.timeout, TimeoutError)):
            return NoAnswer("timeout", f"No answer from {base_url} within {timeout} s.", error)
        return NoAnswer("connection_error", f"Could not connect to {base_url}: {reason}.", error)
    except (socket.timeout, TimeoutError) as error:
        return NoAnswer("timeout", f"No answer from {base_url} within {timeout} s.", error)
    except (OSError, http.client.HTTPException) as error:
        return NoAnswer("connection_error", f"The connection to {base_url} failed: {error!r}.", error)


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


def error_from_answer(status: int, retry_after_header: Optional[str], raw: bytes) -> MnemosError:
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


def decode_success(status: int, raw: bytes) -> Any:
    if not raw.strip():
        return {}
    try:
        return json.loads(raw.decode("utf-8"))
    except ValueError as error:
        snippet = raw[:200].decode("utf-8", errors="replace")
        raise MnemosError(status, "invalid_response",
                          f"The server answered {status} with a body that is not JSON: {snippet!r}.") from error


@dataclass(frozen=True)
class Done(Generic[T]):
    """The call's result."""

    value: T


class Attempts(Generic[T]):
    """Follows one call through its attempts. :meth:`settle` takes each attempt's outcome and says what comes next:
    :class:`Done` with the result, the seconds to wait before the next attempt, or it raises the MnemosError that
    ends the call.

    Answers 429 and 503 are tried again, waiting what ``Retry-After`` says or else an exponential backoff with jitter,
    unless their code is permanent or the wait is longer than ``max_retry_delay``; connection failures are tried again
    after the backoff; timeouts are not (the server may still be working on the request)."""

    def __init__(self, settings: Settings, call: "Call[T]") -> None:
        self._settings = settings
        self._call = call
        self._attempt = 0

    def _backoff(self) -> float:
        ceiling = min(float(self._settings.backoff_max), float(self._settings.backoff_base) * 2.0 ** self._attempt)
        return ceiling / 2 + random.uniform(0, ceiling / 2)

    def _again(self, delay: Optional[float]) -> Optional[float]:
        if delay is None or self._attempt >= self._settings.max_retries or delay > self._settings.max_retry_delay:
            return None
        self._attempt += 1
        return delay

    def settle(self, outcome: Union[HttpAnswer, NoAnswer]) -> Union[Done[T], float]:
        if isinstance(outcome, NoAnswer):
            delay = self._again(self._backoff() if outcome.code == "connection_error" else None)
            if delay is None:
                raise MnemosError(0, outcome.code, outcome.detail) from outcome.cause
            return delay
        if 200 <= outcome.status < 300:
            if self._call.text_answer:
                return Done(self._call.parse(outcome.body.decode("utf-8")))
            return Done(self._call.parse(decode_success(outcome.status, outcome.body)))
        error = error_from_answer(outcome.status, outcome.retry_after, outcome.body)
        retryable = outcome.status in (429, 503) and error.code not in PERMANENT_CODES
        wait = error.retry_after if error.retry_after is not None else self._backoff()
        delay = self._again(wait if retryable else None)
        if delay is None:
            raise error
        return delay

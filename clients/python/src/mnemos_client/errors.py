"""The one error type of the Mnemos client."""

from __future__ import annotations

from typing import Any, Dict, List, Optional


class MnemosError(Exception):
    """Raised for every failed call: a non-2xx answer, a timeout, a connection failure or an unreadable answer.

    Attributes:
        status: the HTTP status (0 when no answer arrived: ``timeout`` or ``connection_error``).
        code: a stable machine code (``validation_failed``, ``bank_not_found``, ``llm_not_configured``,
            ``rate_limited``, ``quota_exceeded``, ``unauthorized``, ``timeout``, ``connection_error``, ...).
        detail: a human sentence saying what was wrong.
        errors: field errors (``[{"pointer": "/query", "detail": ...}]``) when the server sent them.
        title, type: the RFC 9457 problem title and type URI, when sent.
        retry_after: seconds the server asked to wait (``Retry-After``), when sent.
        body: the parsed problem document (or the raw text) the server answered with.
    """

    status: int
    code: str
    detail: str
    errors: Optional[List[Any]]

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        errors: Optional[List[Any]] = None,
        *,
        title: Optional[str] = None,
        type: Optional[str] = None,
        retry_after: Optional[float] = None,
        body: Any = None,
    ) -> None:
        super().__init__(f"{status} {code}: {detail}" if status else f"{code}: {detail}")
        self.status = status
        self.code = code
        self.detail = detail
        self.errors = errors
        self.title = title
        self.type = type
        self.retry_after = retry_after
        self.body = body

    def __repr__(self) -> str:
        return f"MnemosError(status={self.status!r}, code={self.code!r}, detail={self.detail!r})"

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"status": self.status, "code": self.code, "detail": self.detail}
        if self.errors is not None:
            out["errors"] = self.errors
        return out

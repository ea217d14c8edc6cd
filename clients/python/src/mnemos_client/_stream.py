"""Streamed reflect, shared by both clients: the request asking for server-sent events, and the reading of the event
stream into :class:`ReflectDelta` and :class:`ReflectDone` events (a small parser of the standard event-stream format,
so the client keeps to the standard library)."""

from __future__ import annotations

import dataclasses
import http.client
import json
import re
import socket
from typing import Any, List, Optional, Tuple, Union

from ._wire import HttpRequest, error_from_answer
from .errors import MnemosError
from .models import ReflectDelta, ReflectDone, ReflectResult

ReflectStreamEvent = Union[ReflectDelta, ReflectDone]

_EVENTS_ACCEPT = "text/event-stream, application/problem+json"
_LINE_END = re.compile(r"\r\n|\r|\n")


def stream_request(request: HttpRequest) -> HttpRequest:
    """The same request, asking for server-sent events."""
    return dataclasses.replace(request, headers={**request.headers, "Accept": _EVENTS_ACCEPT})


class EventStreamReader:
    """Reads server-sent events from text as it arrives: lines end in CR, LF or CRLF; ``event:`` names the event,
    ``data:`` lines add to its data, a blank line dispatches it, ``:`` lines are comments."""

    def __init__(self) -> None:
        self._buffered = ""
        self._event = ""
        self._data: List[str] = []

    def push(self, text: str) -> List[Tuple[str, str]]:
        """Adds text; returns the ``(event, data)`` pairs it completes."""
        self._buffered += text
        done: List[Tuple[str, str]] = []
        while True:
            match = _LINE_END.search(self._buffered)
            # A CR at the very end may be the first half of a CRLF: wait for the next piece.
            if match is None or (match.group() == "\r" and match.end() == len(self._buffered)):
                return done
            line = self._buffered[:match.start()]
            self._buffered = self._buffered[match.end():]
            event = self._line(line)
            if event is not None:
                done.append(event)

    def _line(self, line: str) -> Optional[Tuple[str, str]]:
        if line == "":
            event = (self._event or "message", "\n".join(self._data)) if self._data else None
            self._event, self._data = "", []
            return event
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "event":
            self._event = value
        elif field == "data":
            self._data.append(value)
        return None


class ReflectEvents:
    """Turns a streamed reflect's text into events: ``delta`` -> :class:`ReflectDelta`, ``done`` ->
    :class:`ReflectDone`; an ``error`` event raises the MnemosError of the problem it carries (the HTTP status was
    200 already, so the problem's own status is the error's)."""

    def __init__(self) -> None:
        self._reader = EventStreamReader()
        self.result: Optional[ReflectResult] = None

    def push(self, text: str) -> List[ReflectStreamEvent]:
        events: List[ReflectStreamEvent] = []
        for name, data in self._reader.push(text):
            value: Any = json.loads(data)
            if name == "delta":
                events.append(ReflectDelta(str(value.get("text", ""))))
            elif name == "done":
                self.result = ReflectResult.from_json(value)
                events.append(ReflectDone(self.result))
            elif name == "error":
                status = value.get("status") if isinstance(value, dict) else None
                raise error_from_answer(status if isinstance(status, int) else 502, None, data.encode("utf-8"))
        return events

    def finished(self) -> ReflectResult:
        """The result, once the stream has ended; raises if it ended before its ``done`` event."""
        if self.result is None:
            raise MnemosError(0, "invalid_response",
                              "The reflect stream ended before its done event; the connection may have been cut. "
                              "Try again.")
        return self.result


def read_line(response: Any, base_url: str, timeout: float) -> bytes:
    """The next line of a streamed answer (``b""`` at its end); a stall longer than ``timeout`` or a broken connection
    raises MnemosError (``timeout``, ``connection_error``)."""
    try:
        line: bytes = response.readline()
        return line
    except (socket.timeout, TimeoutError) as error:
        raise MnemosError(0, "timeout", f"{base_url} sent nothing more for {timeout} s mid-stream.") from error
    except (OSError, http.client.HTTPException) as error:
        raise MnemosError(0, "connection_error", f"The stream from {base_url} broke: {error!r}.") from error

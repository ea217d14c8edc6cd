"""Test helpers: a scripted local HTTP server (real HTTP on 127.0.0.1, port 0) that records every request and answers
from a queue, and a way to make the package importable from the source tree (unless ``MNEMOS_CLIENT_INSTALLED=1``
says the suite tests an installed copy)."""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Deque, Dict, List, Optional
from urllib.parse import parse_qs, urlsplit

_SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
#: Set when the suite tests an installed copy of the package (a wheel in a fresh venv) rather than the source tree.
INSTALLED = os.environ.get("MNEMOS_CLIENT_INSTALLED", "") not in ("", "0")
if not INSTALLED and _SRC not in sys.path:
    sys.path.insert(0, _SRC)


@dataclass
class Recorded:
    method: str
    path: str  # raw path, still URL-encoded, without the query
    query: Dict[str, List[str]]
    headers: Dict[str, str]
    body: Any


@dataclass
class Answer:
    status: int = 200
    body: Any = None
    headers: Dict[str, str] = field(default_factory=dict)
    raw: Optional[bytes] = None  # sent as is instead of JSON
    delay: float = 0.0
    gate: Optional[Callable[[], object]] = None  # called before answering; blocks as long as it likes, raises to fail


class ScriptedServer:
    """Answers each request with the next queued Answer (or ``{}`` with 200 when the queue is empty)."""

    def __init__(self) -> None:
        self.requests: List[Recorded] = []
        self._answers: Deque[Answer] = deque()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", errors="replace")
                parts = urlsplit(self.path)
                record = Recorded(self.command, parts.path, parse_qs(parts.query), dict(self.headers.items()), body)
                with server._lock:
                    server.requests.append(record)
                    answer = server._answers.popleft() if server._answers else Answer(200, {})
                if answer.delay:
                    time.sleep(answer.delay)
                if answer.gate is not None:
                    try:
                        answer.gate()
                    except Exception as error:  # the test's condition did not come true: answer so it fails
                        answer = Answer(500, {"code": "gate_failed", "detail": repr(error)})
                if answer.raw is not None:
                    payload = answer.raw
                    content_type = answer.headers.get("Content-Type", "text/plain")
                else:
                    payload = json.dumps(answer.body).encode() if answer.body is not None else b""
                    content_type = "application/problem+json" if answer.status >= 400 else "application/json"
                try:
                    self.send_response(answer.status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in answer.headers.items():
                        if key != "Content-Type":
                            self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def answer(self, status: int = 200, body: Any = None, headers: Optional[Dict[str, str]] = None,
               raw: Optional[bytes] = None, delay: float = 0.0,
               gate: Optional[Callable[[], object]] = None) -> "ScriptedServer":
        with self._lock:
            self._answers.append(Answer(status, body, dict(headers or {}), raw, delay, gate))
        return self

    @property
    def last(self) -> Recorded:
        return self.requests[-1]

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self._answers.clear()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


class ScriptedServerCase:
    """Mixed into a TestCase: one scripted server for the class, reset before each test, and a list for the retry
    waits the test's clients record instead of sleeping."""

    server: ScriptedServer
    sleeps: List[float]

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = ScriptedServer()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.close()

    def setUp(self) -> None:
        self.server.reset()
        self.sleeps = []


def closed_port_url() -> str:
    """An address on 127.0.0.1 where nothing listens (connection refused)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}"


def problem(status: int, code: str, detail: str, **extra: Any) -> Dict[str, Any]:
    body = {"type": f"/errors/{code}", "title": code.replace("_", " ").capitalize(),
            "status": status, "detail": detail, "code": code}
    body.update(extra)
    return body

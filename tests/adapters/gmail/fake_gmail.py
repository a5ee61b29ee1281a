"""A local HTTP server speaking the Gmail API v1's JSON, plus an OAuth token endpoint.

It serves ``users.getProfile``, ``users.threads.list`` (with ``q``,
``maxResults``, ``pageToken``) and ``users.threads.get`` (``format`` and
``metadataHeaders``) from :mod:`tests.adapters.gmail.mailbox`, evaluating a useful
subset of Gmail's query syntax. Faults are switched on per test: revoked
tokens, rate limits, 5xx, slow answers, short pages. Every request is
recorded so tests can assert what the adapter sent (only GETs, no bodies
during search, which token).
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from .mailbox import THREADS, Mail, Thread, api_thread

ACCOUNT = "infra-team@example.org"
CLIENT_ID = "1234-test.apps.googleusercontent.com"
CLIENT_SECRET = "client-secret-Zx81"
REFRESH_TOKEN = "1//refresh-token-Qm52"
FIRST_ACCESS_TOKEN = "ya29.first-access-token-Lk07"
SCOPE = "https://www.googleapis.com/auth/gmail.readonly"
_PREFIX = "/gmail/v1/users/me/"


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    authorization: str | None


@dataclass
class Faults:
    revoked: bool = False  # the token endpoint refuses the refresh token
    list_status: int | None = None  # every threads.list answers this status
    thread_status: dict[str, list[int]] = field(default_factory=dict)  # queued statuses per id
    retry_after: str | None = None  # Retry-After header on 429/503
    slow_threads: dict[str, float] = field(default_factory=dict)  # seconds before answering
    slow_pages_after: int | None = None  # pages after this many answer slowly
    slow_seconds: float = 5.0
    page_size: int | None = None  # fewer threads per page than asked (as Gmail may)


class FakeGmail:
    def __init__(self, threads: tuple[Thread, ...] = THREADS) -> None:
        self.threads = {t.thread_id: t for t in threads}
        self.valid_tokens = {FIRST_ACCESS_TOKEN}
        self.faults = Faults()
        self.requests: list[Seen] = []
        self.token_requests: list[dict[str, list[str]]] = []
        self._issued = 0
        self._in_flight = 0
        self.max_in_flight = 0  # most thread reads answered at once
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        daemon=True)

    @property
    def base_url(self) -> str:
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}"

    @property
    def token_uri(self) -> str:
        return f"{self.base_url}/token"

    def start(self) -> FakeGmail:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def mailbox_requests(self) -> list[Seen]:
        return [r for r in self.requests if r.path.startswith("/gmail/")]

    def issued_tokens(self) -> list[str]:
        return sorted(self.valid_tokens)

    # -- endpoints -----------------------------------------------------------

    def answer(self, method: str, target: str, headers: Any, body: bytes) -> tuple[int, dict, dict]:
        url = urlsplit(target)
        query = parse_qs(url.query, keep_blank_values=True)
        seen = Seen(method, url.path, query, headers.get("Authorization"))
        with self._lock:
            self.requests.append(seen)
        if url.path == "/token":
            return self._token(method, body, seen.authorization)
        if not url.path.startswith(_PREFIX):
            return 404, _error(404, "Not Found", "notFound"), {}
        if method != "GET":
            return 405, _error(405, "Method not allowed in this fake", "methodNotAllowed"), {}
        if seen.authorization not in {f"Bearer {t}" for t in self.valid_tokens}:
            return 401, _error(401, "Request had invalid authentication credentials.",
                               "authError", status="UNAUTHENTICATED"), {}
        resource = url.path[len(_PREFIX):]
        if resource == "profile":
            return 200, {"emailAddress": ACCOUNT, "messagesTotal": sum(
                len(t.messages) for t in self.threads.values()),
                "threadsTotal": len(self.threads), "historyId": "98765"}, {}
        if resource == "threads":
            return self._list(query)
        if resource.startswith("threads/"):
            return self._get(unquote(resource[len("threads/"):]), query)
        return 404, _error(404, "Not Found", "notFound"), {}

    def _token(self, method: str, body: bytes, authorization: str | None
               ) -> tuple[int, dict, dict]:
        form = parse_qs(body.decode())
        with self._lock:
            self.token_requests.append(form)
        grant = form.get("grant_type", [""])[0]
        basic = "Basic " + base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
        in_form = (form.get("client_id"), form.get("client_secret")) == (
            [CLIENT_ID], [CLIENT_SECRET])
        if method != "POST" or not (in_form or authorization == basic):
            return 401, {"error": "invalid_client", "error_description": "Unauthorized"}, {}
        if grant == "refresh_token" and (
                self.faults.revoked or form.get("refresh_token") != [REFRESH_TOKEN]):
            return 400, {"error": "invalid_grant",
                         "error_description": "Token has been expired or revoked."}, {}
        if grant not in ("refresh_token", "authorization_code"):
            return 400, {"error": "unsupported_grant_type"}, {}
        with self._lock:
            self._issued += 1
            token = f"ya29.refreshed-access-token-{self._issued:02d}"
            self.valid_tokens = {token}
        answer = {"access_token": token, "expires_in": 3599, "scope": SCOPE,
                  "token_type": "Bearer"}
        if grant == "authorization_code":
            answer["refresh_token"] = REFRESH_TOKEN
        return 200, answer, {}

    def _list(self, query: dict[str, list[str]]) -> tuple[int, dict, dict]:
        if self.faults.list_status is not None:
            return self._fault(self.faults.list_status)
        q = query.get("q", [""])[0]
        wanted = int(query.get("maxResults", ["100"])[0])
        size = min(wanted, self.faults.page_size or wanted)
        start = int(query.get("pageToken", ["0"])[0] or 0)
        if self.faults.slow_pages_after is not None and start >= self.faults.slow_pages_after:
            time.sleep(self.faults.slow_seconds)
        matched = [t for t in self.threads.values() if _thread_matches(t, q)]
        matched.sort(key=lambda t: max(m.date for m in t.messages), reverse=True)
        page = matched[start:start + size]
        answer: dict[str, Any] = {
            "threads": [{"id": t.thread_id, "snippet": (t.messages[-1].plain or "")[:80],
                         "historyId": t.history_id} for t in page],
            "resultSizeEstimate": len(matched),
        }
        if start + size < len(matched):
            answer["nextPageToken"] = str(start + size)
        if not page:
            answer.pop("threads")
        return 200, answer, {}

    def _get(self, thread_id: str, query: dict[str, list[str]]) -> tuple[int, dict, dict]:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            return self._answer_thread(thread_id, query)
        finally:
            with self._lock:
                self._in_flight -= 1

    def _answer_thread(self, thread_id: str, query: dict[str, list[str]]
                       ) -> tuple[int, dict, dict]:
        delay = self.faults.slow_threads.get(thread_id)
        if delay:
            time.sleep(delay)
        with self._lock:
            queued = self.faults.thread_status.get(thread_id)
            status = queued.pop(0) if queued else None
            if queued is not None and not queued and status is not None:
                queued.append(status)  # the last queued status repeats
        if status is not None and status != 200:
            return self._fault(status)
        thread = self.threads.get(thread_id)
        if thread is None:
            return 404, _error(404, "Requested entity was not found.", "notFound"), {}
        form = query.get("format", ["full"])[0]
        return 200, api_thread(thread, form, query.get("metadataHeaders", [])), {}

    def _fault(self, status: int) -> tuple[int, dict, dict]:
        headers = {"Retry-After": self.faults.retry_after} if self.faults.retry_after else {}
        if status == 429:
            return 429, _error(429, "Too many concurrent requests for user.",
                               "rateLimitExceeded", status="RESOURCE_EXHAUSTED"), headers
        return status, _error(status, "The service is currently unavailable.", "backendError",
                              status="UNAVAILABLE"), headers


def _error(code: int, message: str, reason: str, status: str = "") -> dict:
    return {"error": {"code": code, "message": message, "status": status or "ERROR",
                      "errors": [{"message": message, "domain": "global", "reason": reason}]}}


# -- a subset of Gmail's search syntax -----------------------------------------


_TERM = re.compile(r'-?(?:[a-z_]+:)?"[^"]*"|\S+', re.IGNORECASE)


def _thread_matches(thread: Thread, q: str) -> bool:
    return any(_message_matches(mail, q) for mail in thread.messages)


def _message_matches(mail: Mail, q: str) -> bool:
    for raw in _TERM.findall(q):
        negated = raw.startswith("-")
        term = raw[1:] if negated else raw
        if _term_matches(mail, term) == negated:
            return False
    return True


def _term_matches(mail: Mail, term: str) -> bool:
    key, colon, value = term.partition(":")
    key, value = key.lower(), value.strip('"').lower()
    if not colon or key not in ("in", "label", "after", "before", "from", "to", "subject"):
        words = re.findall(r"\w+", term.strip('"').lower())
        text = " ".join([mail.subject, mail.sender, mail.to, mail.plain or "", mail.html or ""])
        present = set(re.findall(r"\w+", text.lower()))
        return all(word in present for word in words)
    if key in ("in", "label"):
        return value.upper() in mail.labels
    if key in ("after", "before"):
        instant = (datetime.fromtimestamp(int(value), UTC) if value.isdigit()
                   else datetime.strptime(value, "%Y/%m/%d").replace(tzinfo=UTC))
        return mail.date > instant if key == "after" else mail.date < instant
    field_text = {"from": mail.sender, "to": mail.to, "subject": mail.subject}[key].lower()
    return value in field_text


def _handler(fake: FakeGmail) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            status, document, extra = fake.answer(self.command, self.path, self.headers, body)
            data = json.dumps(document).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=UTF-8")
                self.send_header("Content-Length", str(len(data)))
                for name, value in extra.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a deadline): nothing to answer

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler

"""Why Gmail could not answer, as the adapter tells it apart.

    GmailError                 the mailbox could not be read
    ├── AuthorizationError     no usable token, or Google refused it      -> source_denied
    ├── RateLimited            429 / rate-limit 403 outlasting retries    -> partial or unavailable
    ├── ServiceUnavailable     network failure, 5xx, unexpected answer    -> source_unavailable
    ├── ThreadNotFound         the thread is gone                         -> locator_expired
    └── DeadlineReached        the request's time ran out before an answer -> partial or timeout

Messages never carry a token, a client secret or a response body.
"""

from __future__ import annotations

from adapters.gmail.settings import AUTH_COMMAND


class GmailError(Exception):
    reason = "gmail_error"


class AuthorizationError(GmailError):
    reason = "denied"

    def __init__(self, problem: str) -> None:
        super().__init__(f"{problem}; run `{AUTH_COMMAND}` to authorize read-only access")


class RateLimited(GmailError):
    reason = "rate_limited"


class ServiceUnavailable(GmailError):
    reason = "unreachable"


class ThreadNotFound(GmailError):
    reason = "thread_not_found"


class DeadlineReached(GmailError):
    reason = "deadline"

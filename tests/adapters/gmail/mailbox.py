"""A small team's mailbox about infrastructure work, in two shapes.

The same threads feed the fake Gmail API (JSON as the API returns it) and the
Takeout mbox fixtures (``X-GM-THRID`` is the API's hex thread id in decimal),
so both modes can be checked against one set of facts.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime

PRIYA = "Priya Raman <priya@example.org>"
TOM = "Tom Becker <tom@example.org>"
SAM = "Sam Okafor <sam@example.org>"
DANA = "Dana Whit <dana@example.org>"
TEAM = "infra@example.org"

DRILL = "18c2a0f4e5b6c701"
PG16 = "18c2a0f4e5b6c702"
ONCALL = "18c2a0f4e5b6c703"
LUNCH = "18c2a0f4e5b6c704"
CODE = "18c2a0f4e5b6c705"
SPAM = "18c2a0f4e5b6c706"
ALL_VISIBLE = (DRILL, PG16, ONCALL, LUNCH, CODE)


@dataclass(frozen=True)
class Mail:
    message_id: str
    sender: str
    to: str
    subject: str
    date: datetime
    labels: tuple[str, ...]
    plain: str | None = None
    html: str | None = None


@dataclass(frozen=True)
class Thread:
    thread_id: str
    messages: tuple[Mail, ...]
    history_id: str = field(default="98765")


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


THREADS: tuple[Thread, ...] = (
    Thread(DRILL, (
        Mail("18c2a0f4e5b6c7a1", PRIYA, TEAM, "Quarterly backup restore drill results",
             at("2025-03-04T09:00:00"), ("INBOX", "IMPORTANT"),
             plain="We restored the wiki database from last night's restic snapshot.\n"
                   "Restore took 42 minutes end to end; the runbook step for pg_restore "
                   "needs the --no-owner flag.\n"),
        Mail("18c2a0f4e5b6c7a2", TOM, TEAM, "Re: Quarterly backup restore drill results",
             at("2025-03-05T10:30:00"), ("INBOX", "UNREAD"),
             plain="Thanks Priya. I updated the runbook and scheduled the next drill "
                   "for June.\n"),
    )),
    Thread(PG16, (
        Mail("18c2a0f4e5b6c7b1", TOM, TEAM, "PostgreSQL 16 upgrade plan for db-main",
             at("2025-02-10T08:00:00"), ("INBOX",),
             plain="Plan: pg_upgrade --link from 15 to 16 during the Saturday window at "
                   "06:00 UTC. Rollback is the pre-upgrade snapshot.\n"),
        Mail("18c2a0f4e5b6c7b2", PRIYA, TEAM, "Re: PostgreSQL 16 upgrade plan for db-main",
             at("2025-02-12T16:00:00"), ("INBOX",),
             html="<html><head><style>p {color: red}</style></head><body>"
                  "<p>Rehearsed on the <b>staging replica</b>: 11 minutes of downtime.</p>"
                  "<script>alert('x')</script><p>Extensions all upgraded &amp; verified.</p>"
                  "</body></html>"),
    )),
    Thread(ONCALL, (
        Mail("18c2a0f4e5b6c7c1", SAM, TEAM, "On-call handover for week 12",
             at("2025-03-17T17:00:00"), ("INBOX", "SENT"),
             plain="Open items: disk pressure on backup-02, one flaky alert on db-main.\n"
                   "Runbook: https://wiki.example.org/runbooks/oncall?session=s3cr3t\n"
                   "The pager passes to Priya on Monday.\n"),
    )),
    Thread(LUNCH, (
        Mail("18c2a0f4e5b6c7d1", DANA, TEAM, "Lunch on Friday?",
             at("2025-03-06T12:00:00"), ("INBOX",),
             plain="Since the restore drill went well, lunch is on me. Friday at noon?\n"),
    )),
    Thread(CODE, (
        Mail("18c2a0f4e5b6c7e1", "Backup Console <no-reply@backup.example.com>", TEAM,
             "Your verification code for the backup console",
             at("2025-03-07T07:00:00"), ("INBOX", "CATEGORY_UPDATES"),
             plain="Your code is 482913. It expires in 10 minutes.\n"),
    )),
    Thread(SPAM, (
        Mail("18c2a0f4e5b6c7f1", "Deals <deals@spam.example.net>", TEAM,
             "Cheap backup restore drill software", at("2025-03-08T05:00:00"), ("SPAM",),
             plain="Buy now.\n"),
    )),
)


def by_id(thread_id: str) -> Thread:
    return next(t for t in THREADS if t.thread_id == thread_id)


# -- Gmail API JSON -----------------------------------------------------------


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _headers(mail: Mail) -> list[dict[str, str]]:
    return [
        {"name": "Delivered-To", "value": TEAM},
        {"name": "From", "value": mail.sender},
        {"name": "To", "value": mail.to},
        {"name": "Subject", "value": mail.subject},
        {"name": "Date", "value": format_datetime(mail.date)},
        {"name": "Message-ID", "value": f"<{mail.message_id}@example.org>"},
        {"name": "MIME-Version", "value": "1.0"},
    ]


def _part(part_id: str, mime: str, text: str) -> dict[str, object]:
    return {
        "partId": part_id, "mimeType": mime, "filename": "",
        "headers": [{"name": "Content-Type", "value": f'{mime}; charset="UTF-8"'}],
        "body": {"size": len(text.encode()), "data": _b64(text)},
    }


def api_message(mail: Mail, thread: Thread, form: str, wanted_headers: list[str]) -> dict:
    headers = _headers(mail)
    snippet = " ".join((mail.plain or mail.subject).split())[:100]
    payload: dict[str, object] = {"partId": "", "mimeType": "multipart/alternative",
                                  "filename": "", "headers": headers, "body": {"size": 0}}
    if form == "metadata":
        wanted = {name.lower() for name in wanted_headers}
        payload["headers"] = [h for h in headers if h["name"].lower() in wanted]
    elif form == "full":
        parts = []
        if mail.plain is not None:
            parts.append(_part("0", "text/plain", mail.plain))
        if mail.html is not None:
            parts.append(_part(str(len(parts)), "text/html", mail.html))
        payload["parts"] = parts
    return {
        "id": mail.message_id, "threadId": thread.thread_id, "labelIds": list(mail.labels),
        "snippet": snippet, "historyId": thread.history_id,
        "internalDate": str(int(mail.date.timestamp() * 1000)),
        "payload": payload, "sizeEstimate": 2048,
    }


def api_thread(thread: Thread, form: str, wanted_headers: list[str]) -> dict:
    return {"id": thread.thread_id, "historyId": thread.history_id,
            "messages": [api_message(m, thread, form, wanted_headers) for m in thread.messages]}


# -- Takeout mbox -------------------------------------------------------------


_TAKEOUT_LABELS = {"INBOX": "Inbox", "UNREAD": "Unread", "IMPORTANT": "Important",
                   "SENT": "Sent", "SPAM": "Spam", "CATEGORY_UPDATES": "Category Updates"}


def mbox_entry(mail: Mail, thread: Thread) -> bytes:
    """One message as Google Takeout writes it, separator line included."""
    message = EmailMessage()
    message["X-GM-THRID"] = str(int(thread.thread_id, 16))
    labels = [_TAKEOUT_LABELS.get(label, label) for label in mail.labels]
    if "UNREAD" not in mail.labels:
        labels.append("Opened")
    message["X-Gmail-Labels"] = ",".join(labels)
    message["From"] = mail.sender
    message["To"] = mail.to
    message["Subject"] = mail.subject
    message["Date"] = format_datetime(mail.date)
    message["Message-ID"] = f"<{mail.message_id}@example.org>"
    if mail.plain is not None and mail.html is not None:
        message.set_content(mail.plain)
        message.add_alternative(mail.html, subtype="html")
    elif mail.html is not None:
        message.set_content(mail.html, subtype="html")
    else:
        message.set_content(mail.plain or "")
    data = message.as_bytes().replace(b"\r\n", b"\n")
    escaped = b"\n".join(b">" + line if line.startswith(b"From ") else line
                         for line in data.split(b"\n"))
    stamp = mail.date.strftime("%a %b %d %H:%M:%S +0000 %Y")
    return f"From {int(thread.thread_id, 16)}@xxx {stamp}\n".encode() + escaped.rstrip(b"\n") + b"\n\n"


def mbox_bytes(threads: tuple[Thread, ...] = THREADS) -> bytes:
    mails = sorted(((m, t) for t in threads for m in t.messages), key=lambda pair: pair[0].date)
    return b"".join(mbox_entry(m, t) for m, t in mails)

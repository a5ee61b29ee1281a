"""Readable text from a message body: Gmail API payloads and parsed mbox messages.

The plain-text part is preferred; HTML is converted to text with the stdlib
parser. Rendered text is made safe to show: control and bidirectional
formatting characters are removed and URLs (which in mail often carry
sign-in or unsubscribe secrets) are replaced by a marker.
"""

from __future__ import annotations

import base64
import binascii
import re
from email.message import EmailMessage, Message
from html.parser import HTMLParser
from typing import Any

URL_MARKER = "[url removed]"
_URL = re.compile(r"\b(?:https?|ftp)://[^\s<>\"']+|\bwww\.[^\s<>\"']+", re.IGNORECASE)
_UNSAFE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]"
)
_BLOCK_TAGS = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6",
                         "blockquote", "pre", "table", "ul", "ol", "hr"})
_SKIPPED_TAGS = frozenset({"script", "style", "head", "title"})
_CHARSET = re.compile(r'charset="?([^";\s]+)"?', re.IGNORECASE)


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.chunks: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED_TAGS:
            self._skipping += 1
        elif tag in _BLOCK_TAGS:
            self.chunks.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED_TAGS:
            self._skipping = max(self._skipping - 1, 0)
        elif tag in _BLOCK_TAGS:
            self.chunks.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.chunks.append(data)


def html_to_text(markup: str) -> str:
    extractor = _TextExtractor()
    extractor.feed(markup)
    extractor.close()
    lines = (" ".join(line.split()) for line in "".join(extractor.chunks).splitlines())
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def safe_text(text: str) -> str:
    """Text fit to show: no control/bidi characters, no URLs, tidy blank lines."""
    text = _UNSAFE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _URL.sub(URL_MARKER, text)
    lines = [line.rstrip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


# -- Gmail API payloads -------------------------------------------------------


def payload_text(payload: dict[str, Any]) -> str:
    """The body text of one API message (``format=full``)."""
    plain: list[str] = []
    html: list[str] = []
    for part in _walk(payload):
        if part.get("filename"):
            continue  # an attachment, even when it is text
        mime = str(part.get("mimeType", "")).lower()
        data = (part.get("body") or {}).get("data")
        if not data or mime not in ("text/plain", "text/html"):
            continue
        text = _decode_base64url(data, _charset(part))
        (plain if mime == "text/plain" else html).append(text)
    if plain:
        return "\n\n".join(plain).strip()
    return "\n\n".join(html_to_text(h) for h in html).strip()


def _walk(part: dict[str, Any]) -> list[dict[str, Any]]:
    parts = [part]
    for child in part.get("parts") or []:
        parts.extend(_walk(child))
    return parts


def _charset(part: dict[str, Any]) -> str:
    for header in part.get("headers") or []:
        if str(header.get("name", "")).lower() == "content-type":
            found = _CHARSET.search(str(header.get("value", "")))
            if found:
                return found.group(1)
    return "utf-8"


def _decode_base64url(data: str, charset: str) -> str:
    try:
        raw = base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))
    except (binascii.Error, ValueError):
        return ""
    return _decode(raw, charset)


def _decode(raw: bytes, charset: str) -> str:
    try:
        return raw.decode(charset, errors="replace")
    except LookupError:
        return raw.decode("utf-8", errors="replace")


# -- parsed mbox messages -------------------------------------------------------


def message_text(message: Message) -> str:
    """The body text of one parsed message (plain preferred, else HTML as text)."""
    plain: list[str] = []
    html: list[str] = []
    for part in message.walk():
        if part.is_multipart() or part.get_filename():
            continue
        disposition = str(part.get("Content-Disposition", "")).lower()
        if disposition.startswith("attachment"):
            continue
        mime = part.get_content_type()
        if mime not in ("text/plain", "text/html"):
            continue
        text = _part_text(part)
        (plain if mime == "text/plain" else html).append(text)
    if plain:
        return "\n\n".join(plain).strip()
    return "\n\n".join(html_to_text(h) for h in html).strip()


def _part_text(part: Message) -> str:
    if isinstance(part, EmailMessage):
        try:
            content = part.get_content()
            if isinstance(content, str):
                return content
        except (LookupError, ValueError, AssertionError):
            pass
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return ""
    return _decode(payload, part.get_content_charset() or "utf-8")

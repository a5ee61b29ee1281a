"""Split a search query into exact identifiers, field constraints and free terms.

Exact identifiers: a full UUID, an 8-hex short UUID (any record id prefix of
8 or 12 hex digits), and ``task <n>`` (the working-set id: Taskwarrior's id,
or the todo.txt line number); a query that is only a number (``3``, ``#3``) is
a working-set id too, and also a short id when it is eight or twelve bare digits.
Field constraints (the ``structured`` query mode): ``project:<name>``
(``pro:``), ``+<tag>``, ``@<context>``, ``status:<status>``, ``priority:<p>``
(``pri:``). Everything else is free text, analyzed with the shared lexical rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from adapter_sdk.lexical import AnalyzedQuery, analyze_query

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_RECORD_ID = re.compile(r"[0-9a-f]{8}|[0-9a-f]{12}")
_TAG = re.compile(r"[+@]([\w.-]+)")
_FIELD = re.compile(r"(project|pro|status|priority|pri):(\S+)", re.IGNORECASE)
_WORKING_ID = re.compile(r"#?(\d{1,9})")
_TRIM = "\"'()[]{}<>,;!?"
_FIELD_NAMES = {"pro": "project", "pri": "priority"}


@dataclass(frozen=True, slots=True)
class TaskQuery:
    record_ids: tuple[str, ...]  # full UUIDs, short ids and todo.txt ids, lowercased
    working_ids: tuple[int, ...]
    constraints: tuple[tuple[str, str], ...]  # (project|tag|status|priority, value)
    analyzed: AnalyzedQuery

    @property
    def terms(self) -> tuple[str, ...]:
        return self.analyzed.content_terms

    @property
    def is_empty(self) -> bool:
        return not (self.record_ids or self.working_ids or self.constraints or self.terms)


def parse_query(query: str) -> TaskQuery:
    record_ids: list[str] = []
    working_ids: list[int] = []
    constraints: list[tuple[str, str]] = []
    free: list[str] = []
    words = query.split()
    if len(words) == 1 and (number := _WORKING_ID.fullmatch(words[0].strip(_TRIM))):
        # eight or twelve bare digits may also be a short id whose hex digits are all decimal
        # (about one task in forty): both are looked up
        digits = number.group(0)
        short_id = (digits,) if _RECORD_ID.fullmatch(digits) else ()
        return TaskQuery(short_id, (int(number.group(1)),), (), analyze_query(""))
    skip_next = False
    for index, word in enumerate(words):
        if skip_next:
            skip_next = False
            continue
        token = word.strip(_TRIM).rstrip(".:")
        lowered = token.lower()
        following = words[index + 1].strip(_TRIM).rstrip(".") if index + 1 < len(words) else ""
        if _UUID.fullmatch(lowered):
            record_ids.append(lowered)
        elif lowered == "task" and (number := _WORKING_ID.fullmatch(following)):
            working_ids.append(int(number.group(1)))
            skip_next = True
        elif field := _FIELD.fullmatch(token):
            name = field.group(1).lower()
            constraints.append((_FIELD_NAMES.get(name, name), field.group(2)))
        elif tag := _TAG.fullmatch(token):
            constraints.append(("tag", tag.group(1)))
        else:
            if _RECORD_ID.fullmatch(lowered):
                record_ids.append(lowered)
            free.append(word)
    return TaskQuery(
        tuple(dict.fromkeys(record_ids)),
        tuple(dict.fromkeys(working_ids)),
        tuple(constraints),
        analyze_query(" ".join(free)),
    )

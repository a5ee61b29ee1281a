"""recall query: one question to every eligible source, evidence pointers back."""

from __future__ import annotations

import argparse

from broker.instants import parse_time
from broker.surfaces.commands._common import (
    add_json,
    add_profile,
    add_server,
    print_json,
    with_broker,
)
from broker.surfaces.streams import Streams
from broker.vocabulary import DEFAULT_LATENCY_MS, DEFAULT_RESPONSE_TOKENS

HELP = "ask every source of a profile; print evidence pointers"
DESCRIPTION = """Ask every eligible source of a profile and print evidence pointers.

Each result is a pointer: a locator you can pass to 'recall expand', a title and,
when the source can claim one, an excerpt marked '>' (the matched text) or '~' (a
preview). The outcome line says whether the sources answered, abstained or failed,
and whether coverage was complete."""
EXIT_CODES = """exit codes (the most severe wins):
  0  answered
  1  error: bad usage, configuration or request; no claim about the sources
  2  abstained: nothing matched and the sources answered
  3  degraded: some eligible source could not answer
  4  failed: every source asked failed"""

SCOPE_KEYS = {"source": "source_ids", "type": "record_types", "entity": "entities",
              "project": "project", "since": "since", "until": "until"}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", nargs="*", help="the question (words are joined by spaces)")
    add_profile(parser)
    add_json(parser)
    parser.add_argument("--explain", action="store_true",
                        help="add provenance, lineage, score arithmetic, the source ledger and the plan")
    parser.add_argument("--limit", type=int, default=0, metavar="N",
                        help="most results to return (default: the profile's max_results)")
    parser.add_argument("--budget-ms", type=int, default=0, metavar="N",
                        help=f"end-to-end latency budget in milliseconds (default {DEFAULT_LATENCY_MS})")
    parser.add_argument("--budget-tokens", type=int, default=DEFAULT_RESPONSE_TOKENS, metavar="N",
                        help=f"response size budget in estimated tokens (default {DEFAULT_RESPONSE_TOKENS}; "
                        "-1 unbounded)")
    parser.add_argument("--scope", action="append", default=[], metavar="KEY=VALUE",
                        help="hard filter, repeatable: source=, type=, project=, entity=, since=, until=")
    parser.add_argument("--as-of", metavar="TIME",
                        help="transaction time: answer from what the sources held at this instant "
                        "(RFC 3339 or a date)")
    parser.add_argument("--valid-at", metavar="TIME",
                        help="valid time: judge what was true at this instant, over what the sources "
                        "hold now (default: --as-of, else now); with --as-of: what was believed then "
                        "about this instant")
    parser.add_argument("--include-stale", action="store_true",
                        help="show superseded, expired and not-yet-valid evidence in place, marked")
    add_server(parser)


# The request fields' names as this command's flags spell them.
FLAG_NAMES = {
    "query": "query: the question",
    "profile": "--profile",
    "scope.source_ids": "--scope source",
    "scope.record_types": "--scope type",
    "scope.entities": "--scope entity",
    "scope.project": "--scope project",
    "limit": "--limit",
    "budget.latency_ms": "--budget-ms",
    "budget.response_tokens": "--budget-tokens",
    "as_of": "--as-of",
    "valid_at": "--valid-at",
    "scope.since": "--scope since",
    "scope.until": "--scope until",
}


def build_request(args: argparse.Namespace):  # -> QueryRequest
    from broker.contracts import Budget, QueryRequest, Scope, Surface
    from broker.errors import UsageError
    from broker.requests import InvalidRequest, check_query

    surface = {
        (False, False): Surface.pointer,
        (True, False): Surface.explained,
        (False, True): Surface.structured_pointer,
        (True, True): Surface.structured,
    }[(args.explain, args.json)]
    request = QueryRequest(
        query=" ".join(args.text).strip(),
        profile=args.profile,
        scope=Scope(**parse_scope(args.scope)),
        as_of=parse_time(args.as_of, "--as-of") if args.as_of else None,
        valid_at=parse_time(args.valid_at, "--valid-at") if args.valid_at else None,
        budget=Budget(latency_ms=args.budget_ms, response_tokens=args.budget_tokens, surface=surface),
        limit=args.limit,
        include_stale=args.include_stale,
    )
    try:
        return check_query(request)
    except InvalidRequest as exc:
        raise UsageError(exc.describe(FLAG_NAMES)) from None


def parse_scope(items: list[str]) -> dict:
    from broker.errors import UsageError

    scope: dict = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not value.strip():
            raise UsageError(f"--scope {item!r}: expected KEY=VALUE with KEY one of {', '.join(SCOPE_KEYS)}")
        if key not in SCOPE_KEYS:
            raise UsageError(f"--scope: unknown key {key!r}; use one of {', '.join(SCOPE_KEYS)}")
        field = SCOPE_KEYS[key]
        values = [v.strip() for v in value.split(",") if v.strip()]
        if field in ("since", "until"):
            if len(values) != 1:
                raise UsageError(f"--scope {key}= takes one time")
            scope[field] = parse_time(values[0], f"--scope {key}")
        elif field == "project":
            if len(values) != 1 or (scope.get("project") not in (None, values[0])):
                raise UsageError("--scope project= takes one project")
            scope["project"] = values[0]
        else:
            scope.setdefault(field, [])
            scope[field] += [v for v in values if v not in scope[field]]
    return scope


def run(args: argparse.Namespace, io: Streams) -> int:
    request = build_request(args)
    response = with_broker(args, lambda broker: broker.query(request), request)

    from broker.severity import severity

    if args.json:
        from broker.render.pointer import pointer_projection

        print_json(io, response.to_json() if args.explain else pointer_projection(response))
    else:
        from broker.render.human import render_query

        text = render_query(response, explain=args.explain)
        io.stdout.write(text if text.endswith("\n") else text + "\n")
    return severity(response.outcome, response.coverage).exit_code

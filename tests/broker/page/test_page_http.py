"""The page's HTTP rules, attacked directly: headers, origins, the token, the Host check, the body rules."""

from __future__ import annotations

from urllib.parse import quote

import httpx
import pytest

from tests.broker.page.conftest import TOKEN, Served

PAGES = ["", "?q=restore+drill", "expand?locator={restore}", "sources"]


def origin(served: Served) -> str:
    return served.url.rstrip("/")


def locator_of(served: Served, question: str, prefix: str) -> str:
    """The locator the application layer gives the first result under ``prefix``."""
    reply = httpx.post(served.url + "v1/query", json={"query": question, "tier": "pointer"}, timeout=60)
    return next(r["locator"] for r in reply.json()["results"] if r["locator"].startswith(prefix))


@pytest.mark.parametrize("path", [*PAGES, "static/page.js", "static/page.css"])
def test_every_page_answer_carries_a_strict_content_security_policy(server, path):
    if "{restore}" in path:
        path = path.format(restore=quote(locator_of(server, "restore backup", "notes:runbooks/restore.md")))
    reply = httpx.get(server.url + path, timeout=60)
    assert reply.status_code == 200, reply.text
    policy = reply.headers["content-security-policy"]
    assert "default-src 'none'" in policy
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy
    assert reply.headers["x-content-type-options"] == "nosniff"
    assert reply.headers["cache-control"] == "no-store"


def test_the_page_has_no_inline_script_or_style(server):
    html = httpx.get(server.url + "?q=restore+drill&explain=1", timeout=60).text
    assert html.count("<script") == 1 and '<script src="/static/page.js" defer></script>' in html
    assert " style=" not in html and "<style" not in html and " on" + "click=" not in html


def test_retrieved_markup_is_escaped_in_the_html_itself(server):
    html = httpx.get(server.url + "?q=hostile+pasted+snippet", timeout=60).text
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in html
    assert "<script>window.__pwned" not in html and "<img src=x" not in html
    hostile = quote(locator_of(server, "hostile pasted snippet", "notes:hostile.md"))
    expanded = httpx.get(server.url + "expand?locator=" + hostile, timeout=60).text
    assert "&lt;script&gt;window.__pwned = 2&lt;/script&gt;" in expanded
    assert "<script>window.__pwned" not in expanded


def test_a_question_carrying_markup_is_escaped_where_it_is_echoed(server):
    hostile = '"><script>alert(1)</script>'
    for path in ("", "expand"):
        reply = httpx.get(server.url + path, params={"q": hostile, "locator": "notes:nowhere.md"}, timeout=60)
        assert "<script>alert(1)" not in reply.text
        assert "&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in reply.text


def test_a_refresh_from_another_origin_is_refused(server):
    reply = httpx.post(server.url + "sources/refresh", json={"source_id": "notes"},
                       headers={"Origin": "http://evil.test"}, timeout=60)
    assert reply.status_code == 403
    assert reply.json()["error"]["code"] == "origin_rejected"


def test_a_refresh_posted_as_a_plain_form_is_refused(server):
    """A cross-site form can only send form encodings; the page's refresh takes JSON alone."""
    reply = httpx.post(server.url + "sources/refresh", data={"source_id": "notes"},
                       headers={"Origin": origin(server)}, timeout=60)
    assert reply.status_code == 415


def test_a_same_origin_refresh_is_answered_with_its_report(server):
    reply = httpx.post(server.url + "sources/refresh", json={"source_id": "notes"},
                       headers={"Origin": origin(server)}, timeout=120)
    assert reply.status_code == 200, reply.text
    assert reply.headers["recall-outcome"] == "refreshed"
    assert '<section class="refresh-report' in reply.text


def test_a_refresh_without_a_source_is_a_typed_400(server):
    reply = httpx.post(server.url + "sources/refresh", json={}, headers={"Origin": origin(server)}, timeout=60)
    assert reply.status_code == 400
    assert "name the source to refresh" in reply.text


def test_the_api_stays_closed_to_browsers_even_from_the_pages_origin(server):
    reply = httpx.post(server.url + "v1/query", json={"query": "restore"},
                       headers={"Origin": origin(server)}, timeout=60)
    assert reply.status_code == 403
    assert reply.json()["error"]["code"] == "origin_rejected"


def test_a_foreign_host_header_is_refused_on_the_page(server):
    reply = httpx.get(server.url + "?q=restore", headers={"Host": "attacker.test"}, timeout=60)
    assert reply.status_code == 421


def test_with_a_token_the_page_asks_for_it_and_shows_nothing_else(token_server):
    reply = httpx.get(token_server.url + "?q=restore+drill", timeout=60)
    assert reply.status_code == 401
    assert reply.headers["content-type"].startswith("text/html")
    assert 'id="token-form"' in reply.text
    assert "restore" not in reply.text.lower()
    assert "content-security-policy" in reply.headers
    refresh = httpx.post(token_server.url + "sources/refresh", json={"source_id": "notes"},
                         headers={"Origin": origin(token_server)}, timeout=60)
    assert refresh.status_code == 401


def test_with_a_token_the_assets_load_without_it_and_the_api_answers_json(token_server):
    assert httpx.get(token_server.url + "static/page.js", timeout=60).status_code == 200
    api = httpx.get(token_server.url + "v1/health", timeout=60)
    assert api.status_code == 401 and api.json()["error"]["code"] == "unauthorized"


def test_with_the_token_the_page_answers(token_server):
    reply = httpx.get(token_server.url + "?q=restore+drill", headers={"Authorization": f"Bearer {TOKEN}"},
                      timeout=60)
    assert reply.status_code == 200
    assert 'class="result-list"' in reply.text


def test_an_unknown_asset_is_a_404_page(server):
    reply = httpx.get(server.url + "static/../../etc/passwd", timeout=60)
    assert reply.status_code == 404
    reply = httpx.get(server.url + "static/config.toml", timeout=60)
    assert reply.status_code == 404


def test_a_bad_as_of_and_another_profile_are_typed_errors_on_the_form(server):
    bad_time = httpx.get(server.url + "?q=restore&as_of=yesterday-ish", timeout=60)
    assert bad_time.status_code == 400
    assert "is not a time" in bad_time.text and 'role="search"' in bad_time.text
    other = httpx.get(server.url + "?q=restore&profile=wide", timeout=60)
    assert other.status_code == 409
    assert "serves profile" in other.text


def test_an_unknown_locator_is_a_typed_expand_error(server):
    reply = httpx.get(server.url + "expand?locator=nowhere:thing", timeout=60)
    assert reply.status_code == 404
    assert "not_configured" in reply.text

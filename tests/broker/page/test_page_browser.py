"""The search page driven in headless Chromium: what a person sees is what the application layer decided."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from tests.broker.page.conftest import Served, Tab, Workspace

pytestmark = pytest.mark.slow


def search(tab: Tab, served: Served, question: str) -> Any:
    """Type a question and press Enter, as a person would; wait for the outcome."""
    page = tab.page
    page.goto(served.url)
    page.get_by_label("Question").fill(question)
    page.get_by_label("Question").press("Enter")
    page.wait_for_selector("section.outcome")
    page.wait_for_load_state("domcontentloaded")
    return page


def api_pointers(served: Served, question: str, **body: Any) -> dict[str, Any]:
    reply = httpx.post(served.url + "v1/query", json={"query": question, "tier": "pointer", **body}, timeout=60)
    assert reply.status_code in (200, 206, 503), reply.text
    return reply.json()


def assert_clean(tab: Tab) -> None:
    """Nothing the Content-Security-Policy blocked, no script error, no failed load."""
    assert tab.problems == []


def test_search_shows_the_applications_results_in_its_order_with_their_markings(tab, server):
    page = search(tab, server, "restore backup")
    tab.shot("search")

    expected = api_pointers(server, "restore backup", budget={"response_tokens": -1})
    shown = page.locator("ol.result-list > li")
    assert shown.count() == len(expected["results"]) > 1
    for index, result in enumerate(expected["results"]):
        item = shown.nth(index)
        assert item.locator(".rank").inner_text() == f"{result['rank']}."
        assert item.locator("a.locator").inner_text() == result["locator"]
        if "title" in result:
            assert item.locator(".title").inner_text() == result["title"]
        if "excerpt_kind" in result:
            excerpt = item.locator(f".excerpt-{result['excerpt_kind']}")
            assert excerpt.locator(".excerpt-kind").inner_text().lower() == result["excerpt_kind"]
            assert excerpt.locator(".excerpt-text").inner_text() == " ".join(result["excerpt"].split())
    assert page.locator("section.outcome .outcome-value").inner_text() == expected["outcome"] == "answered"
    assert page.locator("section.outcome .coverage-value").inner_text() == "complete"
    rows = page.locator("section.coverage tbody tr")
    assert [rows.nth(i).locator("th").inner_text() for i in range(rows.count())] == ["notes", "tasks", "mirror"]
    assert page.locator("section.coverage tr.degrades").count() == 0
    assert "q=restore+backup" in page.url
    assert_clean(tab)


def test_the_choosers_scope_the_question(tab, server):
    page = tab.page
    page.goto(server.url)
    page.get_by_label("task", exact=True).check()
    page.get_by_label("Question").fill("restore drill")
    page.get_by_label("Question").press("Enter")
    page.wait_for_selector("section.outcome")
    assert "type=task" in page.url
    locators = page.locator("ol.result-list a.locator").all_inner_texts()
    assert locators and all(locator.startswith("tasks:") for locator in locators)
    assert page.get_by_label("task", exact=True).is_checked()
    assert_clean(tab)


def test_an_exact_match_wears_its_pill(tab, server):
    page = search(tab, server, "t1")  # the fixture task's record id: an exact hit
    first = page.locator("ol.result-list > li").first
    assert first.locator("a.locator").inner_text() == "tasks:t1"
    assert first.locator(".pill-exact").inner_text() == "exact"
    assert_clean(tab)


def test_one_task_found_in_two_lists_wears_its_corroboration_pill(tab, server):
    page = search(tab, server, "restore drill")
    first = page.locator("ol.result-list > li").first
    assert first.locator("a.locator").inner_text() == "tasks:t1"
    assert first.locator(".pill-corroborated").inner_text() == "corroborated 2"
    others = page.locator("ol.result-list > li").filter(has_not=page.locator(".pill-corroborated"))
    assert others.count() == page.locator("ol.result-list > li").count() - 1
    assert_clean(tab)


def test_a_degraded_search_is_impossible_to_miss(tab, wide_server):
    page = search(tab, wide_server, "restore drill")
    tab.shot("degraded")

    banner = page.locator("section.outcome")
    assert banner.get_attribute("role") == "alert"
    assert "Coverage degraded" in banner.locator("h2").inner_text()
    assert banner.locator(".coverage-value").inner_text() == "degraded"
    assert "broken (unreachable)" in banner.locator(".degraded-list li").all_inner_texts()
    broken = page.locator("section.coverage tr.degrades", has_text="broken")
    assert broken.locator("th").inner_text() == "broken"
    assert broken.locator(".state").inner_text() == "unavailable"
    assert broken.locator("td").nth(1).inner_text() == "unreachable"
    assert re.fullmatch(r"\d+(\.\d+)?(ms|µs|s)", broken.locator("td").nth(2).inner_text())
    # the sources that answered still answer
    assert page.locator("ol.result-list > li").count() > 0
    assert_clean(tab)


def test_a_search_every_source_failed_says_so(tab, wide_server):
    page = tab.page
    page.goto(wide_server.url)
    page.get_by_label("broken").check()
    page.get_by_label("Question").fill("restore drill")
    page.get_by_role("button", name="Search").click()
    page.wait_for_selector("section.outcome")
    tab.shot("failed")

    banner = page.locator("section.outcome")
    assert banner.get_attribute("role") == "alert"
    assert banner.locator("h2").inner_text().startswith("Search failed")
    assert banner.locator(".outcome-value").inner_text() == "failed"
    assert page.locator("ol.result-list > li").count() == 0
    assert_clean(tab)


def test_a_click_on_a_result_shows_its_full_evidence_with_provenance_in_place(tab, server):
    page = search(tab, server, "restore backup")
    link = page.locator("ol.result-list > li").first.locator("a.locator")
    locator = link.inner_text()
    link.click()
    slot = page.locator("ol.result-list > li").first.locator(".expansion-slot")
    slot.locator("pre.content").wait_for()
    tab.shot("expand")

    full = httpx.post(server.url + "v1/expand", json={"locator": locator, "detail": "full"}, timeout=60).json()
    assert slot.locator("pre.content").inner_text() == full["content"].rstrip("\n")
    assert "compare checksums" in full["content"]
    facts = dict(zip(slot.locator("dt").all_inner_texts(), slot.locator("dd").all_inner_texts(), strict=True))
    assert facts["detail"] == "full"
    if full.get("provenance"):
        assert facts["provenance"] == full["provenance"]
    if full.get("source_revision"):
        assert facts["revision"] == full["source_revision"]
    assert link.get_attribute("aria-expanded") == "true"

    link.click()  # a second click closes it
    assert slot.is_hidden()
    assert link.get_attribute("aria-expanded") == "false"
    assert "/expand" not in page.url
    assert_clean(tab)


def test_the_suppressed_block_names_reason_count_and_successor(tab, server):
    page = search(tab, server, "borg backups")
    block = page.locator("section.suppressed")
    block.scroll_into_view_if_needed()
    tab.shot("suppressed")

    expected = api_pointers(server, "borg backups", budget={"response_tokens": -1})["suppressed"]
    superseded = [s for s in expected if s["reason"] == "superseded"]
    assert superseded, expected
    row = block.locator("tbody tr", has_text="superseded")
    assert row.locator("td").nth(0).inner_text() == str(superseded[0]["count"])
    successor = row.locator("td").nth(2).locator("a")
    assert successor.inner_text() == superseded[0]["successor"]
    assert successor.inner_text().startswith("notes:new-decision.md")
    shown = page.locator("ol.result-list a.locator").all_inner_texts()
    assert not [s for s in shown if s.startswith("notes:old-decision.md")]
    uid, _, ref = superseded[0]["lineage_root"].partition(":")
    withheld = row.locator("td").nth(1).locator("a")  # the locator the terminal prints
    assert withheld.inner_text() == f"notes:{ref}"
    assert uid not in row.inner_text()
    assert "/expand?locator=notes%3A" in (withheld.get_attribute("href") or "")

    successor.click()  # the successor opens as its own page
    page.wait_for_selector("section.expansion pre.content")
    assert "pgBackRest" in page.locator("pre.content").inner_text()
    assert "/expand?locator=" in page.url
    assert_clean(tab)


def test_the_explain_toggle_shows_the_explanation_tier(tab, server):
    page = search(tab, server, "restore backup")
    assert page.locator("details.explanation").count() == 0
    page.get_by_label("Explain").check()  # ticking it asks again
    page.wait_for_selector("details.explanation")
    tab.shot("explain")

    assert "explain=1" in page.url
    first = page.locator("ol.result-list > li").first
    arithmetic = first.locator("pre.arithmetic").inner_text()
    assert "score" in arithmetic and "rank" in arithmetic
    assert first.locator(".provenance dt").all_inner_texts()[:2] == ["source", "type"]
    plan = page.locator("section.plan")
    assert plan.locator("tbody th").all_inner_texts() == ["notes", "tasks", "mirror"]
    assert_clean(tab)


def test_a_refresh_is_confirmed_before_it_is_posted(tab, server, workspace: Workspace):
    page = tab.page
    posted: list[str] = []
    page.on("request", lambda r: posted.append(r.url) if r.method == "POST" else None)
    (workspace.notes / "runbooks" / "late-addition.md").write_text("# Late addition\n\nWritten after the first index.\n")

    page.goto(server.url + "sources")
    card = page.locator("article.source", has=page.get_by_role("heading", name=re.compile("^notes")))
    before = card.locator("dt:text-is('generation') + dd").inner_text()
    card.get_by_role("button", name="Refresh notes…").click()
    confirm = card.get_by_role("group", name="Confirm the refresh of notes")
    assert confirm.is_visible()
    assert posted == []
    card.get_by_role("button", name="Cancel").click()
    assert confirm.is_hidden() and posted == []

    card.get_by_role("button", name="Refresh notes…").click()
    card.get_by_role("button", name="Refresh now").click()
    report = card.locator(".refresh-report")
    report.wait_for()
    tab.shot("refresh")

    assert posted == [server.url + "sources/refresh"]
    assert report.inner_text().startswith("Refresh refreshed")
    line = report.locator("li").inner_text()
    assert line.startswith("notes: refreshed")
    generation = re.search(r"generation (\S+)", line)
    assert generation and generation.group(1) != before
    assert_clean(tab)


def test_sources_page_shows_health_and_freshness_and_names_the_broken_one(tab, wide_server):
    page = tab.page
    page.goto(wide_server.url + "sources")
    tab.shot("sources")
    assert page.get_by_role("alert").inner_text().startswith("Some sources")
    notes = page.locator("article.source", has=page.get_by_role("heading", name=re.compile("^notes")))
    assert notes.locator(".pill-health").inner_text() == "healthy"
    facts = dict(zip(notes.locator("dt").all_inner_texts(), notes.locator("dd").all_inner_texts(), strict=True))
    assert {"checked", "index coverage", "generation", "indexed"} <= set(facts)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", facts["checked"])
    freshness = notes.locator("ul.diagnostics > li", has_text="freshness:").inner_text()
    assert re.fullmatch(r"freshness: checked_at \S+, full_check_at \S+, mode \w+, pending 0", freshness), freshness
    assert "map[" not in notes.inner_text()
    tasks = page.locator("article.source", has=page.get_by_role("heading", name=re.compile("^tasks")))
    assert tasks.get_by_role("button").count() == 0  # its adapter keeps no index to refresh
    assert "Keeps no index" in tasks.inner_text()
    assert notes.get_by_role("button", name="Refresh notes…").is_enabled()
    sick = page.locator("article.source", has=page.get_by_role("heading", name=re.compile("^sick")))
    assert sick.locator(".pill-health").inner_text() == "unavailable"
    assert_clean(tab)


def test_retrieved_markup_renders_as_text_and_never_runs(tab, server):
    page = search(tab, server, "hostile pasted snippet")
    item = page.locator("ol.result-list > li", has_text="Pasted")
    assert item.locator(".title").inner_text() == "Pasted <script>window.__pwned = 1</script> snippet"
    assert "<img src=x onerror=" in item.locator(".excerpt-text").inner_text()
    item.locator("a.locator").click()
    content = item.locator(".expansion-slot pre.content")
    content.wait_for()
    assert "<script>window.__pwned = 2</script>" in content.inner_text()
    tab.shot("hostile")

    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("main script, main img, main [onerror]").count() == 0
    assert_clean(tab)


def test_off_loopback_the_token_is_asked_once_and_kept_for_the_tab_only(tab, token_server, browser_context):
    from tests.broker.page.conftest import TOKEN

    page = tab.page
    page.goto(token_server.url + "?q=restore+drill")
    page.get_by_label("Access token", exact=True).fill("not-the-token")
    page.get_by_label("Access token", exact=True).press("Enter")
    page.get_by_text("That token was refused").wait_for()
    tab.problems.clear()  # the refused attempt is logged as a failed load

    page.get_by_label("Access token", exact=True).fill(TOKEN)
    page.get_by_role("button", name="Continue").click()
    page.wait_for_selector("section.outcome")
    assert page.locator("ol.result-list > li").count() > 0
    assert page.evaluate("sessionStorage.getItem('recall-token')") == TOKEN
    assert page.evaluate("localStorage.length") == 0
    assert browser_context.cookies() == []

    page.get_by_role("link", name="Sources").click()  # every later request carries it
    page.wait_for_selector("article.source")
    page.reload()  # kept for the tab
    page.wait_for_selector("article.source")

    other = browser_context.new_page()  # another tab asks again
    try:
        other.goto(token_server.url)
        assert other.get_by_label("Access token", exact=True).is_visible()
        assert other.evaluate("sessionStorage.getItem('recall-token')") is None
    finally:
        other.close()


def test_keyboard_alone_reaches_search_results_and_expansion(tab, server):
    page = tab.page
    page.goto(server.url)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    page.keyboard.press("Tab")  # Search
    page.keyboard.press("Tab")  # Sources
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "q"
    page.keyboard.type("restore backup")
    page.keyboard.press("Enter")
    page.wait_for_selector("section.outcome")
    page.locator("ol.result-list a.locator").first.focus()
    page.keyboard.press("Enter")
    page.locator(".expansion-slot pre.content").first.wait_for()
    assert_clean(tab)


def test_without_javascript_search_and_expand_still_work(scriptless_tab, server):
    page = scriptless_tab.page
    page.goto(server.url)
    page.get_by_label("Question").fill("restore backup")
    page.get_by_label("Question").press("Enter")
    page.wait_for_selector("section.outcome")
    scriptless_tab.shot("no-javascript-search")
    assert page.locator("section.outcome .outcome-value").inner_text() == "answered"
    first = page.locator("ol.result-list a.locator").first
    locator = first.inner_text()
    first.click()  # a plain link: the expansion is its own page
    page.wait_for_selector("section.expansion pre.content")
    assert page.locator("#expansion-heading").inner_text() == locator
    assert "compare checksums" in page.locator("pre.content").inner_text()
    page.get_by_role("link", name=re.compile("Back to the results")).click()
    page.wait_for_selector("section.outcome")
    page.goto(server.url + "sources")
    assert page.get_by_role("button", name="Refresh notes…").is_disabled()
    assert_clean(scriptless_tab)


LABELLED = """() => [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
    .filter(el => el.labels.length === 0 && !el.getAttribute('aria-label')).map(el => el.outerHTML)"""

CONTRAST = """() => {
  const channels = (c) => c.match(/[\\d.]+/g).slice(0, 4).map(Number);
  const luminance = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const background = (el) => {
    for (; el; el = el.parentElement) {
      const c = channels(getComputedStyle(el).backgroundColor);
      if (c.length < 4 || c[3] > 0) return c;
    }
    return [255, 255, 255];
  };
  const poor = [];
  for (const el of document.querySelectorAll('main *, header *')) {
    if (!el.childNodes.length || ![...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
    if (el.closest('[hidden]') || el.closest('.visually-hidden')) continue;
    const style = getComputedStyle(el);
    const [fg, bg] = [luminance(channels(style.color)), luminance(background(el))];
    const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
    if (ratio < 4.5) poor.push(`${el.tagName}.${el.className}: ${ratio.toFixed(2)}`);
  }
  return poor;
}"""


@pytest.mark.parametrize("width", [1100, 360])
def test_every_control_is_labelled_text_has_contrast_and_a_narrow_window_does_not_scroll_sideways(
    tab, wide_server, width
):
    page = tab.page
    page.set_viewport_size({"width": width, "height": 800})
    for path in ("?q=restore+drill&explain=1", "sources"):
        page.goto(wide_server.url + path)
        assert page.evaluate(LABELLED) == []
        assert page.evaluate(CONTRAST) == []
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.goto(wide_server.url + "?q=restore+drill")
    tab.shot(f"degraded-{width}px")
    assert_clean(tab)

// The page's one script. Search and expand work without it; with it:
// - a result's locator opens its full evidence in place (click again to close);
// - the Explain box re-asks as soon as it is ticked;
// - each source's Refresh asks for confirmation, then POSTs;
// - off loopback, the bearer token is asked for once and kept for this tab only
//   (sessionStorage), and every page request carries it.
// Pages arrive as server-rendered HTML and are swapped in whole: this script
// never builds markup from retrieved text.
"use strict";

(() => {
  const TOKEN_KEY = "recall-token";

  function authHeaders(extra) {
    const headers = new Headers(extra || {});
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.set("Authorization", "Bearer " + token);
    return headers;
  }

  async function fetchDocument(url, options) {
    const response = await fetch(url, { ...options, headers: authHeaders(options && options.headers) });
    const text = await response.text();
    return { response, doc: new DOMParser().parseFromString(text, "text/html") };
  }

  function showBody(doc) {
    document.title = doc.title;
    document.body.replaceWith(document.adoptNode(doc.body));
    enhance();
  }

  async function navigate(url, push) {
    const sentToken = Boolean(sessionStorage.getItem(TOKEN_KEY));
    try {
      const { response, doc } = await fetchDocument(url);
      if (response.status === 401) sessionStorage.removeItem(TOKEN_KEY);
      if (push) history.pushState(null, "", url);
      showBody(doc);
      if (response.status === 401 && sentToken) refused();
      const main = document.getElementById("main");
      window.scrollTo(0, 0);
      if (main) main.focus({ preventScroll: true });
    } catch (error) {
      announce("The server could not be reached: " + error.message);
    }
  }

  function announce(message) {
    let line = document.getElementById("page-status");
    if (!line) {
      line = document.createElement("p");
      line.id = "page-status";
      line.className = "warning";
      line.setAttribute("role", "alert");
      document.getElementById("main").prepend(line);
    }
    line.textContent = message;
  }

  function refused() {
    const note = document.getElementById("token-refused");
    if (note) note.hidden = false;
  }

  // -- in-place expansion ----------------------------------------------------

  async function toggleExpansion(link) {
    const slot = document.getElementById(link.getAttribute("aria-controls"));
    if (!slot) return navigate(link.href, true);
    if (link.getAttribute("aria-expanded") === "true") {
      slot.hidden = true;
      slot.replaceChildren();
      link.setAttribute("aria-expanded", "false");
      return;
    }
    link.setAttribute("aria-busy", "true");
    try {
      const { doc } = await fetchDocument(link.href);
      const part = doc.querySelector(".expansion, .error");
      slot.replaceChildren(...(part ? [document.adoptNode(part)] : []));
      slot.hidden = false;
      link.setAttribute("aria-expanded", "true");
    } catch (error) {
      announce("The evidence could not be read: " + error.message);
    } finally {
      link.removeAttribute("aria-busy");
    }
  }

  // -- refresh, confirmed first ----------------------------------------------

  function askRefresh(form) {
    const confirm = form.querySelector(".confirm");
    confirm.hidden = false;
    form.querySelector(".refresh-confirm").focus();
  }

  function cancelRefresh(form) {
    form.querySelector(".confirm").hidden = true;
    form.querySelector(".refresh-ask").focus();
  }

  async function refresh(form) {
    const result = form.querySelector(".refresh-result");
    const ask = form.querySelector(".refresh-ask");
    form.querySelector(".confirm").hidden = true;
    ask.disabled = true;
    result.textContent = "Refreshing " + form.dataset.source + "…";
    try {
      const { response, doc } = await fetchDocument(form.action, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ source_id: form.dataset.source }),
      });
      if (response.status === 401) return navigate(location.href);
      const part = doc.querySelector(".refresh-report, .error");
      result.replaceChildren(...(part ? [document.adoptNode(part)] : []));
    } catch (error) {
      result.textContent = "The refresh could not be sent: " + error.message;
    } finally {
      ask.disabled = false;
    }
  }

  // -- wiring ----------------------------------------------------------------

  function enhance() {
    for (const button of document.querySelectorAll(".refresh-ask")) button.disabled = false;
    const explain = document.getElementById("explain");
    if (explain) explain.addEventListener("change", () => explain.form.requestSubmit());
  }

  function sameOrigin(url) {
    return new URL(url, location.href).origin === location.origin;
  }

  document.addEventListener("click", (event) => {
    const target = event.target instanceof Element ? event.target : null;
    if (!target) return;
    const button = target.closest("button");
    const form = button && button.closest("form.refresh");
    if (form && button.classList.contains("refresh-ask")) return askRefresh(form);
    if (form && button.classList.contains("refresh-cancel")) return cancelRefresh(form);
    const link = target.closest("a[href]");
    if (!link || !sameOrigin(link.href) || link.hash && link.pathname === location.pathname) return;
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    if (link.hasAttribute("data-expand")) toggleExpansion(link);
    else navigate(link.href, true);
  });

  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape" || !(event.target instanceof Element)) return;
    const form = event.target.closest("form.refresh");
    if (form && !form.querySelector(".confirm").hidden) cancelRefresh(form);
  });

  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement)) return;
    event.preventDefault();
    if (form.id === "token-form") {
      sessionStorage.setItem(TOKEN_KEY, form.elements.token.value.trim());
      return navigate(location.href, false);
    }
    if (form.classList.contains("refresh")) return refresh(form);
    const query = new URLSearchParams(new FormData(form)).toString();
    navigate(form.action + (query ? "?" + query : ""), true);
  });

  window.addEventListener("popstate", () => navigate(location.href));

  document.addEventListener("DOMContentLoaded", () => {
    enhance();
    // A reload of a tab that already gave its token: ask again with it.
    if (document.getElementById("token-form") && sessionStorage.getItem(TOKEN_KEY)) {
      navigate(location.href);
    }
  });
})();

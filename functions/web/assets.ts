import { type Asset, asset } from "./reply.ts";

/**
 * The web interface's only two static files, kept as strings in the source so the function's
 * bundle carries them with no build step of their own (docs/web.md). Each is served under a path
 * holding its content hash, so a page always names the version it was rendered with.
 */

const css = `
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #fff; --muted: #59636e; --line: #d1d9e0;
  --accent: #0550ae; --ok: #116329; --bad: #a40e26; --code: #f6f8fa; font-family: system-ui, sans-serif; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1;
  --line: #3d444d; --accent: #4493f8; --ok: #3fb950; --bad: #f85149; --code: #151b23; } }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: var(--bg); line-height: 1.5; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: 1rem; background: var(--bg); padding: .5rem; z-index: 1; }
header.site { display: flex; gap: 1rem; align-items: center; padding: .5rem 1rem; border-bottom: 1px solid var(--line); }
header.site .brand { font-weight: 700; text-decoration: none; color: var(--fg); }
header.site .who { margin-left: auto; color: var(--muted); }
main { max-width: 72rem; margin: 0 auto; padding: 1rem; }
nav.repo ul, nav.crumbs ol { list-style: none; display: flex; flex-wrap: wrap; gap: 1rem; padding: 0; margin: .5rem 0 1rem; }
nav.crumbs li + li::before { content: "/"; margin-right: 1rem; color: var(--muted); }
nav.repo a[aria-current] { font-weight: 700; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
.muted { color: var(--muted); }
.pass { color: var(--ok); }
.fail { color: var(--bad); }
.notice { border: 1px solid var(--line); border-left: 4px solid var(--accent); padding: .5rem 1rem; margin: 1rem 0; }
.notice.refused { border-left-color: var(--bad); }
pre, code { font-family: ui-monospace, monospace; font-size: .875rem; }
pre { background: var(--code); padding: .75rem; overflow-x: auto; }
table.lines { font-family: ui-monospace, monospace; font-size: .875rem; background: var(--code); }
table.lines td { border: 0; padding: 0 .5rem; white-space: pre-wrap; word-break: break-all; }
table.lines td.n { text-align: right; color: var(--muted); user-select: none; width: 1%; white-space: nowrap; }
.diff .add { background: color-mix(in srgb, var(--ok) 15%, transparent); }
.diff .del { background: color-mix(in srgb, var(--bad) 15%, transparent); }
.diff .hunk { color: var(--muted); }
.markdown { border: 1px solid var(--line); padding: 0 1rem; }
.markdown img { max-width: 100%; }
form.inline { display: inline; }
header.site form.dev-as { display: flex; gap: .25rem; align-items: center; }
fieldset { border: 1px solid var(--line); margin: 1rem 0; }
label { display: block; margin: .25rem 0; }
textarea { width: 100%; min-height: 5rem; }
button { font: inherit; padding: .25rem .75rem; cursor: pointer; }
.pager { display: flex; gap: 1rem; margin: 1rem 0; }
.scroll { overflow-x: auto; max-width: 100%; }
table.conflict-places { font-size: .875rem; margin: .25rem 0 .5rem; }
table.conflict-places td code { white-space: pre-wrap; word-break: break-all; }
h1, h2, h3, code { overflow-wrap: anywhere; }
@media (max-width: 40rem) {
  header.site { flex-wrap: wrap; gap: .5rem; }
  header.site .who { margin-left: 0; }
  main { padding: .5rem; }
  nav.repo ul, nav.crumbs ol { gap: .25rem .75rem; }
  nav.crumbs li + li::before { margin-right: .75rem; }
}

/* Code and diffs (functions/web/pages/highlight.ts, diff.ts, structure.ts) */
:root { --hl-keyword: #cf222e; --hl-string: #0a3069; --hl-number: #0550ae; --hl-comment: #59636e;
  --hl-title: #8250df; --hl-attr: #0550ae; --hl-type: #953800; --hl-tag: #116329; --hl-meta: #8250df;
  --line-mark: #fff8c5; }
@media (prefers-color-scheme: dark) { :root { --hl-keyword: #ff7b72; --hl-string: #a5d6ff;
  --hl-number: #79c0ff; --hl-comment: #9198a1; --hl-title: #d2a8ff; --hl-attr: #79c0ff;
  --hl-type: #ffa657; --hl-tag: #7ee787; --hl-meta: #d2a8ff; --line-mark: #3b2e05; } }
.hljs-keyword, .hljs-selector-tag, .hljs-built_in, .hljs-doctag, .hljs-template-tag { color: var(--hl-keyword); }
.hljs-string, .hljs-regexp, .hljs-meta .hljs-string, .hljs-char.escape_ { color: var(--hl-string); }
.hljs-number, .hljs-literal, .hljs-variable, .hljs-symbol, .hljs-operator { color: var(--hl-number); }
.hljs-comment, .hljs-quote, .hljs-code { color: var(--hl-comment); font-style: italic; }
.hljs-title, .hljs-title.function_, .hljs-section { color: var(--hl-title); }
.hljs-attr, .hljs-attribute, .hljs-property, .hljs-params, .hljs-selector-class, .hljs-selector-id { color: var(--hl-attr); }
.hljs-type, .hljs-title.class_, .hljs-bullet, .hljs-link { color: var(--hl-type); }
.hljs-name, .hljs-tag, .hljs-selector-pseudo { color: var(--hl-tag); }
.hljs-meta, .hljs-subst { color: var(--hl-meta); }
.hljs-addition { color: var(--ok); }
.hljs-deletion { color: var(--bad); }
.hljs-strong { font-weight: 700; }
.hljs-emphasis { font-style: italic; }
table.lines td.n a { color: inherit; text-decoration: none; }
table.lines td.n a:hover { color: var(--accent); text-decoration: underline; }
/* Without script :target marks a linked line; with it, the script marks the selection (ranges too). */
table.lines:not([data-selecting]) tr:target, table.lines tr.selected { background: var(--line-mark); }
.show-toggle a[aria-current], .diff-layout a[aria-current] { font-weight: 700; }
.structure { font-family: ui-monospace, monospace; font-size: .875rem; border: 1px solid var(--line); padding: .5rem; }
.structure ul { list-style: none; margin: 0; padding-left: 1.25rem; border-left: 1px solid var(--line); }
.structure details { display: inline; }
.structure summary { display: inline; cursor: pointer; }
.structure details[open] > summary + ul { display: block; }
.structure .document + .document { border-top: 1px dashed var(--line); margin-top: .5rem; padding-top: .5rem; }
.status { font-size: .75rem; font-weight: 600; border: 1px solid var(--line); border-radius: 1rem; padding: 0 .5rem; white-space: nowrap; }
.status-added { color: var(--ok); border-color: var(--ok); }
.status-deleted { color: var(--bad); border-color: var(--bad); }
.status-modified { color: var(--accent); border-color: var(--accent); }
.status-binary { color: var(--muted); }
.counts, .added, .removed { font-family: ui-monospace, monospace; font-size: .875rem; font-weight: 400; }
.added { color: var(--ok); }
.removed { color: var(--bad); }
.file-diff { margin: 1.5rem 0; }
.file-diff h3 { font-size: 1rem; display: flex; flex-wrap: wrap; gap: .25rem .5rem; align-items: baseline; }
.diff td.code::before { display: inline-block; width: 1ch; margin-right: .5ch; color: var(--muted); content: " "; }
.diff tr.add td.code::before, .diff.split td.code.add::before { content: "+"; }
.diff tr.del td.code::before, .diff.split td.code.del::before { content: "-"; }
.diff.split td.add { background: color-mix(in srgb, var(--ok) 15%, transparent); }
.diff.split td.del { background: color-mix(in srgb, var(--bad) 15%, transparent); }
.diff.split td.empty { background: color-mix(in srgb, var(--line) 30%, transparent); }
.diff.split td.code, .diff.split td.empty { width: 49%; }
.not-shown { border: 1px dashed var(--line); padding: .5rem 1rem; }
table.changed-paths { margin: .25rem 0 .75rem; font-size: .875rem; }
table.changed-paths caption { text-align: left; font-weight: 600; }
table.changed-paths td code { overflow-wrap: anywhere; }
/* Proposals, comments with replies, releases (functions/web/pages/discussion.ts, directory.ts) */
.comments ol { list-style: none; padding: 0; margin: .5rem 0; }
.comments li.comment { border: 1px solid var(--line); border-left: 4px solid var(--accent); padding: .25rem .75rem; margin: .5rem 0; }
.comments ol.replies { margin-left: 1rem; }
.comment-meta { margin: .25rem 0; color: var(--muted); overflow-wrap: anywhere; }
.comment-meta .comment-author { color: var(--fg); }
.comment-body { white-space: pre-wrap; overflow-wrap: anywhere; }
details.reply summary { cursor: pointer; color: var(--accent); }
.proposal-number { font-weight: 400; }
ol.releases { list-style: none; padding: 0; }
li.release { border-bottom: 1px solid var(--line); padding-bottom: 1rem; }
@media (max-width: 40rem) { .comments ol.replies { margin-left: .5rem; } }
/* Search and the file finder (functions/web/pages/search.ts) */
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
form.repo-search { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: 0 0 1rem; }
form.repo-search input[type=search] { flex: 1 1 10rem; min-width: 0; max-width: 24rem; }
kbd { font-family: ui-monospace, monospace; font-size: .8em; border: 1px solid var(--line); border-radius: 3px; padding: 0 .25em; }
ol.search-results { list-style: none; padding: 0; }
ol.search-results h3 { font-size: 1rem; margin: 1rem 0 .25rem; overflow-wrap: anywhere; }
mark { background: color-mix(in srgb, #f2cc60 55%, transparent); color: inherit; }
ol.found-paths { padding-left: 1.5rem; overflow-wrap: anywhere; }
form.search input, form.finder input[type=search] { max-width: 100%; }
/* Finding one's way: folder view, history, compare (functions/web/pages/tree.ts, history.ts, compare.ts) */
table.folder-view a.folder { font-weight: 600; }
table.folder-view td.size, table.folder-view td:nth-child(3) { white-space: nowrap; }
table.folder-view td.size { text-align: right; }
.readme { margin-top: 1.5rem; }
.compared-file h3 { font-size: 1rem; margin: 1rem 0 .25rem; }
/* CI and members (functions/web/pages/ci.ts, members.ts). Log colours are classes (the CSP allows
   no inline style): the 16 terminal colours, each readable on the light and the dark background. */
.status.running, .status.queued { color: var(--muted); }
pre.log { white-space: pre-wrap; overflow-wrap: anywhere; }
.log-pager { flex-wrap: wrap; align-items: baseline; }
dl.run { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .25rem 1rem; }
dl.run dd { margin: 0; overflow-wrap: anywhere; }
form.member-row { display: flex; flex-wrap: wrap; gap: .25rem; }
form.manual-run { margin: 1rem 0; }
:root { --ansi-0: #24292f; --ansi-1: #cf222e; --ansi-2: #116329; --ansi-3: #7d4e00; --ansi-4: #0550ae;
  --ansi-5: #8250df; --ansi-6: #1b7c83; --ansi-7: #6e7781; --ansi-8: #57606a; --ansi-9: #a40e26;
  --ansi-10: #1a7f37; --ansi-11: #633c01; --ansi-12: #218bff; --ansi-13: #a475f9; --ansi-14: #3192aa; --ansi-15: #8c959f; }
@media (prefers-color-scheme: dark) { :root { --ansi-0: #8b949e; --ansi-1: #ff7b72; --ansi-2: #3fb950;
  --ansi-3: #d29922; --ansi-4: #58a6ff; --ansi-5: #bc8cff; --ansi-6: #39c5cf; --ansi-7: #b1bac4;
  --ansi-8: #6e7681; --ansi-9: #ffa198; --ansi-10: #56d364; --ansi-11: #e3b341; --ansi-12: #79c0ff;
  --ansi-13: #d2a8ff; --ansi-14: #56d4dd; --ansi-15: #ffffff; } }
${Array.from({ length: 16 }, (_, n) => `.ansi-fg-${n} { color: var(--ansi-${n}); } .ansi-bg-${n} { background: color-mix(in srgb, var(--ansi-${n}) 25%, transparent); }`).join("\n")}
.ansi-bold { font-weight: 700; }
.ansi-dim { opacity: .7; }
.ansi-italic { font-style: italic; }
.ansi-underline { text-decoration: underline; }
/* CI log streaming (functions/web/pages/ci.ts): a running check's log before its first line,
   and the line saying it is coming, until it comes. */
pre.log:empty { display: none; }
p.log-waiting:has(+ pre.log:not(:empty)) { display: none; }
/* Issues (functions/web/pages/issues.ts) */
form.filters { display: flex; flex-wrap: wrap; gap: .25rem .75rem; align-items: center; margin: 0 0 1rem; }
form.filters input { max-width: 12rem; }
.label { display: inline-block; border: 1px solid var(--line); border-radius: 1rem; padding: 0 .5rem; font-size: .85em; }
ol.issue-thread { list-style: none; padding: 0; }
ol.issue-thread li.comment { border: 1px solid var(--line); border-left: 4px solid var(--accent); padding: .25rem .75rem; margin: .5rem 0; overflow-wrap: anywhere; }
.issue-body { overflow-wrap: anywhere; }
`;

/**
 * The live script: on a page that names a repo (and a branch) in `data-live-*` attributes, it
 * listens to the repo's event stream and, on an event about that branch, re-fetches the page and
 * swaps in its `[data-live-region]` parts. The markup comes from the server's own escaping
 * renderer; the script never builds HTML from event data. A status line tells screen readers.
 */
const js = `"use strict";
(function () {
  var root = document.querySelector("[data-live-repo]");
  if (!root || typeof EventSource === "undefined") return;
  var repo = root.getAttribute("data-live-repo");
  var branch = root.getAttribute("data-live-branch");
  var src = root.getAttribute("data-live-src") || location.href;
  var status = document.getElementById("live-status");
  var pending = false;
  function say(text) { if (status) status.textContent = text; }
  function refresh() {
    if (pending) return;
    pending = true;
    fetch(src, { headers: { accept: "text/html" }, credentials: "same-origin" })
      .then(function (res) { if (!res.ok) throw new Error(String(res.status)); return res.text(); })
      .then(function (text) {
        var next = new DOMParser().parseFromString(text, "text/html");
        document.querySelectorAll("[data-live-region]").forEach(function (old) {
          var id = old.getAttribute("data-live-region");
          var fresh = next.querySelector('[data-live-region="' + id + '"]');
          if (fresh) old.replaceWith(document.importNode(fresh, true));
        });
        say("Updated " + new Date().toLocaleTimeString());
      })
      .catch(function () { say("Could not refresh; reload the page"); })
      .finally(function () { pending = false; });
  }
  var path = repo.split("/").map(encodeURIComponent).join("/");
  var source = new EventSource("/repos/" + path + "/-/events");
  source.onopen = function () { say("Live"); root.setAttribute("data-live-state", "open"); };
  source.onmessage = function (message) {
    var event;
    try { event = JSON.parse(message.data); } catch (e) { return; }
    var data = event && event.data;
    if (!data || (branch && data.branch !== undefined && data.branch !== branch && data.branch !== "main")) return;
    refresh();
  };
  source.onerror = function () { say("Reconnecting"); };
})();
(function () {
  var list = document.querySelector("datalist[data-branches-of]");
  var input = list && document.querySelector('input[list="' + list.id + '"]');
  if (!input) return;
  var loaded = false;
  input.addEventListener("focus", function () {
    if (loaded) return;
    loaded = true;
    var path = list.getAttribute("data-branches-of").split("/").map(encodeURIComponent).join("/");
    fetch("/repos/" + path + "/-/branches", { headers: { accept: "application/json" }, credentials: "same-origin" })
      .then(function (res) { return res.ok ? res.json() : { branches: [] }; })
      .then(function (body) {
        (body.branches || []).forEach(function (b) { list.appendChild(new Option(b.name, b.name)); });
      })
      .catch(function () { loaded = false; });
  });
})();
(function () {
  // Times come from the server in UTC; show them in the reader's zone, the title keeps the UTC.
  if (typeof Intl === "undefined") return;
  var format = new Intl.DateTimeFormat(undefined, {
    year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", timeZoneName: "short"
  });
  function localize(root) {
    root.querySelectorAll("time[data-utc]").forEach(function (t) {
      var d = new Date(t.getAttribute("datetime"));
      if (!isNaN(d.getTime())) t.textContent = format.format(d);
    });
  }
  localize(document);
  // Live regions are swapped in with server markup: localize what arrives.
  new MutationObserver(function (changes) {
    changes.forEach(function (c) {
      c.addedNodes.forEach(function (n) { if (n.nodeType === 1) localize(n); });
    });
  }).observe(document.body, { childList: true, subtree: true });
})();
(function () {
  // Line numbers of a file (functions/web/pages/content.ts): a click selects the line (#L12),
  // shift-click the range from the line selected before (#L12-L20); the rows are marked.
  var table = document.querySelector("table[data-line-numbers]");
  if (!table) return;
  table.setAttribute("data-selecting", "");
  var anchor = null;
  function parse(hash) {
    var m = /^#L(\\d+)(?:-L(\\d+))?$/.exec(hash);
    if (!m) return null;
    var a = Number(m[1]), b = m[2] ? Number(m[2]) : a;
    return { from: Math.min(a, b), to: Math.max(a, b) };
  }
  function mark(range, scroll) {
    table.querySelectorAll("tr.selected").forEach(function (r) { r.classList.remove("selected"); });
    if (!range) return;
    for (var n = range.from; n <= range.to; n++) {
      var row = document.getElementById("L" + n);
      if (row) row.classList.add("selected");
    }
    var first = document.getElementById("L" + range.from);
    if (!first) return;
    // A line of a source folded under a rendered view: open it so the line shows.
    var folded = first.closest("details");
    if (folded) folded.open = true;
    if (scroll) first.scrollIntoView({ block: "center" });
  }
  table.addEventListener("click", function (e) {
    var link = e.target.closest && e.target.closest("td.n a");
    if (!link) return;
    e.preventDefault();
    var n = Number(link.getAttribute("href").slice(2));
    var range = e.shiftKey && anchor !== null ? { from: Math.min(anchor, n), to: Math.max(anchor, n) } : { from: n, to: n };
    if (!e.shiftKey || anchor === null) anchor = n;
    var hash = range.from === range.to ? "#L" + range.from : "#L" + range.from + "-L" + range.to;
    history.replaceState(null, "", hash);
    mark(range, false);
  });
  var initial = parse(location.hash);
  if (initial) { anchor = initial.from; mark(initial, true); }
  window.addEventListener("hashchange", function () {
    var range = parse(location.hash);
    if (range) anchor = range.from;
    mark(range, true);
  });
})();
(function () {
  // The file finder: "t" on a repo page (not while typing in a field) opens it.
  var link = document.querySelector("a[data-find-key]");
  if (link) document.addEventListener("keydown", function (e) {
    if (e.key !== "t" || e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
    var target = e.target;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
    e.preventDefault();
    location.href = link.href;
  });
  // On the finder, the list follows what is typed: the page's own results region, re-fetched.
  var input = document.querySelector("input[data-find-input]");
  if (!input || !input.form) return;
  var form = input.form;
  var timer;
  var inflight;
  function update() {
    var url = new URL(form.action, location.href);
    new FormData(form).forEach(function (value, key) { url.searchParams.set(key, String(value)); });
    if (inflight) inflight.abort();
    inflight = new AbortController();
    fetch(url, { headers: { accept: "text/html" }, credentials: "same-origin", signal: inflight.signal })
      .then(function (res) { return res.text(); })
      .then(function (text) {
        var fresh = new DOMParser().parseFromString(text, "text/html").querySelector("[data-find-results]");
        var old = document.querySelector("[data-find-results]");
        if (fresh && old) old.replaceWith(document.importNode(fresh, true));
        history.replaceState(null, "", url.pathname + url.search);
      })
      .catch(function () {});
  }
  input.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(update, 100);
  });
})();
(function () {
  // Running checks' logs (functions/web/pages/ci.ts): while the run page is live, every 2 s each
  // log marked data-log-tail gets the server's rendering of the bytes after data-log-end appended;
  // a whole log (data-log-final) ends its polling. The checks region is swapped in anew when a
  // check reports, so the logs are looked up on every round, and the loop ends with the run.
  var INTERVAL = 2000;
  function follow(pre) {
    var url = new URL(pre.getAttribute("data-log-tail"), location.href);
    url.searchParams.set("after", pre.getAttribute("data-log-end") || "0");
    return fetch(url, { headers: { accept: "text/html" }, credentials: "same-origin" })
      .then(function (res) { return res.ok ? res.text() : null; })
      .then(function (text) {
        if (text === null || !pre.isConnected) return;
        var part = new DOMParser().parseFromString(text, "text/html").querySelector("pre.log");
        if (!part) return;
        if (part.hasAttribute("data-log-replace")) pre.textContent = "";
        Array.prototype.forEach.call(part.childNodes, function (n) { pre.appendChild(document.importNode(n, true)); });
        pre.setAttribute("data-log-end", part.getAttribute("data-log-end"));
        if (part.getAttribute("data-log-final") === "true") pre.removeAttribute("data-log-tail");
      })
      .catch(function () {});
  }
  function round() {
    if (!document.querySelector("[data-log-streams]")) return;
    var logs = document.querySelectorAll("[data-log-streams] pre.log[data-log-tail]");
    Promise.all(Array.prototype.map.call(logs, follow)).then(function () { setTimeout(round, INTERVAL); });
  }
  if (document.querySelector("[data-log-streams]")) setTimeout(round, INTERVAL);
})();
`;

export const styles: Asset = asset("app.css", "text/css; charset=utf-8", css);
export const liveScript: Asset = asset("live.js", "text/javascript; charset=utf-8", js);
export const assets: readonly Asset[] = [styles, liveScript];

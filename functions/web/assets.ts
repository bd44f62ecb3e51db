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
h1, h2, h3, code { overflow-wrap: anywhere; }
@media (max-width: 40rem) {
  header.site { flex-wrap: wrap; gap: .5rem; }
  header.site .who { margin-left: 0; }
  main { padding: .5rem; }
  nav.repo ul, nav.crumbs ol { gap: .25rem .75rem; }
  nav.crumbs li + li::before { margin-right: .75rem; }
}
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
`;

export const styles: Asset = asset("app.css", "text/css; charset=utf-8", css);
export const liveScript: Asset = asset("live.js", "text/javascript; charset=utf-8", js);
export const assets: readonly Asset[] = [styles, liveScript];

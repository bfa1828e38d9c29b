// app.js: the console's router and boot. Every page has its own address
// under /console/ (see the routes table); links are ordinary <a href>s,
// which the router follows with history.pushState; an address opened
// directly is served the same shell by the server and routed here.
//
// A page module exports render(view, params, query, ctx): view is a fresh
// <main id="view"> (a page left behind writes into a detached one), params
// the path's parameters (decoded), query the address's URLSearchParams,
// ctx.signal an AbortSignal aborted when the page is left. render may
// return a function, called when the page is left. Pages never import this
// module (it is loaded by a versioned name): they navigate with go() of
// dom.js.
//
// Hooks for the browser tests. Every page's root has data-page="<name>"
// and, once loaded, data-ready="1". Errors show in [data-test=error] (with
// [data-test=error-code] and [data-test=error-message]); a validation
// error naming a field also in [data-test=field-error][data-field=<path>].
// Confirmations: the button <name>, then <name>-yes (or <name>-cancel).
// Success messages: [data-test=notice].
//   shell:     nav, nav-databases, nav-ops, nav-admin, session, whoami, signin-link, signout
//   signin:    signin-id, signin-secret, signin-submit, signin-noauth
//   databases: db-table, db-row (data-db), db-link, coll-link, db-create-name, db-create-submit
//   database:  branch-table, branch-row (data-branch), branch-create-name, branch-create-submit,
//              branch-delete, coll-table, coll-row (data-coll), coll-link, coll-create-name,
//              coll-create-schema, coll-create-submit, coll-drop, db-delete
//   collection: schema-tree, schema-field (data-field), schema-editor, schema-save, tabs, tab-<page>
//   documents: filter, sort, fields, limit, apply, filter-help, doc-table, doc-row, doc-link,
//              sort-<field> (column headers), next-page, prev-page, first-page, explain,
//              explain-result, insert-editor, insert-submit, count
//   document:  doc-view, doc-editor, doc-save, doc-delete
// S's pages name theirs in their own modules' top comments.

import { h, clear, link, errorBox } from "./dom.js";
import { setAuthRequiredHandler, onSessionChange, authRequired, serverInfo, signOut, currentWho, signedIn, ApiError } from "./api.js";
import { hrefs } from "./links.js";

// The routes: a path pattern (":name" a parameter, one segment) and the
// page module, loaded when first shown. One line per route.
const routes = [
  ["/console/", () => import("./pages/databases.js")],
  ["/console/signin", () => import("./pages/signin.js")],
  ["/console/db/:db", () => import("./pages/database.js")],
  ["/console/db/:db/c/:coll", () => import("./pages/collection.js")],
  ["/console/db/:db/c/:coll/docs", () => import("./pages/documents.js")],
  ["/console/db/:db/c/:coll/doc/:key", () => import("./pages/document.js")],
  ["/console/db/:db/c/:coll/search", () => import("./pages/search.js")],
  ["/console/db/:db/c/:coll/live", () => import("./pages/live.js")],
  ["/console/db/:db/c/:coll/messages", () => import("./pages/messages.js")],
  ["/console/ops", () => import("./pages/operations.js")],
  ["/console/admin", () => import("./pages/admin.js")],
];

// match finds the route of a path and its parameters.
function match(path) {
  const segs = split(path);
  for (const [pattern, load] of routes) {
    const ps = split(pattern);
    if (ps.length !== segs.length) continue;
    const params = {};
    let ok = true;
    for (let i = 0; i < ps.length && ok; i++) {
      if (ps[i].startsWith(":")) {
        try { params[ps[i].slice(1)] = decodeURIComponent(segs[i]); } catch (_) { ok = false; }
      } else if (ps[i] !== segs[i]) ok = false;
    }
    if (ok) return { pattern, load, params };
  }
  return null;
}

function split(path) {
  return path.replace(/\/+$/, "").split("/").filter((s) => s !== "");
}

let leave = null; // the current page's cleanup
let current = 0; // the number of the navigation being shown

// show renders the page of the current address.
async function show() {
  const n = ++current;
  if (leave) {
    try { leave(); } catch (_) { /* the page is gone anyway */ }
    leave = null;
  }
  const controller = new AbortController();
  const cleanups = [() => controller.abort()];
  leave = () => cleanups.forEach((f) => f());

  const old = document.getElementById("view");
  const view = h("main", { id: "view", "data-test": "view" });
  old.replaceWith(view);
  markNav(location.pathname);

  const path = location.pathname;
  const query = new URLSearchParams(location.search);
  const route = match(path);
  try {
    if (!route) {
      view.append(h("section", { class: "page", "data-page": "not-found", "data-ready": "1" },
        h("h1", {}, "No such page"), h("p", {}, "The console has no page at ", h("code", {}, path), ". "), link(hrefs.databases(), "Databases")));
      return;
    }
    // The page's module loads while the server is asked whether to sign
    // in: the first page waits for one round trip, not two.
    const loading = route.load();
    loading.catch(() => {}); // reported below, if the page is still wanted
    if (route.pattern !== "/console/signin" && (await authRequired())) {
      if (n === current) go(hrefs.signin(path + location.search), true);
      return;
    }
    const mod = await loading;
    if (n !== current) return;
    const cleanup = await mod.render(view, route.params, query, { signal: controller.signal });
    if (typeof cleanup === "function") {
      if (n === current) cleanups.push(cleanup);
      else cleanup();
    }
  } catch (err) {
    if (err && err.name === "AbortError") return;
    if (n !== current) return;
    if (err instanceof ApiError && err.status === 401) return; // the sign-in page is on its way
    view.append(h("section", { class: "page", "data-page": "error", "data-ready": "1" }, errorBox(err)));
  }
}

function markNav(path) {
  for (const a of document.querySelectorAll(".nav a")) {
    const href = a.getAttribute("href");
    const here = href === "/console/" ? path === "/console/" || path.startsWith("/console/db/") : path.startsWith(href);
    a.classList.toggle("current", here);
  }
}

// go shows the page at href, adding it to the history (or replacing the
// current entry).
function go(href, replace) {
  if (replace) history.replaceState(null, "", href);
  else history.pushState(null, "", href);
  window.scrollTo(0, 0);
  show();
}

// Links: a plain left click on a link within the console is the router's;
// anything else (a new tab, a download, another site) the browser's.
document.addEventListener("click", (ev) => {
  if (ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
  const a = ev.target.closest && ev.target.closest("a[href]");
  if (!a || a.target || a.hasAttribute("download")) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith("/console/") || url.pathname.startsWith("/console/assets/")) return;
  ev.preventDefault();
  if (url.pathname + url.search === location.pathname + location.search && !url.hash) {
    show(); // the same page: show it afresh
    return;
  }
  go(url.pathname + url.search + url.hash, false);
});

window.addEventListener("popstate", () => show());
window.addEventListener("console:go", (ev) => go(ev.detail.href, ev.detail.replace));

// A 401 from any call: sign in, then come back here.
setAuthRequiredHandler(() => {
  if (location.pathname === "/console/signin") return;
  signOut();
  go(hrefs.signin(location.pathname + location.search), true);
});

// The header's sign-in state.
async function renderSession() {
  const el = document.getElementById("session");
  clear(el);
  let auth = false;
  try { auth = Boolean((await serverInfo()).auth); } catch (err) {
    el.append(h("span", { class: "error", "data-test": "error" }, "server unreachable: " + err.message));
    return;
  }
  if (!auth) {
    el.append(h("span", { "data-test": "whoami" }, "no authentication"));
    return;
  }
  if (!signedIn()) {
    el.append(link(hrefs.signin(location.pathname + location.search), "Sign in", { "data-test": "signin-link" }));
    return;
  }
  const who = currentWho();
  el.append(
    h("span", { "data-test": "whoami" }, who ? `${who.role || "?"} in ${who.namespace || "?"}${who.project ? ` (project ${who.project})` : ""}` : "signed in"),
    h("button", { type: "button", class: "plain", "data-test": "signout", onclick: () => { signOut(); go(hrefs.signin(), false); } }, "Sign out"),
  );
}

onSessionChange(renderSession);
renderSession();
show();

// pages/live.js: /console/db/:db/c/:coll/live, a collection's change
// events as they happen (the events stream), newest first.
//
// Events are a 2022 call (/v1/databases/{db}/collections/{coll}/events:
// the final API dropped them), which reads no branch: the page follows
// main only. A filter makes the stream a live query: only the changes that
// concern the documents it matches, with "left_filter" on an update that
// takes a document out of it.
//
// Pausing closes the stream; resuming opens it again after the last
// position seen (options.start_after), so nothing committed in between is
// lost or shown twice. The address carries that position (?from=) and the
// filter (?filter=), so a paused page bookmarked or reloaded resumes there.
//
// data-test hooks (root: data-page="live"; data-ready="1" once the stream
// is open, so that everything committed after it reaches the page):
//   live-filter (textarea), live-apply, live-toggle (pause / resume),
//   live-state (data-state = connecting, live, paused, ended), live-from
//   (the position the stream resumed after), live-clear, live-count,
//   live-events (the table), live-event (a row: data-op, data-position,
//   data-tx), event-op, event-key, event-tx, event-position, event-left-filter
//   (only on events that left the filter), event-doc (link to the document);
//   error, field-error (an unreadable filter).

import { h, link, jsonView, compact, errorBox, fieldError, page, ready, formatCount } from "../dom.js";
import { api, stream, paths, parseJSON, stringify } from "../api.js";
import { keyOf } from "./documents.js";
import { hrefs, withQuery, crumbs, collectionTabs } from "../links.js";

// KEEP is the most events the page holds: older ones drop off the end.
const KEEP = 500;

export async function render(view, params, query, ctx) {
  const { db, coll } = params;
  const branch = query.get("branch") || "";
  const root = page("live", crumbs(params, query, "live"), h("h1", {}, `Live: ${coll}`), collectionTabs(params, query, "live"));
  view.append(root);

  if (branch && branch !== "main") {
    root.append(errorBox(new Error(`Change events are a call of the 2022 API, which has no branches: they follow main only, not branch '${branch}'.`)),
      link(hrefs.live(db, coll), "Live events of main"));
    ready(root);
    return;
  }

  let primaryKey = [];
  try {
    const desc = await api("POST", `${paths.collection(db, coll)}/describe`, {}, { signal: ctx.signal });
    if (desc.schema && desc.schema.collection_type === "messages") {
      root.append(h("p", { class: "muted" }, "This is a messages collection: its messages come by subscribing. "),
        link(hrefs.messages(db, coll, branch), "Publish and subscribe"));
      ready(root);
      return;
    }
    primaryKey = (desc.schema && desc.schema.primary_key) || [];
  } catch (err) {
    root.append(errorBox(err));
    ready(root);
    return;
  }

  const live = new LiveView(root, db, coll, primaryKey, query, ctx.signal);
  live.start();
  return () => live.stop();
}

// LiveView is the page's one stream and its table of events.
class LiveView {
  constructor(root, db, coll, primaryKey, query, pageSignal) {
    this.root = root;
    this.db = db;
    this.coll = coll;
    this.primaryKey = primaryKey;
    this.pageSignal = pageSignal;
    this.filterText = query.get("filter") || "";
    this.last = query.get("from") || ""; // resume after this position: the last one seen
    this.count = 0;
    this.controller = null;

    this.filter = h("textarea", { class: "short", placeholder: "{\"age\": {\"$gte\": 18}} (empty: every change)", "data-test": "live-filter" });
    this.filter.value = this.filterText;
    this.filterSlot = h("div", {});
    this.state = h("span", { class: "live-state", "data-test": "live-state" });
    this.toggle = h("button", { type: "button", "data-test": "live-toggle", onclick: () => this.onToggle() }, "Pause");
    this.counter = h("span", { class: "muted", "data-test": "live-count" });
    this.fromNote = h("span", { class: "muted", "data-test": "live-from" });
    this.errors = h("div", {});
    this.body = h("tbody", {});
    this.table = h("table", { class: "grid live-events", "data-test": "live-events" },
      h("thead", {}, h("tr", {}, h("th", {}, "received"), h("th", {}, "op"), h("th", {}, "key"), h("th", {}, "transaction"),
        h("th", {}, "position"), h("th", {}, "document"))),
      this.body);

    root.append(
      h("form", { class: "panel", onsubmit: (ev) => { ev.preventDefault(); this.applyFilter(); } },
        h("label", { class: "block" }, "Filter (JSON, the read filter's language): only changes to the documents it matches", this.filter),
        this.filterSlot,
        h("div", { class: "row" }, h("button", { type: "submit", class: "plain", "data-test": "live-apply" }, "Apply filter"))),
      h("div", { class: "row" }, this.toggle, this.state, this.counter, this.fromNote,
        h("button", { type: "button", class: "plain", "data-test": "live-clear", onclick: () => this.clearRows() }, "Clear")),
      this.errors,
      this.table);
    this.showCount();
  }

  start() {
    this.errors.replaceChildren();
    let filter;
    try {
      filter = this.filterText ? parseJSON(this.filterText) : undefined;
    } catch (err) {
      this.filterSlot.replaceChildren(fieldError("filter", `not JSON: ${err.message}`));
      this.setState("paused");
      ready(this.root);
      return;
    }
    const body = {};
    if (filter !== undefined) body.filter = filter;
    if (this.last) body.options = { start_after: this.last };
    this.fromNote.textContent = this.last ? `after position ${this.last}` : "from now";

    const controller = new AbortController();
    this.controller = controller;
    const signal = AbortSignal.any([controller.signal, this.pageSignal]);
    this.setState("connecting");
    stream(`${paths.collection2022(this.db, this.coll)}/events`, body, (line) => this.onLine(line), {
      signal,
      // The stream answers 200 once it is in place: from then on every
      // commit reaches it, and the page says it is ready.
      onOpen: () => {
        this.setState("live");
        ready(this.root);
      },
    }).then(() => {
      if (this.controller === controller) this.ended(null);
    }, (err) => {
      if (err && err.name === "AbortError") return;
      if (this.controller === controller) this.ended(err);
    });
  }

  stop() {
    if (this.controller) this.controller.abort();
    this.controller = null;
  }

  onToggle() {
    if (this.controller) {
      this.stop();
      this.setState("paused");
      this.remember();
    } else {
      this.start();
    }
  }

  applyFilter() {
    this.filterSlot.replaceChildren();
    const text = this.filter.value.trim();
    if (text !== "") {
      try {
        parseJSON(text);
      } catch (err) {
        this.filterSlot.append(fieldError("filter", `not JSON: ${err.message}`));
        return;
      }
    }
    // A new filter is a new view: it starts from now, with an empty table.
    this.stop();
    this.filterText = text;
    this.last = "";
    this.clearRows();
    this.remember();
    this.start();
  }

  // ended: the server closed the stream (an error line, such as a stream
  // that fell behind, or the server shutting down), or it failed to open.
  ended(err) {
    this.controller = null;
    this.setState("ended");
    if (err) this.errors.replaceChildren(errorBox(err));
    this.remember();
    ready(this.root);
  }

  onLine(line) {
    const ev = line && line.result && line.result.event;
    if (!ev) return;
    this.last = ev.position || this.last;
    this.count++;
    this.body.prepend(this.row(ev));
    while (this.body.childElementCount > KEEP) this.body.lastElementChild.remove();
    this.showCount();
  }

  row(ev) {
    const key = ev.data && this.primaryKey.length > 0 ? keyOf(ev.data, this.primaryKey) : null;
    return h("tr", { "data-test": "live-event", "data-op": ev.op, "data-position": ev.position || "", "data-tx": ev.tx_id || "" },
      h("td", { class: "muted" }, new Date().toLocaleTimeString()),
      h("td", { "data-test": "event-op" }, h("span", { class: `op op-${ev.op}` }, ev.op),
        ev.left_filter ? h("span", { class: "tag left-filter", "data-test": "event-left-filter", title: "the document no longer matches the filter: drop it from the view" }, "left filter") : null,
        ev.last ? null : h("span", { class: "muted", title: "more changes of this transaction follow" }, " …")),
      h("td", { class: "cell", "data-test": "event-key" }, ev.key || ""),
      h("td", { class: "cell", "data-test": "event-tx" }, ev.tx_id || ""),
      h("td", { class: "cell", "data-test": "event-position" }, ev.position || ""),
      h("td", {}, key ? link(hrefs.document(this.db, this.coll, key), keyText(key), { "data-test": "event-doc" }) : null,
        ev.data ? folded(ev.data) : h("span", { class: "muted" }, "(no document: deleted)")));
  }

  clearRows() {
    this.body.replaceChildren();
    this.count = 0;
    this.showCount();
  }

  showCount() {
    this.counter.textContent = `${formatCount(this.count)} event${this.count === 1 ? "" : "s"}` + (this.count > KEEP ? ` (the last ${KEEP} shown)` : "");
  }

  setState(s) {
    this.state.setAttribute("data-state", s);
    this.state.className = `live-state state-${s}`;
    this.state.textContent = { connecting: "connecting…", live: "● live", paused: "paused", ended: "ended" }[s];
    this.toggle.textContent = s === "live" || s === "connecting" ? "Pause" : "Resume";
  }

  // remember writes the filter and the last position into the address
  // (without showing the page again), so that a bookmark resumes here.
  remember() {
    const here = new URLSearchParams(location.search);
    const params = { branch: here.get("branch") || "", filter: this.filterText, from: this.last };
    history.replaceState(null, "", withQuery(location.pathname, params));
  }
}


// folded is a value in one short line that opens into its tree.
function folded(v) {
  return h("details", { class: "folded" }, h("summary", { class: "mono" }, compact(v, 100)), jsonView(v, { open: 1 }));
}

function keyText(key) {
  const vals = Object.values(key);
  return vals.length === 1 && typeof vals[0] !== "object" ? String(vals[0]) : stringify(key);
}

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

import { h, link, jsonView, compact, errorBox, page, ready, formatCount } from "../dom.js";
import { api, paths, stringify } from "../api.js";
import { Follow } from "../follow.js";
import { keyOf } from "./documents.js";
import { hrefs, crumbs, collectionTabs } from "../links.js";

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
class LiveView extends Follow {
  constructor(root, db, coll, primaryKey, query, pageSignal) {
    super(root, `${paths.collection2022(db, coll)}/events`, query, pageSignal, "● live");
    this.db = db;
    this.coll = coll;
    this.primaryKey = primaryKey;
    this.count = 0;

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

  opening() {
    this.fromNote.textContent = this.last ? `after position ${this.last}` : "from now";
  }

  reset() {
    this.clearRows();
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
}


// folded is a value in one short line that opens into its tree.
function folded(v) {
  return h("details", { class: "folded" }, h("summary", { class: "mono" }, compact(v, 100)), jsonView(v, { open: 1 }));
}

function keyText(key) {
  const vals = Object.values(key);
  return vals.length === 1 && typeof vals[0] !== "object" ? String(vals[0]) : stringify(key);
}

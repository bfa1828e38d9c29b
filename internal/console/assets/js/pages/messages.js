// pages/messages.js: /console/db/:db/c/:coll/messages, a messages
// collection: publish messages, and a filtered subscribe showing them as
// they arrive, newest first.
//
// Publish and subscribe are calls of the 2022 API (the final API dropped
// them), which reads no branch: the page works on main only. The
// subscription opens with the page (every message), and again whenever a
// filter is applied; pausing closes it and resuming opens it after the last
// position seen, so nothing published in between is lost. The address
// carries the filter (?filter=) and that position (?from=).
//
// data-test hooks (root: data-page="messages"; data-ready="1" once the
// subscription is open):
//   publish-editor (textarea: a message, or an array of them), publish-submit,
//   publish-result (the notice: how many, their keys);
//   sub-filter (textarea), sub-apply, sub-toggle (pause / resume), sub-state
//   (data-state = connecting, live, paused, ended), sub-count, sub-messages
//   (the list), message (an item: data-position), message-position,
//   message-body; not-messages (the note on a documents collection, which has
//   no messages); error, field-error (JSON that does not parse).

import { h, link, jsonView, compact, errorBox, fieldError, notice, page, ready, formatCount } from "../dom.js";
import { api, paths, parseJSON } from "../api.js";
import { Follow } from "../follow.js";
import { hrefs, crumbs, collectionTabs } from "../links.js";

const KEEP = 500;

export async function render(view, params, query, ctx) {
  const { db, coll } = params;
  const branch = query.get("branch") || "";
  const root = page("messages", crumbs(params, query, "messages"), h("h1", {}, `Messages: ${coll}`), collectionTabs(params, query, "messages"));
  view.append(root);

  if (branch && branch !== "main") {
    root.append(errorBox(new Error(`Publish and subscribe are calls of the 2022 API, which has no branches: they reach main only, not branch '${branch}'.`)),
      link(hrefs.messages(db, coll), "Messages of main"));
    ready(root);
    return;
  }
  try {
    const desc = await api("POST", `${paths.collection(db, coll)}/describe`, {}, { signal: ctx.signal });
    if (!desc.schema || desc.schema.collection_type !== "messages") {
      root.append(h("p", { class: "muted", "data-test": "not-messages" },
        "This is a documents collection: messages are published to a collection whose schema says \"collection_type\": \"messages\". Its changes show on its live page. "),
        link(hrefs.live(db, coll, branch), "Live events"));
      ready(root);
      return;
    }
  } catch (err) {
    root.append(errorBox(err));
    ready(root);
    return;
  }

  root.append(publishForm(db, coll));
  const sub = new Subscription(root, db, coll, query, ctx.signal);
  sub.start();
  return () => sub.stop();
}

function publishForm(db, coll) {
  const editor = h("textarea", { class: "short", placeholder: "{\"text\": \"hi\"}  or  [{\"text\": \"a\"}, {\"text\": \"b\"}]", "data-test": "publish-editor" });
  const slot = h("div", {});
  const submit = async (ev) => {
    ev.preventDefault();
    slot.replaceChildren();
    let value;
    try {
      value = parseJSON(editor.value);
    } catch (err) {
      slot.append(fieldError("message", `not JSON: ${err.message}`));
      return;
    }
    const messages = Array.isArray(value) ? value : [value];
    const button = ev.submitter;
    if (button) button.disabled = true;
    try {
      const res = await api("POST", `${paths.collection2022(db, coll)}/messages/publish`, { messages });
      const keys = (res && res.keys) || [];
      slot.append(h("div", { "data-test": "publish-result" },
        notice(`${res && res.status ? res.status : "published"}: ${messages.length} message${messages.length === 1 ? "" : "s"}`),
        keys.length > 0 ? h("div", { class: "muted mono" }, "keys: ", keys.join(", ")) : null));
    } catch (err) {
      if (err.field !== undefined) slot.append(fieldError(err.field || "message", err.message));
      slot.append(errorBox(err));
    } finally {
      if (button) button.disabled = false;
    }
  };
  return h("form", { class: "panel", onsubmit: submit },
    h("h2", {}, "Publish"),
    h("label", { class: "block" }, "A message (JSON), or an array of them: checked against the schema, all published or none", editor),
    h("div", { class: "row" }, h("button", { type: "submit", "data-test": "publish-submit" }, "Publish")),
    slot);
}

// Subscription is the page's subscribe stream and its list of messages.
class Subscription extends Follow {
  constructor(root, db, coll, query, pageSignal) {
    super(root, `${paths.collection2022(db, coll)}/messages/subscribe`, query, pageSignal, "● subscribed");
    this.count = 0;

    this.filter = h("textarea", { class: "short", placeholder: "{\"text\": \"hi\"} (empty: every message)", "data-test": "sub-filter" });
    this.filter.value = this.filterText;
    this.filterSlot = h("div", {});
    this.state = h("span", { class: "live-state", "data-test": "sub-state" });
    this.toggle = h("button", { type: "button", "data-test": "sub-toggle", onclick: () => this.onToggle() }, "Pause");
    this.counter = h("span", { class: "muted", "data-test": "sub-count" });
    this.errors = h("div", {});
    this.list = h("ol", { class: "messages", reversed: true, "data-test": "sub-messages" });

    root.append(h("h2", {}, "Subscribe"),
      h("form", { class: "panel", onsubmit: (ev) => { ev.preventDefault(); this.applyFilter(); } },
        h("label", { class: "block" }, "Filter (JSON, the read filter's language): only the messages it matches", this.filter),
        this.filterSlot,
        h("div", { class: "row" }, h("button", { type: "submit", class: "plain", "data-test": "sub-apply" }, "Apply filter"))),
      h("div", { class: "row" }, this.toggle, this.state, this.counter),
      this.errors,
      this.list);
    this.showCount();
  }

  reset() {
    this.list.replaceChildren();
    this.count = 0;
    this.showCount();
  }

  onLine(line) {
    const r = line && line.result;
    if (!r || r.message === undefined) return;
    this.last = r.position || this.last;
    this.count++;
    this.list.prepend(h("li", { class: "message", "data-test": "message", "data-position": r.position || "" },
      h("div", { class: "muted" }, new Date().toLocaleTimeString(), " · position ", h("span", { class: "mono", "data-test": "message-position" }, r.position || "")),
      h("details", { class: "folded", "data-test": "message-body" }, h("summary", { class: "mono" }, compact(r.message, 120)), jsonView(r.message, { open: 1 }))));
    while (this.list.childElementCount > KEEP) this.list.lastElementChild.remove();
    this.showCount();
  }

  showCount() {
    this.counter.textContent = `${formatCount(this.count)} message${this.count === 1 ? "" : "s"} received` + (this.count > KEEP ? ` (the last ${KEEP} shown)` : "");
  }
}

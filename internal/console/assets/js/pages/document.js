// pages/document.js: one document, by its primary key (the key's JSON in
// the address: /console/db/:db/c/:coll/doc/{"id":1}): shown as a tree,
// edited as JSON (sent as a replace; a validation error is shown beside the
// field it names), deleted after a confirmation.
import { h, page, ready, errorBox, fieldError, notice, go, jsonView, confirmButton } from "../dom.js";
import { api, stream, paths, withBranch, parseJSON, stringify } from "../api.js";
import { hrefs, crumbs, collectionTabs } from "../links.js";

export async function render(view, params, query, { signal }) {
  const { db, coll } = params;
  const branch = query.get("branch") || "";
  const root = page("document", crumbs(params, query, "document"));
  view.append(root);
  let key;
  try {
    key = parseJSON(params.key);
    if (!key || typeof key !== "object" || Array.isArray(key)) throw new Error("not an object of the key's fields");
  } catch (err) {
    root.append(errorBox(new Error(`The address's key is not a primary key's JSON ({"id": 1}): ${err.message}`)));
    ready(root);
    return;
  }
  root.append(h("h1", { class: "mono" }, stringify(key)), collectionTabs(params, query, "document"));

  // The key, as a filter, reads the document.
  let doc;
  try {
    await stream(paths.documents(db, coll) + "/read", withBranch({ filter: key, options: { limit: 1 } }, branch), (line) => {
      if (line && line.result && doc === undefined) doc = line.result;
    }, { signal });
  } catch (err) {
    if (err.name === "AbortError") throw err;
    root.append(errorBox(err));
    ready(root);
    return;
  }
  if (doc === undefined) {
    root.append(h("p", { "data-test": "not-found" }, "No document has this key (deleted, or never written)."),
      h("p", {}, h("a", { href: hrefs.documents(db, coll, branch) }, "All documents")));
    ready(root);
    return;
  }
  const data = doc.data;
  const meta = doc.metadata || {};
  root.append(h("p", { class: "muted", "data-test": "doc-times" },
    meta.created_at ? `Created ${meta.created_at}` : "", meta.updated_at ? `, updated ${meta.updated_at}` : ""));

  const viewBox = h("div", { "data-test": "doc-view" }, jsonView(data, { open: 3 }));
  const editor = h("textarea", { class: "tall", spellcheck: "false", "data-test": "doc-editor" });
  editor.value = stringify(data, 2);
  const out = h("div", { "data-test": "doc-result" });
  const save = h("button", { type: "submit", "data-test": "doc-save" }, "Save (replace)");
  const form = h("form", { onsubmit: onSave }, editor, h("div", { class: "row" }, save,
    h("span", { class: "muted" }, "The whole document is replaced. Changing the key writes a document under the new key and leaves this one.")), out);
  root.append(h("div", { class: "cols" },
    h("div", {}, h("h2", {}, "Document"), viewBox),
    h("div", {}, h("h2", {}, "Edit"), form)));

  const delOut = h("div");
  root.append(h("h2", {}, "Delete"), confirmButton("Delete", "Delete this document?", "doc-delete", async () => {
    delOut.replaceChildren();
    try {
      await api("DELETE", paths.documents(db, coll) + "/delete", withBranch({ filter: key }, branch));
      go(hrefs.documents(db, coll, branch), { replace: true });
    } catch (err) {
      delOut.append(errorBox(err));
    }
  }), delOut);
  ready(root);

  async function onSave(ev) {
    ev.preventDefault();
    out.replaceChildren();
    for (const li of viewBox.querySelectorAll("li.has-error")) li.classList.remove("has-error");
    for (const fe of viewBox.querySelectorAll(".field-error")) fe.remove();
    let next;
    try {
      next = parseJSON(editor.value);
    } catch (err) {
      out.append(errorBox(new Error("The document is not JSON: " + err.message)));
      return;
    }
    save.disabled = true;
    try {
      await api("PUT", paths.documents(db, coll) + "/replace", withBranch({ documents: [next] }, branch));
      out.append(notice("Saved."));
      viewBox.replaceChildren(jsonView(next, { open: 3 }));
    } catch (err) {
      showError(err);
    } finally {
      save.disabled = false;
    }
  }

  // showError puts a validation error beside the field it names: on the
  // field's row in the tree (the caret is put on its line in the editor),
  // or under the editor for a field the tree does not show; any other
  // error in the error box.
  function showError(err) {
    if (err.field === undefined) {
      out.append(errorBox(err));
      return;
    }
    const field = err.field || "(document)";
    const box = fieldError(field, `${err.code}: ${err.message}`);
    const top = (err.field || "").split(".")[0];
    const li = top ? viewBox.querySelector(`:scope > .json > details > ul > li[data-field="${CSS.escape(top)}"]`) : null;
    if (li) {
      li.classList.add("has-error");
      li.append(box);
    } else {
      out.append(box);
    }
    const at = top ? editor.value.indexOf(JSON.stringify(top) + ":") : -1;
    if (at >= 0) {
      editor.focus();
      editor.setSelectionRange(at, at + JSON.stringify(top).length);
    }
  }
}

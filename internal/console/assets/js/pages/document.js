// pages/document.js: one document, by its primary key (the key's JSON in
// the address: /console/db/:db/c/:coll/doc/{"id":1}): shown as a tree,
// edited as JSON (sent as a replace; a validation error is shown beside the
// field it names), deleted after a confirmation.
//
// The key is used as the filter of the read and of the delete, and the
// address is anyone's to write: {} or a part of a composite key would
// match many documents (and Delete would delete them all), an operator
// ({"id":{"$gte":0}}) a range. So the key is taken only if it is exactly
// the schema's primary key, each field with a plain value, and the
// document read must hold that key; otherwise the page says why and
// offers neither Save nor Delete.
import { h, page, ready, errorBox, fieldError, notice, go, jsonView, confirmButton } from "../dom.js";
import { api, stream, paths, withBranch, parseJSON, stringify } from "../api.js";
import { hrefs, crumbs, collectionTabs } from "../links.js";
import { keyOf } from "./documents.js";

// keyProblem says why key is not one document's primary key pk (its
// fields' paths), or "" if it is: the same fields, no more, no fewer,
// each a string, a number or a boolean (no object, array, operator or
// null, which a filter reads as something other than "equal to").
export function keyProblem(key, pk) {
  const names = Object.keys(key);
  const missing = pk.filter((f) => !names.includes(f));
  const extra = names.filter((n) => !pk.includes(n));
  if (missing.length > 0 || extra.length > 0) {
    const parts = [];
    if (missing.length > 0) parts.push(`it lacks ${missing.join(", ")}`);
    if (extra.length > 0) parts.push(`${extra.join(", ")} ${extra.length === 1 ? "is" : "are"} not part of it`);
    return `the primary key is ${pk.join(", ")}; ${parts.join(", and ")}`;
  }
  for (const f of pk) {
    const v = key[f];
    const scalar = typeof v === "string" || typeof v === "number" || typeof v === "boolean" ||
      (typeof JSON.isRawJSON === "function" && JSON.isRawJSON(v)); // an int64 beyond 2^53
    if (!scalar) return `the value of ${f} must be a string, a number or a boolean, not ${stringify(v)}`;
  }
  return "";
}

// sameKey says whether two keys of the fields pk hold the same values.
function sameKey(a, b, pk) {
  return pk.every((f) => stringify(a[f]) === stringify(b[f]));
}

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

  // The schema says what the key must be.
  let pk;
  try {
    const d = await api("POST", paths.collection(db, coll) + "/describe", withBranch({}, branch), { signal });
    pk = (d.schema && d.schema.primary_key) || ["id"];
  } catch (err) {
    if (err.name === "AbortError") throw err;
    root.append(errorBox(err));
    ready(root);
    return;
  }
  const why = keyProblem(key, pk);
  if (why) {
    root.append(errorBox(new Error(`The address's key ${stringify(key)} is not one document's primary key: ${why}.`)),
      h("p", {}, h("a", { href: hrefs.documents(db, coll, branch) }, "All documents")));
    ready(root);
    return;
  }

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
  const held = data && typeof data === "object" ? keyOf(data, pk) : null;
  if (!held || !sameKey(held, key, pk)) {
    root.append(errorBox(new Error(`The document read does not hold the address's key ${stringify(key)} (it holds ${held ? stringify(held) : "no whole key"}): it is not shown, to be neither edited nor deleted.`)));
    ready(root);
    return;
  }
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

// pages/collection.js: a collection's schema, as a readable tree (fields,
// types, the primary key, unique keys, the ttl), and an editor that sends
// createOrUpdate and shows the server's refusal of an incompatible change
// as the server said it.
import { h, page, ready, errorBox, notice, formatBytes } from "../dom.js";
import { api, paths, withBranch, parseJSON, stringify } from "../api.js";
import { crumbs, collectionTabs } from "../links.js";

export async function render(view, params, query, { signal }) {
  const { db, coll } = params;
  const branch = query.get("branch") || "";
  const root = page("collection", crumbs(params, query), h("h1", {}, coll), collectionTabs(params, query, "collection"));
  view.append(root);
  let d;
  try {
    d = await api("POST", paths.collection(db, coll) + "/describe", withBranch({}, branch), { signal });
  } catch (err) {
    root.append(errorBox(err));
    ready(root);
    return;
  }
  const schema = d.schema || {};
  root.append(h("p", { class: "muted", "data-test": "coll-sizes" },
    `${schema.collection_type === "messages" ? "Messages" : "Documents"} collection. Data ${formatBytes(d.sizes ? d.sizes.documents : d.size)}, indexes ${formatBytes(d.sizes ? d.sizes.indexes : 0)}` +
    (d.expired_pending ? `, ${d.expired_pending} expired documents not deleted yet` : "") + "."));

  const cols = h("div", { class: "cols" });
  root.append(cols);
  const tree = h("div", {}, schemaTree(schema));
  cols.append(h("div", {}, h("h2", {}, "Schema"), tree));
  cols.append(h("div", {}, h("h2", {}, "Edit the schema"), editor(db, coll, branch, schema, tree)));
  if (d.indexes && d.indexes.length) {
    root.append(h("h2", {}, "Indexes"), h("table", { class: "grid", "data-test": "index-table" },
      h("thead", {}, h("tr", {}, h("th", {}, "Index"), h("th", {}, "State"))),
      h("tbody", {}, d.indexes.map((ix) => h("tr", {}, h("td", { class: "mono" }, ix.name), h("td", {}, ix.state || ""))))));
  }
  ready(root);
}

// The members of a field's definition that the tree shows as its type or
// its children; the others become tags.
const structural = new Set(["type", "format", "items", "properties", "description", "title"]);

// schemaTree shows a schema: its keys, then its fields, nested.
export function schemaTree(schema) {
  const pk = schema.primary_key || [];
  const ttlField = schema.ttl && schema.ttl.field;
  const uniques = Array.isArray(schema.unique) ? schema.unique : [];
  const facts = h("ul", { class: "facts" },
    h("li", {}, "Primary key: ", h("code", { "data-test": "schema-pk" }, pk.length ? pk.join(", ") : "id (generated)")),
    uniques.length ? h("li", {}, "Unique together: ", uniques.map((u, i) => [i ? "; " : "", h("code", {}, u.join(" + "))])) : null,
    schema.ttl ? h("li", { "data-test": "schema-ttl" }, "Documents expire at ", h("code", {}, schema.ttl.field), schema.ttl.after ? ` + ${schema.ttl.after}` : "") : null,
    schema.description ? h("li", {}, schema.description) : null);
  const ctx = { pk, ttlField, required: new Set(schema.required || []) };
  return h("div", { class: "schema", "data-test": "schema-tree" }, facts, fieldList(schema.properties || {}, "", ctx));
}

function fieldList(props, prefix, ctx) {
  return h("ul", {}, Object.entries(props).map(([name, def]) => field(name, def || {}, prefix ? `${prefix}.${name}` : name, ctx)));
}

function field(name, def, path, ctx) {
  const tags = [];
  const k = ctx.pk.indexOf(path);
  if (k >= 0) tags.push(h("span", { class: "tag key" }, ctx.pk.length > 1 ? `primary key ${k + 1}` : "primary key"));
  if (ctx.ttlField === path) tags.push(h("span", { class: "tag key" }, "ttl"));
  if (ctx.required.has(name)) tags.push(h("span", { class: "tag" }, "required"));
  for (const [key, v] of Object.entries(def)) {
    if (structural.has(key)) continue;
    tags.push(h("span", { class: "tag" }, v === true ? key : `${key}: ${typeof v === "string" ? v : JSON.stringify(v)}`));
  }
  const li = h("li", { "data-test": "schema-field", "data-field": path },
    h("span", { class: "name" }, name), h("span", { class: "type" }, typeOf(def)), tags,
    def.description ? h("div", { class: "muted" }, def.description) : null);
  const inner = { ...ctx, required: new Set(def.required || []) };
  if (def.properties && Object.keys(def.properties).length) li.append(fieldList(def.properties, path, inner));
  const items = def.items;
  if (items && items.properties && Object.keys(items.properties).length) {
    li.append(fieldList(items.properties, `${path}[]`, { ...ctx, required: new Set(items.required || []) }));
  }
  return li;
}

// typeOf names a field's type: "string (date-time)", "array of integer".
function typeOf(def) {
  let t = def.type;
  if (Array.isArray(t)) t = t.filter((x) => x !== "null").join("|") + " or null";
  if (!t) return "any";
  let s = t;
  if (def.format) s += ` (${def.format})`;
  if (t === "array" || t === "array or null") {
    s += def.items ? ` of ${typeOf(def.items)}` : "";
  }
  return s;
}

// editor sends the textarea's schema; once saved, the tree shows the
// schema as the server now describes it.
function editor(db, coll, branch, schema, tree) {
  const text = h("textarea", { class: "tall", spellcheck: "false", "data-test": "schema-editor" });
  text.value = stringify(schema, 2);
  const out = h("div", { "data-test": "schema-result" });
  const save = h("button", { type: "submit", "data-test": "schema-save" }, "Save (createOrUpdate)");
  const form = h("form", { onsubmit: async (ev) => {
    ev.preventDefault();
    out.replaceChildren();
    let s;
    try {
      s = parseJSON(text.value);
    } catch (err) {
      out.append(errorBox(new Error("The schema is not JSON: " + err.message)));
      return;
    }
    save.disabled = true;
    try {
      const r = await api("POST", paths.collection(db, coll) + "/createOrUpdate", withBranch({ schema: s }, branch));
      out.append(notice(r.message || "saved"));
      const d = await api("POST", paths.collection(db, coll) + "/describe", withBranch({}, branch));
      tree.replaceChildren(schemaTree(d.schema || {}));
      text.value = stringify(d.schema || {}, 2);
    } catch (err) {
      out.append(errorBox(err));
    } finally {
      save.disabled = false;
    }
  } }, text, h("div", { class: "row" }, save,
    h("span", { class: "muted" }, "Adding fields is allowed; the server refuses changing the key, a type, or removing a field.")), out);
  return form;
}

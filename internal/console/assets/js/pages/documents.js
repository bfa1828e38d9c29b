// pages/documents.js: a collection's documents as a table, with the read's
// filter (the API's filter language, as JSON), sort, projection and pages,
// all in the address: /console/db/:db/c/:coll/docs?filter=…&sort=…&fields=…&page=…
// so that any view of the documents can be bookmarked and shared. Also
// explain of the current read, and inserting documents.
//
// page is the position: the resume token of the last document of the
// previous page (the read's options.offset), or, when the read is sorted
// (the API takes no offset with a sort), the number of documents to skip.
import { h, page, ready, errorBox, fieldError, notice, link, go, compact, jsonView, formatCount } from "../dom.js";
import { api, stream, paths, withBranch, parseJSON, stringify } from "../api.js";
import { hrefs, crumbs, collectionTabs } from "../links.js";

const DEFAULT_LIMIT = 50;

// parseSort reads the sort box: JSON as the API takes it
// ([{"age":"$desc"}]), or "-age, name" (a leading - for descending).
export function parseSort(text) {
  const s = (text || "").trim();
  if (!s) return undefined;
  if (s.startsWith("[") || s.startsWith("{")) {
    const v = parseJSON(s);
    return Array.isArray(v) ? v : [v];
  }
  return s.split(",").map((x) => x.trim()).filter(Boolean).map((x) => x.startsWith("-") ? { [x.slice(1)]: "$desc" } : { [x.replace(/^\+/, "")]: "$asc" });
}

// parseFields reads the projection box: JSON ({"name":1}), or "name, age"
// to keep those fields, "-tags" to leave that one out.
export function parseFields(text) {
  const s = (text || "").trim();
  if (!s) return undefined;
  if (s.startsWith("{")) return parseJSON(s);
  const out = {};
  for (const x of s.split(",").map((y) => y.trim()).filter(Boolean)) {
    if (x.startsWith("-")) out[x.slice(1)] = 0;
    else out[x] = 1;
  }
  return out;
}

// keyOf is a document's primary key as an object, or null if the document
// (projected) lacks part of it.
export function keyOf(doc, pk) {
  const key = {};
  for (const path of pk) {
    let v = doc;
    for (const seg of path.split(".")) v = v && typeof v === "object" ? v[seg] : undefined;
    if (v === undefined) return null;
    key[path] = v;
  }
  return key;
}

export async function render(view, params, query, { signal }) {
  const { db, coll } = params;
  const branch = query.get("branch") || "";
  const root = page("documents", crumbs(params, query, "documents"), h("h1", {}, coll), collectionTabs(params, query, "documents"));
  view.append(root);

  const state = {
    filter: query.get("filter") || "",
    sort: query.get("sort") || "",
    fields: query.get("fields") || "",
    page: query.get("page") || "",
    limit: clampLimit(query.get("limit")),
  };
  // here is the address of this view with some parameters changed.
  const here = (changes) => hrefs.documents(db, coll, branch, {
    filter: state.filter, sort: state.sort, fields: state.fields, page: state.page,
    limit: state.limit === DEFAULT_LIMIT ? "" : String(state.limit), ...changes,
  });

  const messages = h("div");
  const explainOut = h("div", { "data-test": "explain-result" });
  root.append(queryForm(state, here, runExplain), messages, explainOut);

  let desc;
  try {
    desc = await api("POST", paths.collection(db, coll) + "/describe", withBranch({}, branch), { signal });
  } catch (err) {
    root.append(errorBox(err));
    ready(root);
    return;
  }
  const schema = desc.schema || {};
  const pk = schema.primary_key || ["id"];

  // The read's body, from the address; an error in it is the user's.
  let body;
  try {
    body = readBody(state, branch, pk);
  } catch (err) {
    root.append(errorBox(err));
    ready(root);
    return;
  }

  const countOut = h("p", { class: "muted", "data-test": "count" });
  const tableBox = h("div");
  const pager = h("nav", { class: "pager", "data-test": "pager" });
  root.append(countOut, tableBox, pager, insertForm(db, coll, branch, pk, load));
  await load();
  ready(root);

  // load reads the page and fills the table, the pager and the count.
  async function load() {
    tableBox.replaceChildren(h("p", { class: "loading" }, "Reading…"));
    pager.replaceChildren();
    const docs = [];
    // A messages collection has no count (the API refuses it); its
    // messages are read as documents are.
    const countCall = schema.collection_type === "messages" ? Promise.resolve() :
      api("POST", paths.documents(db, coll) + "/count", withBranch({ filter: body.filter || {} }, branch), { signal })
        .then((r) => { countOut.textContent = `${formatCount(r.count)} document${Number(r.count) === 1 ? "" : "s"} match.`; },
          (err) => { if (err.name !== "AbortError") countOut.replaceChildren(errorBox(err)); });
    try {
      await stream(paths.documents(db, coll) + "/read", body, (line) => {
        if (line && line.result) docs.push(line.result);
      }, { signal });
    } catch (err) {
      if (err.name === "AbortError") throw err;
      tableBox.replaceChildren(errorBox(err));
      await countCall;
      return;
    }
    await countCall;
    const more = docs.length > state.limit;
    const shown = docs.slice(0, state.limit);
    tableBox.replaceChildren(table(shown.map((r) => r.data), schema, pk, state, here, db, coll, branch));
    pagerLinks(pager, state, here, shown, more);
  }

  async function runExplain() {
    explainOut.replaceChildren();
    try {
      const plan = await api("POST", paths.documents(db, coll) + "/explain", body, { signal });
      explainOut.append(h("div", { class: "panel" }, h("strong", {}, "Plan of this read"), jsonView(plan, { open: 3 })));
    } catch (err) {
      if (err.name !== "AbortError") explainOut.append(errorBox(err));
    }
  }
}

function clampLimit(s) {
  const n = parseInt(s || "", 10);
  return Number.isFinite(n) && n > 0 ? Math.min(n, 1000) : DEFAULT_LIMIT;
}

// readBody is the read's request: one more document than shown, to know
// whether there is a next page. A projection that keeps some fields keeps
// the primary key too, which each row's link needs.
function readBody(state, branch, pk) {
  const body = {};
  if (state.filter.trim()) {
    try { body.filter = parseJSON(state.filter); } catch (err) { throw new Error("The filter is not JSON: " + err.message); }
  } else body.filter = {};
  try { body.sort = parseSort(state.sort); } catch (err) { throw new Error("The sort is not JSON: " + err.message); }
  try { body.fields = parseFields(state.fields); } catch (err) { throw new Error("The fields are not JSON: " + err.message); }
  if (!body.sort) delete body.sort;
  if (!body.fields) delete body.fields;
  else if (Object.values(body.fields).some((v) => v === 1 || v === true)) {
    for (const p of pk) if (!(p in body.fields)) body.fields[p] = 1;
  }
  const options = { limit: state.limit + 1 };
  if (state.page) {
    if (body.sort) {
      const skip = parseInt(state.page, 10);
      if (!(skip >= 0)) throw new Error(`page ${state.page} is not a number of documents to skip, as a sorted read's page is`);
      options.skip = skip;
    } else options.offset = state.page;
  }
  body.options = options;
  return withBranch(body, branch);
}

function queryForm(state, here, runExplain) {
  const filter = h("textarea", { rows: 3, class: "short", spellcheck: "false", placeholder: '{"age": {"$gt": 30}}', "data-test": "filter" });
  filter.value = state.filter;
  const sort = h("input", { type: "text", placeholder: "-age, name", value: state.sort, "data-test": "sort" });
  const fields = h("input", { type: "text", placeholder: "name, age   or   -tags", value: state.fields, "data-test": "fields" });
  const limit = h("input", { type: "number", min: 1, max: 1000, value: String(state.limit), "data-test": "limit" });
  const form = h("form", { class: "panel", "data-test": "query-form", onsubmit: (ev) => {
    ev.preventDefault();
    // A new query starts at its first page.
    const href = here({ filter: filter.value.trim(), sort: sort.value.trim(), fields: fields.value.trim(), page: "",
      limit: clampLimit(limit.value) === DEFAULT_LIMIT ? "" : String(clampLimit(limit.value)) });
    go(href);
  } },
  h("label", {}, "Filter (JSON, the API's filter language)"), filter,
  h("div", { class: "row" },
    h("label", {}, "Sort ", sort), h("label", {}, "Fields ", fields), h("label", {}, "Per page ", limit),
    h("button", { type: "submit", "data-test": "apply" }, "Apply"),
    h("button", { type: "button", class: "plain", "data-test": "explain", onclick: runExplain }, "Explain")),
  filterHelp());
  return form;
}

// filterHelp: examples of the filter language (docs/api.md, Filters).
function filterHelp() {
  const ex = [
    ['{"name": "Ann"}', "equality: name is Ann (case-sensitive)"],
    ['{"age": {"$gt": 30}}', "greater than; also $gte, $lt, $lte, $ne"],
    ['{"age": {"$gte": 18, "$lt": 65}}', "a range: both bounds on one field"],
    ['{"$and": [{"age": {"$gt": 30}}, {"city": "Paris"}]}', "both conditions (two fields in one object mean the same)"],
    ['{"$or": [{"status": "new"}, {"priority": {"$gte": 3}}]}', "either condition"],
    ['{"address.city": "Paris"}', "a nested field, by its dot path"],
    ['{"tags": "red"}', "an array field holding the value"],
    ['{"kind": {"$in": ["a", "b"]}}', "one of several values; $nin for none of them"],
    ['{"email": {"$exists": true}}', "the field is present"],
    ['{"name": {"$regex": "^an"}}', "a regular expression; $contains for a substring"],
  ];
  return h("details", { class: "help", "data-test": "filter-help" }, h("summary", {}, "Filter help"),
    h("dl", {}, ex.map(([f, what]) => [h("dt", {}, f), h("dd", {}, what)])),
    h("p", { class: "muted" }, "Sort: a field, or -field for descending, several separated by commas (or the API's JSON: [{\"age\":\"$desc\"}]). Fields: the ones to show (name, age) or to leave out (-tags). A sorted read pages by skipping; an unsorted one by the resume token of the last document shown."));
}

// columns: the primary key, then the schema's top-level fields in order,
// then any other member the documents hold; with a projection that keeps
// fields, those only.
function columnsOf(docs, schema, pk, fields) {
  const cols = [];
  const add = (c) => { if (!cols.includes(c)) cols.push(c); };
  pk.filter((p) => !p.includes(".")).forEach(add);
  Object.keys(schema.properties || {}).forEach(add);
  docs.forEach((d) => Object.keys(d || {}).forEach(add));
  if (fields && Object.values(fields).some((v) => v === 1 || v === true)) {
    const kept = new Set(Object.keys(fields).map((f) => f.split(".")[0]));
    return cols.filter((c) => kept.has(c));
  }
  if (fields) {
    const dropped = new Set(Object.entries(fields).filter(([k, v]) => !v && !k.includes(".")).map(([k]) => k));
    return cols.filter((c) => !dropped.has(c));
  }
  return cols;
}

function table(docs, schema, pk, state, here, db, coll, branch) {
  if (docs.length === 0) return h("p", { class: "muted", "data-test": "empty" }, state.page ? "No more documents." : "No document matches.");
  let fields;
  try { fields = parseFields(state.fields); } catch (_) { fields = undefined; }
  const cols = columnsOf(docs, schema, pk, fields);
  const sorted = parseSortSafe(state.sort);
  return h("table", { class: "grid", "data-test": "doc-table" },
    h("thead", {}, h("tr", {}, h("th", {}, ""), cols.map((c) => {
      const dir = sorted.length === 1 && sorted[0][c];
      const next = dir === "$asc" ? `-${c}` : c;
      return h("th", {}, link(here({ sort: next, page: "" }), c + (dir === "$asc" ? " ▲" : dir === "$desc" ? " ▼" : ""), { "data-test": `sort-${c}`, title: "sort by " + c }));
    }))),
    h("tbody", {}, docs.map((d) => {
      const key = keyOf(d, pk);
      return h("tr", { "data-test": "doc-row", "data-key": key ? stringify(key) : "" },
        h("td", {}, key ? link(hrefs.document(db, coll, key, branch), "open", { "data-test": "doc-link" }) : h("span", { class: "muted", title: "the projection leaves out the primary key" }, "—")),
        cols.map((c) => {
          const v = d[c];
          const full = v === undefined ? "" : typeof v === "string" ? v : stringify(v);
          return h("td", { class: "cell", title: full.length > 80 ? full : null }, compact(v));
        }));
    })));
}

function parseSortSafe(s) {
  try { return parseSort(s) || []; } catch (_) { return []; }
}

// pagerLinks: the first page, the previous one (sorted reads: skip back),
// and the next, whose address carries the position.
function pagerLinks(pager, state, here, shown, more) {
  const sorted = parseSortSafe(state.sort).length > 0;
  if (state.page) pager.append(link(here({ page: "" }), "« First page", { "data-test": "first-page" }));
  if (sorted && state.page) {
    const prev = Math.max(0, (parseInt(state.page, 10) || 0) - state.limit);
    pager.append(link(here({ page: prev ? String(prev) : "" }), "‹ Previous page", { "data-test": "prev-page" }));
  }
  if (more) {
    const next = sorted ? String((parseInt(state.page, 10) || 0) + state.limit) : shown[shown.length - 1].resume_token;
    pager.append(link(here({ page: next }), "Next page ›", { "data-test": "next-page" }));
  }
  const from = sorted ? (parseInt(state.page, 10) || 0) : null;
  pager.append(h("span", { class: "muted" }, from !== null && shown.length ? `documents ${from + 1} to ${from + shown.length}` : `${shown.length} shown`));
}

// insertForm inserts one document or an array of them.
function insertForm(db, coll, branch, pk, reload) {
  const text = h("textarea", { rows: 6, spellcheck: "false", placeholder: '{"id": 1, "name": "Ann"}', "data-test": "insert-editor" });
  const out = h("div", { "data-test": "insert-result" });
  const submit = h("button", { type: "submit", "data-test": "insert-submit" }, "Insert");
  return h("div", {}, h("h2", {}, "Insert"),
    h("form", { onsubmit: async (ev) => {
      ev.preventDefault();
      out.replaceChildren();
      let v;
      try {
        v = parseJSON(text.value);
      } catch (err) {
        out.append(errorBox(new Error("The document is not JSON: " + err.message)));
        return;
      }
      submit.disabled = true;
      try {
        const r = await api("POST", paths.documents(db, coll) + "/insert", withBranch({ documents: Array.isArray(v) ? v : [v] }, branch));
        const keys = r.keys || [];
        out.append(notice(`Inserted ${keys.length} document${keys.length === 1 ? "" : "s"}.`),
          h("p", {}, keys.map((k, i) => [i ? ", " : "", link(hrefs.document(db, coll, k, branch), stringify(k), { "data-test": "inserted-link" })])));
        text.value = "";
        await reload();
      } catch (err) {
        // A validation error beside the editor, naming its field.
        out.append(err.field !== undefined ? fieldError(err.field || "(document)", `${err.code}: ${err.message}`) : errorBox(err));
      } finally {
        submit.disabled = false;
      }
    } }, text, h("div", { class: "row" }, submit, h("span", { class: "muted" }, "One document, or an array of them."))),
    out);
}

// pages/search.js: /console/db/:db/c/:coll/search, a collection's
// full-text search (the search call), its facets as counts and stats, its
// pages, and "more like this": the documents whose vector is nearest a
// given document's.
//
// The address holds the whole query, so that a search can be bookmarked
// and shared; the form only writes a new address:
//   q=words  in=field,field (search_fields)  filter=JSON  facets=field,field
//   sort=field or -field (descending)  page=N (from 1)  size=N (page size)
//   like=<a document's primary key as JSON>  vector=<vector field>
//   branch=b
// A search by vector takes no words and no sort (the API refuses them:
// its hits come nearest first), so the form leaves them out then.
//
// data-test hooks (root: data-page="search"):
//   search-form, search-q, search-in (a checkbox per string field, value = the
//   field), search-filter, facet-choice (a checkbox per field facets count,
//   value = the field), search-sort (a select; "" is relevance), search-sort-desc
//   (checkbox), search-size, search-submit;
//   like-form, like-key (the document's key, JSON), like-field (a select of the
//   vector fields), like-submit, like-clear (back to a search by words),
//   like-source (the document searched by);
//   search-found (found, page N of M), hits (the table), hit (a row; data-key is
//   the document's key as JSON), hit-open (link to the document), hit-distance
//   (vector searches), more-like-this (link, in each row when the collection
//   has a vector field);
//   facets, facet (data-field = the field), facet-value (a row; data-value),
//   facet-count, facet-filter (link: the search narrowed to that value),
//   facet-stats (data-stat = count, min, max, avg, sum on each entry);
//   page-prev, page-next; error, field-error (an unreadable filter or key).

import { h, link, go, jsonView, compact, errorBox, fieldError, page, ready, formatCount } from "../dom.js";
import { api, stream, paths, withBranch, parseJSON, stringify } from "../api.js";
import { keyOf } from "./documents.js";
import { hrefs, crumbs, collectionTabs } from "../links.js";

const DEFAULT_SIZE = 20;
// LIKE_NEIGHBOURS is how many nearest documents "more like this" pages over.
const LIKE_NEIGHBOURS = 100;

export async function render(view, params, query, { signal }) {
  const { db, coll } = params;
  const branch = query.get("branch") || "";
  const state = readAddress(query);
  const root = page("search", crumbs(params, query, "search"), h("h1", {}, `Search ${coll}`), collectionTabs(params, query, "search"));
  view.append(root);

  let fields;
  try {
    const desc = await api("POST", `${paths.collection(db, coll)}/describe`, withBranch({}, branch), { signal });
    fields = schemaFields(desc.schema);
    fields.primaryKey = (desc.schema && desc.schema.primary_key) || [];
    fields.columns = Object.keys((desc.schema && desc.schema.properties) || {});
  } catch (err) {
    if (err.name === "AbortError") throw err;
    root.append(errorBox(err));
    ready(root);
    return;
  }

  root.append(searchForm(db, coll, branch, state, fields));
  if (fields.vectors.length > 0) root.append(likeForm(db, coll, branch, state, fields));
  const results = h("div", { class: "search-results" });
  root.append(results);
  await runSearch(results, db, coll, branch, state, fields, signal);
  ready(root);
}

// readAddress is the search the address asks for.
function readAddress(query) {
  const list = (name) => (query.get(name) || "").split(",").map((s) => s.trim()).filter((s) => s !== "");
  const sort = query.get("sort") || "";
  return {
    q: query.get("q") || "",
    in: list("in"),
    filter: query.get("filter") || "",
    facets: list("facets"),
    sortField: sort.replace(/^-/, ""),
    sortDesc: sort.startsWith("-"),
    page: Math.max(1, parseInt(query.get("page") || "1", 10) || 1),
    size: Math.max(1, parseInt(query.get("size") || String(DEFAULT_SIZE), 10) || DEFAULT_SIZE),
    like: query.get("like") || "",
    vector: query.get("vector") || "",
  };
}

// address writes a search back as the page's query parameters.
function address(s) {
  return {
    q: s.q,
    in: s.in.join(","),
    filter: s.filter,
    facets: s.facets.join(","),
    sort: s.sortField ? (s.sortDesc ? "-" : "") + s.sortField : "",
    page: s.page > 1 ? String(s.page) : "",
    size: s.size !== DEFAULT_SIZE ? String(s.size) : "",
    like: s.like,
    vector: s.like ? s.vector : "",
  };
}

// schemaFields sorts a schema's fields (nested ones by dot path) into
// what the search takes of each kind: text fields for q, fields facets
// count, sortable fields and vector fields.
export function schemaFields(schema) {
  const out = { text: [], facet: [], sort: [], vectors: [], types: {} };
  const walk = (props, prefix) => {
    for (const [name, f] of Object.entries(props || {})) {
      const path = prefix + name;
      const t = f && f.type;
      if (t === "object") {
        walk(f.properties, path + ".");
        continue;
      }
      if (t === "array") {
        if (f.format === "vector") {
          out.vectors.push(path);
          continue;
        }
        const it = f.items && f.items.type;
        if (it === "string" && !f.items.format) out.text.push(path);
        if (it === "string" || it === "integer" || it === "number") {
          out.facet.push(path);
          out.types[path] = it;
        }
        continue;
      }
      out.types[path] = t;
      if (t === "string" && f.format !== "byte") {
        if (!f.format) out.text.push(path);
        out.sort.push(path);
        if (!f.format) out.facet.push(path);
      } else if (t === "integer" || t === "number") {
        out.facet.push(path);
        out.sort.push(path);
      } else if (t === "boolean") {
        out.sort.push(path);
      }
    }
  };
  walk(schema && schema.properties, "");
  return out;
}

function searchForm(db, coll, branch, s, fields) {
  const byVector = Boolean(s.like);
  const q = h("input", { type: "text", class: "wide", name: "q", value: s.q, placeholder: "words and \"phrases\" (empty: every document)", "data-test": "search-q", disabled: byVector });
  const inBoxes = fields.text.map((f) => checkbox("search-in", f, s.in.includes(f)));
  const facetBoxes = fields.facet.map((f) => checkbox("facet-choice", f, s.facets.includes(f)));
  const filter = h("textarea", { name: "filter", class: "short", placeholder: "{\"price\": {\"$lt\": 100}}", "data-test": "search-filter" });
  filter.value = s.filter;
  const filterSlot = h("div", {});
  const sort = h("select", { name: "sort", "data-test": "search-sort", disabled: byVector },
    h("option", { value: "" }, byVector ? "nearest first" : "relevance"),
    fields.sort.map((f) => h("option", { value: f, selected: f === s.sortField }, f)));
  const desc = h("input", { type: "checkbox", name: "desc", checked: s.sortDesc, "data-test": "search-sort-desc", disabled: byVector });
  const size = h("input", { type: "number", name: "size", min: "1", max: "1000", value: String(s.size), "data-test": "search-size" });

  const submit = (ev) => {
    ev.preventDefault();
    filterSlot.replaceChildren();
    const f = filter.value.trim();
    if (f !== "") {
      try {
        parseJSON(f);
      } catch (err) {
        filterSlot.append(fieldError("filter", `not JSON: ${err.message}`));
        return;
      }
    }
    const next = {
      ...s,
      q: q.value.trim(),
      in: checked(inBoxes),
      filter: f,
      facets: checked(facetBoxes),
      sortField: sort.value,
      sortDesc: desc.checked,
      page: 1,
      size: Math.max(1, parseInt(size.value, 10) || DEFAULT_SIZE),
    };
    go(hrefs.search(db, coll, branch, address(next)));
  };

  return h("form", { class: "panel search-form", "data-test": "search-form", onsubmit: submit },
    h("div", { class: "row" }, q, h("button", { type: "submit", "data-test": "search-submit" }, "Search")),
    fields.text.length > 0 && h("div", { class: "row" }, h("span", { class: "muted" }, "Search in:"), inBoxes,
      h("span", { class: "muted" }, "(none ticked: every string field)")),
    h("label", { class: "block" }, "Filter (JSON, the read filter's language)", filter),
    filterSlot,
    fields.facet.length > 0 && h("div", { class: "row" }, h("span", { class: "muted" }, "Facets:"), facetBoxes),
    h("div", { class: "row" },
      h("label", {}, "Sort by ", sort), h("label", {}, desc, " descending"),
      h("label", {}, "Hits per page ", size)));
}

// likeForm asks for a document (by its key) whose vector the search
// goes by: "more like this".
function likeForm(db, coll, branch, s, fields) {
  const key = h("input", { type: "text", class: "wide", name: "like", value: s.like, placeholder: `the document's key, e.g. {"${fields.primaryKey[0] || "id"}": 1}`, "data-test": "like-key" });
  const field = h("select", { name: "vector", "data-test": "like-field" },
    fields.vectors.map((f) => h("option", { value: f, selected: f === s.vector }, f)));
  const slot = h("div", {});
  const submit = (ev) => {
    ev.preventDefault();
    slot.replaceChildren();
    const k = key.value.trim();
    if (k !== "") {
      try {
        parseJSON(k);
      } catch (err) {
        slot.append(fieldError("like", `not JSON: ${err.message}`));
        return;
      }
    }
    go(hrefs.search(db, coll, branch, address({ ...s, like: k, vector: field.value, q: "", sortField: "", page: 1 })));
  };
  const clearLike = s.like ? link(hrefs.search(db, coll, branch, address({ ...s, like: "", page: 1 })), "back to words", { "data-test": "like-clear" }) : null;
  return h("form", { class: "panel", "data-test": "like-form", onsubmit: submit },
    h("div", { class: "row" }, h("strong", {}, "More like this:"), key, h("label", {}, "by ", field),
      h("button", { type: "submit", "data-test": "like-submit" }, "Find similar"), clearLike),
    h("div", { class: "muted" }, "The documents whose vector is nearest this document's, nearest first (the filter and facets apply; words and sort do not)."),
    slot);
}

// signal is the page's: leaving the page cancels the read and the search.
async function runSearch(out, db, coll, branch, s, fields, signal) {
  const body = withBranch({ page: s.page, page_size: s.size }, branch);
  try {
    if (s.filter) body.filter = parseJSON(s.filter);
  } catch (err) {
    out.append(fieldError("filter", `not JSON: ${err.message}`));
    return;
  }
  if (s.facets.length > 0) body.facet = Object.fromEntries(s.facets.map((f) => [f, { size: 10 }]));
  let source = null;
  try {
    if (s.like) {
      if (fields.vectors.length === 0) {
        out.append(errorBox(new Error("this collection has no vector field to search by")));
        return;
      }
      if (!fields.vectors.includes(s.vector)) s = { ...s, vector: fields.vectors[0] };
      source = await likeSource(db, coll, branch, s, signal);
      if (!source) return showMissing(out, s);
      const vector = getPath(source, s.vector);
      if (!Array.isArray(vector)) {
        out.append(errorBox(new Error(`the document ${s.like} has no vector in '${s.vector}'`)));
        return;
      }
      // top_k: the neighbours the pages go over (without it, the API takes
      // as many as this page reaches, so there would be no next page).
      body.vector = { [s.vector]: vector, top_k: Math.min(10000, Math.max(LIKE_NEIGHBOURS, s.page * s.size)) };
      out.append(h("div", { class: "panel", "data-test": "like-source" }, h("div", { class: "muted" }, `Nearest to ${s.like} by ${s.vector}:`), jsonView(source, { open: 1 })));
    } else {
      if (s.q) body.q = s.q;
      if (s.in.length > 0) body.search_fields = s.in;
      if (s.sortField) body.sort = [{ [s.sortField]: s.sortDesc ? "$desc" : "$asc" }];
    }
    let result = null;
    // With a page asked for, the search answers one line: that page.
    await stream(`${paths.documents(db, coll)}/search`, body, (line) => {
      if (line && line.result) result = line.result;
    }, { signal });
    showResult(out, db, coll, branch, s, fields, result || { hits: [], facets: {}, meta: {} });
  } catch (err) {
    if (err.name === "AbortError") throw err;
    out.append(errorBox(err));
  }
}

function showMissing(out, s) {
  out.append(errorBox(new Error(`no document has the key ${s.like}`)));
}

// likeSource reads the document the "more like this" search starts from:
// its key is the filter.
async function likeSource(db, coll, branch, s, signal) {
  let key;
  try {
    key = parseJSON(s.like);
  } catch (err) {
    throw new Error(`the key is not JSON: ${err.message}`);
  }
  let doc = null;
  await stream(`${paths.documents(db, coll)}/read`, withBranch({ filter: key, options: { limit: 1 } }, branch), (line) => {
    if (line && line.result && line.result.data) doc = line.result.data;
  }, { signal });
  return doc;
}

function showResult(out, db, coll, branch, s, fields, r) {
  const meta = r.meta || {};
  const current = (meta.page && meta.page.current) || s.page;
  const pages = meta.total_pages || 0;
  out.append(h("p", { class: "muted", "data-test": "search-found" },
    `${formatCount(meta.found || 0)} found`, pages > 0 ? ` · page ${current} of ${formatCount(pages)}` : ""));
  const body = h("div", { class: "search-body" });
  const facets = facetsView(db, coll, branch, s, fields, r.facets || {});
  if (facets) body.append(facets);
  body.append(hitsView(db, coll, branch, s, fields, r.hits || []));
  out.append(body, pager(db, coll, branch, s, current, pages));
}

// hitsView is a table of the hits: the key (a link to the document), the
// distance of a vector search, then the top-level fields in one short line
// each (a vector as its size), as the documents page shows them.
function hitsView(db, coll, branch, s, fields, hits) {
  if (hits.length === 0) return h("p", { class: "muted", "data-test": "hits" }, "No hits.");
  const byVector = Boolean(s.like);
  const columns = fields.columns.filter((c) => !fields.primaryKey.includes(c));
  const rows = hits.map((hit) => {
    const data = hit.data || {};
    const key = fields.primaryKey.length > 0 ? keyOf(data, fields.primaryKey) : null;
    const match = (hit.metadata && hit.metadata.match) || {};
    return h("tr", { "data-test": "hit", "data-key": key ? stringify(key) : "" },
      h("td", { class: "cell" }, key ? link(hrefs.document(db, coll, key, branch), keyText(key), { "data-test": "hit-open" }) : ""),
      byVector && h("td", { class: "num", "data-test": "hit-distance" }, match.vector_distance === undefined ? "" : formatStat(match.vector_distance)),
      columns.map((c) => h("td", { class: "cell", "data-field": c, title: data[c] === undefined ? null : stringify(data[c]) },
        fields.vectors.includes(c) && Array.isArray(data[c]) ? h("span", { class: "muted" }, `vector of ${data[c].length}`) : compact(data[c]))),
      fields.vectors.length > 0 && h("td", {}, key ? link(hrefs.search(db, coll, branch, address({ ...s, like: stringify(key), vector: s.vector || fields.vectors[0], q: "", sortField: "", page: 1 })), "more like this", { "data-test": "more-like-this" }) : ""));
  });
  return h("table", { class: "grid hits", "data-test": "hits" },
    h("thead", {}, h("tr", {}, h("th", {}, fields.primaryKey.join(", ") || "key"), byVector && h("th", { class: "num" }, "distance"),
      columns.map((c) => h("th", {}, c)), fields.vectors.length > 0 && h("th", {}, ""))),
    h("tbody", {}, rows));
}

// facetsView shows each facet's most frequent values with their counts
// (each a link narrowing the search to it), and its stats as the API
// answers them (count always; min, max, avg and sum for numbers).
function facetsView(db, coll, branch, s, fields, facets) {
  const names = Object.keys(facets);
  if (names.length === 0) return null;
  return h("aside", { class: "facets", "data-test": "facets" }, names.map((name) => {
    const f = facets[name] || {};
    const counts = f.counts || [];
    const stats = f.stats || {};
    return h("div", { class: "facet panel", "data-test": "facet", "data-field": name },
      h("h3", {}, name),
      counts.length === 0 ? h("p", { class: "muted" }, "no values") :
        h("table", { class: "grid" }, h("tbody", {}, counts.map((c) =>
          h("tr", { "data-test": "facet-value", "data-value": c.value },
            h("td", { class: "cell" }, link(hrefs.search(db, coll, branch, address(narrowed(s, name, c.value, fields))), c.value, { "data-test": "facet-filter" })),
            h("td", { class: "num", "data-test": "facet-count" }, formatCount(c.count)))))),
      h("dl", { class: "stats", "data-test": "facet-stats" },
        ["count", "min", "max", "avg", "sum"].filter((k) => stats[k] !== undefined && stats[k] !== null).map((k) =>
          h("div", { "data-stat": k }, h("dt", {}, k), h("dd", {}, formatStat(stats[k]))))));
  }));
}

// narrowed is the search with the filter narrowed to field = value (a
// facet's value is a string: a number field's is turned back to a number).
function narrowed(s, field, value, fields) {
  let filter = {};
  try {
    filter = s.filter ? parseJSON(s.filter) : {};
  } catch (_) { /* the form showed it; start afresh */ }
  const t = fields.types[field];
  const v = t === "integer" || t === "number" ? Number(value) : value;
  const next = filter && typeof filter === "object" && !Array.isArray(filter) && Object.keys(filter).length > 0
    ? { $and: [filter, { [field]: v }] } : { [field]: v };
  return { ...s, filter: stringify(next), page: 1 };
}

function formatStat(v) {
  if (typeof v === "number" && !Number.isInteger(v)) return String(Math.round(v * 1e6) / 1e6);
  return String(v);
}

function pager(db, coll, branch, s, current, pages) {
  const to = (p) => hrefs.search(db, coll, branch, address({ ...s, page: p }));
  return h("div", { class: "pager" },
    current > 1 ? link(to(current - 1), "← previous", { "data-test": "page-prev" }) : null,
    current < pages ? link(to(current + 1), "next →", { "data-test": "page-next" }) : null);
}


function keyText(key) {
  const vals = Object.values(key);
  return vals.length === 1 && typeof vals[0] !== "object" ? String(vals[0]) : stringify(key);
}

function getPath(obj, path) {
  let v = obj;
  for (const part of path.split(".")) {
    if (v === null || typeof v !== "object") return undefined;
    v = v[part];
  }
  return v;
}

function checkbox(test, value, on) {
  return h("label", { class: "choice" }, h("input", { type: "checkbox", value, checked: on, "data-test": test }), " " + value);
}

function checked(labels) {
  return labels.map((l) => l.querySelector("input")).filter((i) => i.checked).map((i) => i.value);
}

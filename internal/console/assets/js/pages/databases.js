// pages/databases.js: the first page. Every database (project) the caller
// sees, with its collections' document counts and sizes, each linked; and
// a form to create one.
import { h, page, ready, errorBox, link, go, formatBytes, formatCount } from "../dom.js";
import { api, paths } from "../api.js";
import { hrefs } from "../links.js";

export async function render(view, params, query, { signal }) {
  const root = page("databases", h("h1", {}, "Databases"));
  view.append(root);
  let projects;
  try {
    projects = ((await api("GET", paths.projects(), undefined, { signal })) || {}).projects || [];
  } catch (err) {
    root.append(errorBox(err));
    ready(root);
    return;
  }
  if (projects.length === 0) {
    root.append(h("p", { class: "muted", "data-test": "empty" }, "No database yet: create one below."));
  }
  const body = h("tbody");
  if (projects.length > 0) {
    root.append(h("table", { class: "grid", "data-test": "db-table" },
      h("thead", {}, h("tr", {},
        h("th", {}, "Database / collection"), h("th", { class: "num" }, "Branches"), h("th", { class: "num" }, "Documents"),
        h("th", { class: "num" }, "Data"), h("th", { class: "num" }, "Indexes"), h("th", {}, ""))),
      body));
  }
  // Each database's describe, and each collection's count, in parallel.
  await Promise.all(projects.map((p) => addDatabase(body, p.project, signal)));
  root.append(createForm());
  ready(root);
}

async function addDatabase(body, db, signal) {
  const total = h("td", { class: "num", "data-test": "db-count" }, "…");
  const row = h("tr", { class: "db", "data-test": "db-row", "data-db": db },
    h("td", {}, h("strong", {}, link(hrefs.database(db), db, { "data-test": "db-link" }))),
    h("td", { class: "num" }), total, h("td", { class: "num" }), h("td", { class: "num" }), h("td"));
  body.append(row);
  let d;
  try {
    d = await api("POST", paths.database(db) + "/describe", {}, { signal });
  } catch (err) {
    if (err.name === "AbortError") throw err;
    row.cells[5].append(errorBox(err));
    total.textContent = "";
    return;
  }
  const colls = (d.collections || []).slice().sort((a, b) => a.collection.localeCompare(b.collection));
  row.cells[1].textContent = String((d.branches || ["main"]).length);
  row.cells[3].textContent = formatBytes(d.sizes ? d.sizes.documents : d.size);
  row.cells[4].textContent = formatBytes(d.sizes ? d.sizes.indexes : undefined);
  row.cells[5].append(h("span", { class: "muted" }, `${colls.length} collection${colls.length === 1 ? "" : "s"}`));
  // The collections' rows follow their database's, in order.
  let after = row;
  const counts = colls.map((c) => {
    const messages = c.schema && c.schema.collection_type === "messages";
    const count = h("td", { class: "num", "data-test": "coll-count" }, messages ? "—" : "…");
    const sub = h("tr", { class: "sub", "data-test": "coll-row", "data-db": db, "data-coll": c.collection },
      h("td", {}, link(hrefs.collection(db, c.collection), c.collection, { "data-test": "coll-link" })),
      h("td"), count,
      h("td", { class: "num" }, formatBytes(c.sizes ? c.sizes.documents : c.size)),
      h("td", { class: "num" }, formatBytes(c.sizes ? c.sizes.indexes : undefined)),
      h("td", {}, messages ? link(hrefs.messages(db, c.collection), "messages", { "data-test": "docs-link" }) :
        link(hrefs.documents(db, c.collection), "documents", { "data-test": "docs-link" })));
    after.after(sub);
    after = sub;
    // A messages collection has no document count (the API refuses it).
    return messages ? null : countInto(count, db, c.collection, signal);
  });
  const ns = (await Promise.all(counts)).filter((n) => n !== null);
  const known = ns.filter((n) => typeof n === "number");
  // "+": a count failed, so the total is at least this.
  total.textContent = formatCount(known.reduce((a, b) => a + b, 0)) + (known.length === ns.length ? "" : "+");
}

// countInto shows a collection's document count (served from the
// collection's counter: cheap even for a large one); a failure shows "—",
// with the server's reason as its title.
async function countInto(cell, db, coll, signal) {
  try {
    const r = await api("POST", paths.documents(db, coll) + "/count", { filter: {} }, { signal });
    const n = Number(r.count);
    cell.textContent = formatCount(n);
    return n;
  } catch (err) {
    if (err.name === "AbortError") throw err;
    cell.textContent = "—";
    cell.setAttribute("title", `${err.code}: ${err.message}`);
    return undefined;
  }
}

function createForm() {
  const name = h("input", { type: "text", placeholder: "name", required: true, "data-test": "db-create-name" });
  const out = h("div");
  const form = h("form", { class: "inline", onsubmit: create },
    name, h("button", { type: "submit", "data-test": "db-create-submit" }, "Create database"));
  async function create(ev) {
    ev.preventDefault();
    out.replaceChildren();
    const db = name.value.trim();
    try {
      await api("POST", paths.project(db) + "/create");
      go(hrefs.database(db));
    } catch (err) {
      out.append(errorBox(err));
    }
  }
  return h("div", {}, h("h2", {}, "New database"), form, out);
}

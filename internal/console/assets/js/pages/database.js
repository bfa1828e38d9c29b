// pages/database.js: one database (project) on one branch (?branch=, main
// without): its branches (list, create, delete with confirmation) and the
// branch's collections (counts and sizes, create from a schema, drop with
// confirmation).
import { h, page, ready, errorBox, notice, link, go, confirmButton, formatBytes, formatCount } from "../dom.js";
import { api, paths, withBranch, parseJSON } from "../api.js";
import { hrefs, crumbs } from "../links.js";

export async function render(view, params, query, { signal }) {
  const { db } = params;
  const branch = query.get("branch") || "";
  const root = page("database", crumbs(params, query), h("h1", {}, db, branch ? h("span", { class: "muted" }, ` (branch ${branch})`) : null));
  view.append(root);
  const messages = h("div");
  root.append(messages);

  let d;
  try {
    d = await api("POST", paths.database(db) + "/describe", withBranch({}, branch), { signal });
  } catch (err) {
    root.append(errorBox(err));
    ready(root);
    return;
  }
  root.append(h("p", { class: "muted", "data-test": "db-sizes" },
    `Data ${formatBytes(d.sizes ? d.sizes.documents : d.size)}, indexes ${formatBytes(d.sizes ? d.sizes.indexes : 0)}` +
    (d.sizes && d.sizes.log !== undefined ? `, change log ${formatBytes(d.sizes.log)}` : "")));

  root.append(h("h2", {}, "Collections"));
  const colls = (d.collections || []).slice().sort((a, b) => a.collection.localeCompare(b.collection));
  if (colls.length === 0) {
    root.append(h("p", { class: "muted", "data-test": "empty" }, "No collection yet on this branch."));
  } else {
    const body = h("tbody");
    root.append(h("table", { class: "grid", "data-test": "coll-table" },
      h("thead", {}, h("tr", {}, h("th", {}, "Collection"), h("th", {}, "Type"), h("th", { class: "num" }, "Documents"),
        h("th", { class: "num" }, "Data"), h("th", { class: "num" }, "Indexes"), h("th", {}, ""))),
      body));
    await Promise.all(colls.map((c) => addCollection(body, db, branch, c, signal, messages)));
  }
  root.append(createCollectionForm(db, branch));

  root.append(h("h2", {}, "Branches"));
  root.append(branchesTable(db, branch, d.branches || ["main"], messages));
  root.append(createBranchForm(db));

  root.append(h("h2", {}, "Delete"));
  root.append(h("p", { class: "muted" }, branch ? `Deleting the database deletes every branch of it, not only ${branch}.` : "Deleting the database deletes its collections, documents and branches."),
    confirmButton("Delete database", `Delete database ${db} and all its branches?`, "db-delete", async () => {
      try {
        await api("DELETE", paths.project(db) + "/delete");
        go(hrefs.databases());
      } catch (err) {
        messages.replaceChildren(errorBox(err));
      }
    }));
  ready(root);
}

async function addCollection(body, db, branch, c, signal, messages) {
  const type = (c.schema && c.schema.collection_type) || "documents";
  const count = h("td", { class: "num", "data-test": "coll-count" }, "…");
  body.append(h("tr", { "data-test": "coll-row", "data-coll": c.collection },
    h("td", {}, link(hrefs.collection(db, c.collection, branch), c.collection, { "data-test": "coll-link" })),
    h("td", {}, type),
    count,
    h("td", { class: "num" }, formatBytes(c.sizes ? c.sizes.documents : c.size)),
    h("td", { class: "num" }, formatBytes(c.sizes ? c.sizes.indexes : undefined)),
    h("td", {}, h("span", { class: "row" },
      link(type === "messages" ? hrefs.messages(db, c.collection, branch) : hrefs.documents(db, c.collection, branch), type === "messages" ? "messages" : "documents", { "data-test": "docs-link" }),
      confirmButton("Drop", `Drop collection ${c.collection} and its documents?`, "coll-drop", async () => {
        try {
          await api("DELETE", paths.collection(db, c.collection) + "/drop", withBranch({}, branch));
          go(hrefs.database(db, branch), { replace: true });
        } catch (err) {
          messages.replaceChildren(errorBox(err));
        }
      })))));
  if (type === "messages") {
    count.textContent = "—";
    return;
  }
  try {
    const r = await api("POST", paths.documents(db, c.collection) + "/count", withBranch({ filter: {} }, branch), { signal });
    count.textContent = formatCount(r.count);
  } catch (err) {
    if (err.name === "AbortError") throw err;
    count.textContent = "—";
    count.setAttribute("title", `${err.code}: ${err.message}`);
  }
}

function branchesTable(db, current, branches, messages) {
  return h("table", { class: "grid", "data-test": "branch-table" },
    h("thead", {}, h("tr", {}, h("th", {}, "Branch"), h("th", {}, ""))),
    h("tbody", {}, branches.map((b) => {
      const name = typeof b === "string" ? b : b.branch;
      const here = (current || "main") === name;
      return h("tr", { "data-test": "branch-row", "data-branch": name },
        h("td", {}, here ? h("strong", {}, name, " (shown)") : link(hrefs.database(db, name === "main" ? "" : name), name, { "data-test": "branch-link" })),
        h("td", {}, name === "main" ? h("span", { class: "muted" }, "the database itself") :
          confirmButton("Delete", `Delete branch ${name} and its data?`, "branch-delete", async () => {
            try {
              await api("DELETE", paths.branch(db, name) + "/delete");
              go(hrefs.database(db), { replace: here });
            } catch (err) {
              messages.replaceChildren(errorBox(err));
            }
          })));
    })));
}

function createBranchForm(db) {
  const name = h("input", { type: "text", placeholder: "branch name", required: true, "data-test": "branch-create-name" });
  const out = h("div");
  return h("div", {},
    h("form", { class: "inline", onsubmit: async (ev) => {
      ev.preventDefault();
      out.replaceChildren();
      const b = name.value.trim();
      try {
        await api("POST", paths.branch(db, b) + "/create");
        go(hrefs.database(db, b));
      } catch (err) {
        out.append(errorBox(err));
      }
    } }, name, h("button", { type: "submit", "data-test": "branch-create-submit" }, "Create branch"),
    h("span", { class: "muted" }, "A new branch starts with main's collections and schemas, and no documents.")),
    out);
}

// A schema to start from: the collection's name as title, an integer key.
function templateSchema(name) {
  return JSON.stringify({
    title: name || "items",
    properties: { id: { type: "integer" }, name: { type: "string" } },
    primary_key: ["id"],
  }, null, 2);
}

function createCollectionForm(db, branch) {
  const name = h("input", { type: "text", placeholder: "collection name", required: true, "data-test": "coll-create-name" });
  const schema = h("textarea", { spellcheck: "false", "data-test": "coll-create-schema" });
  schema.value = templateSchema("");
  // The template follows the name until the schema is edited by hand.
  let edited = false;
  schema.addEventListener("input", () => { edited = true; });
  name.addEventListener("input", () => { if (!edited) schema.value = templateSchema(name.value.trim()); });
  const out = h("div");
  const form = h("form", { onsubmit: async (ev) => {
    ev.preventDefault();
    out.replaceChildren();
    const coll = name.value.trim();
    let s;
    try {
      s = parseJSON(schema.value);
    } catch (err) {
      out.append(errorBox(new Error("The schema is not JSON: " + err.message)));
      return;
    }
    try {
      const r = await api("POST", paths.collection(db, coll) + "/createOrUpdate", withBranch({ schema: s, only_create: true }, branch));
      out.append(notice(r.message || "created"));
      go(hrefs.collection(db, coll, branch));
    } catch (err) {
      out.append(errorBox(err));
    }
  } },
  h("div", { class: "row" }, name), schema,
  h("div", { class: "row" }, h("button", { type: "submit", "data-test": "coll-create-submit" }, "Create collection"),
    h("span", { class: "muted" }, "The schema's title must be the collection's name. Add \"collection_type\": \"messages\" for a messages collection.")),
  out);
  return h("div", { "data-test": "coll-create" }, h("h3", {}, "New collection"), form);
}

// links.js: the console's own addresses (see the routes in app.js). Every
// page has one, with what it shows in its path and query, so that it can
// be bookmarked, shared and opened directly. The branch travels as
// ?branch= wherever one other than main is set.

// enc escapes one path segment as Go's url.PathEscape does (as the tests
// and other tools write addresses): ":", "=", "@", "$", "&" and "+" stay
// as they are, which keeps a key's JSON readable in the address
// (/doc/%7B%22id%22:7%7D); "/", "?", "#", "," and the rest are escaped.
function enc(s) {
  return encodeURIComponent(s)
    .replace(/%(24|26|2B|3A|3D|40)/g, (m) => decodeURIComponent(m))
    .replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
}

function withQuery(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && v !== "") q.set(k, v);
  }
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

export const hrefs = {
  databases: () => "/console/",
  database: (db, branch) => withQuery(`/console/db/${enc(db)}`, { branch }),
  collection: (db, coll, branch) => withQuery(`/console/db/${enc(db)}/c/${enc(coll)}`, { branch }),
  // params: {filter, sort, fields, page, limit}
  documents: (db, coll, branch, params) => withQuery(`/console/db/${enc(db)}/c/${enc(coll)}/docs`, { branch, ...(params || {}) }),
  // key: the document's primary key as an object ({"id": 1}), written as JSON.
  document: (db, coll, key, branch) => withQuery(`/console/db/${enc(db)}/c/${enc(coll)}/doc/${enc(JSON.stringify(key))}`, { branch }),
  search: (db, coll, branch, params) => withQuery(`/console/db/${enc(db)}/c/${enc(coll)}/search`, { branch, ...(params || {}) }),
  live: (db, coll, branch) => withQuery(`/console/db/${enc(db)}/c/${enc(coll)}/live`, { branch }),
  messages: (db, coll, branch) => withQuery(`/console/db/${enc(db)}/c/${enc(coll)}/messages`, { branch }),
  ops: () => "/console/ops",
  admin: () => "/console/admin",
  signin: (next) => withQuery("/console/signin", { next }),
};

export { withQuery };

import { h, link } from "./dom.js";

// crumbs is the trail above a page's title: Databases › db › collection ›
// what the page is. Pass the route's params and query; tail is the
// current page's own name (text, no link), if any.
export function crumbs(params, query, tail) {
  const branch = query && query.get("branch");
  const parts = [link(hrefs.databases(), "Databases")];
  if (params.db) parts.push(link(hrefs.database(params.db, branch), branch ? `${params.db} (${branch})` : params.db));
  if (params.coll) parts.push(link(hrefs.collection(params.db, params.coll, branch), params.coll));
  if (tail) parts.push(h("span", {}, tail));
  const out = h("nav", { class: "crumbs", "data-test": "crumbs" });
  parts.forEach((p, i) => {
    if (i > 0) out.append(h("span", { class: "sep" }, "›"));
    out.append(p);
  });
  return out;
}

// collectionTabs links a collection's pages to each other.
export function collectionTabs(params, query, current) {
  const branch = query && query.get("branch");
  const { db, coll } = params;
  const tabs = [
    ["collection", "Schema", hrefs.collection(db, coll, branch)],
    ["documents", "Documents", hrefs.documents(db, coll, branch)],
    ["search", "Search", hrefs.search(db, coll, branch)],
    ["live", "Live", hrefs.live(db, coll, branch)],
    ["messages", "Messages", hrefs.messages(db, coll, branch)],
  ];
  return h("nav", { class: "tabs", "data-test": "tabs" },
    tabs.map(([name, text, href]) => name === current ? h("strong", {}, text) : link(href, text, { "data-test": `tab-${name}` })));
}

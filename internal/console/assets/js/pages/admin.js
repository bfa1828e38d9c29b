// pages/admin.js: /console/admin, applications and namespaces.
//
// Applications (the /v1/management/applications calls): list, create with
// a role, rotate a secret, delete; they need the admin's role (an admin
// manages its namespace's, the owner every namespace's). Namespaces (the
// /v1/management/namespaces calls): list, create, delete; the owner's.
// The page asks who the caller is (whoami) and offers only the actions
// its role may take, but every list is asked for all the same, so that a
// role that may not see it gets the server's refusal, as the server said
// it. A secret is shown once, when it is made (create or rotate): the
// server keeps only its hash.
//
// data-test hooks (root: data-page="admin"):
//   admin-who (the caller's role and namespace), admin-noauth (the warning
//   of a server without --auth);
//   apps (the section), app-table, app-row (data-app = id, data-name), app-role,
//   app-rotate, app-rotate-yes, app-delete, app-delete-yes (confirmations, see
//   dom.js's confirmButton), app-create-name, app-create-description,
//   app-create-role (select), app-create-namespace (owner only), app-create-submit,
//   app-secret (the new credentials, shown once: app-secret-id, app-secret-value);
//   namespaces (the section), ns-table, ns-row (data-ns = name), ns-delete,
//   ns-delete-yes, ns-create-name, ns-create-submit;
//   error (each section shows its own refusals), notice.

import { h, errorBox, notice, confirmButton, page, ready } from "../dom.js";
import { api, serverInfo, whoAmI } from "../api.js";

const ROLES = ["reader", "editor", "admin", "owner"];
const APPS = "/v1/management/applications";
const NAMESPACES = "/v1/management/namespaces";

export async function render(view, params, query, ctx) {
  const root = page("admin", h("h1", {}, "Applications and namespaces"));
  view.append(root);
  const signal = ctx.signal;

  let who = null;
  let auth = false;
  try {
    auth = Boolean((await serverInfo()).auth);
    who = await whoAmI();
  } catch (err) {
    if (err.name === "AbortError") return;
    root.append(errorBox(err));
  }
  const role = (who && who.role) || "";
  root.append(h("p", { class: "muted", "data-test": "admin-who" },
    who ? `You are ${auth ? `application ${who.sub || "?"}` : "the anonymous caller"}, role ${role || "?"}, in namespace ${who.namespace || "?"}${who.project ? `, an app key of project ${who.project}` : ""}.` : "Who you are is not known."));
  if (!auth) {
    root.append(h("p", { class: "panel", "data-test": "admin-noauth" },
      "This server runs without authentication (no --auth): everyone is the owner. Applications made now would let anyone who saw their secret in, so the server refuses to start with --auth until they are deleted."));
  }

  const apps = h("section", { class: "admin-section", "data-test": "apps" });
  const namespaces = h("section", { class: "admin-section", "data-test": "namespaces" });
  root.append(apps, namespaces);
  const ctxt = { role, signal, auth };
  await Promise.all([showApps(apps, ctxt), showNamespaces(namespaces, ctxt)]);
  ready(root);
}

function atLeast(role, wanted) {
  return ROLES.indexOf(role) >= ROLES.indexOf(wanted);
}

// showApps lists the applications and, for an admin or the owner, offers
// to create, rotate and delete them. message: what the last action did.
async function showApps(out, c, message) {
  const manage = atLeast(c.role, "admin");
  let list;
  try {
    const r = await api("POST", `${APPS}/list`, {}, { signal: c.signal });
    list = (r && r.applications) || [];
  } catch (err) {
    if (err.name === "AbortError") return;
    fill(out, h("h2", {}, "Applications"), message || null, errorBox(err), manage ? createAppForm(out, c) : null);
    return;
  }
  const again = (m) => showApps(out, c, m);
  const rows = list.map((a) => h("tr", { "data-test": "app-row", "data-app": a.id, "data-name": a.name },
    h("td", {}, a.name), h("td", { class: "cell" }, a.id), h("td", { "data-test": "app-role" }, a.role || ""),
    h("td", {}, a.namespace || a.project || ""), h("td", { class: "muted" }, a.description || ""),
    h("td", { class: "muted" }, a.created_at ? new Date(a.created_at).toLocaleString() : "", a.created_by ? ` by ${a.created_by}` : ""),
    h("td", {}, manage ? [
      confirmButton("Rotate", `Give ${a.name} a new secret? Its old secret and tokens stop working.`, "app-rotate", () => rotate(a, again, out)),
      " ",
      confirmButton("Delete", `Delete ${a.name}? Its tokens stop working.`, "app-delete", () => remove(a, again, out)),
    ] : null)));
  fill(out, h("h2", {}, "Applications"), message || null,
    list.length === 0 ? h("p", { class: "muted" }, "No applications.") :
      h("table", { class: "grid", "data-test": "app-table" },
        h("thead", {}, h("tr", {}, ["name", "id", "role", "namespace", "description", "created", ""].map((t) => h("th", {}, t)))),
        h("tbody", {}, rows)),
    manage ? createAppForm(out, c) : h("p", { class: "muted" }, `Creating, rotating and deleting applications needs the admin's role; yours is ${c.role || "unknown"}.`));
}

async function rotate(a, again, out) {
  try {
    const r = await api("POST", `${APPS}/rotate`, { id: a.id });
    const app = (r && r.application) || {};
    await again(secretBox(`New secret of ${a.name}`, app.id || a.id, app.secret));
  } catch (err) {
    out.prepend(errorBox(err));
  }
}

async function remove(a, again, out) {
  try {
    await api("DELETE", `${APPS}/delete`, { id: a.id });
    await again(notice(`Application ${a.name} deleted.`));
  } catch (err) {
    out.prepend(errorBox(err));
  }
}

// secretBox shows new credentials, this once.
function secretBox(title, id, secret) {
  return h("div", { class: "panel secret", "data-test": "app-secret" },
    h("strong", {}, title), h("p", { class: "muted" }, "Copy the secret now: the server keeps only its hash and will not show it again."),
    h("dl", {},
      h("dt", {}, "client id"), h("dd", { class: "mono", "data-test": "app-secret-id" }, id || ""),
      h("dt", {}, "client secret"), h("dd", { class: "mono", "data-test": "app-secret-value" }, secret || "")));
}

function createAppForm(out, c) {
  const name = h("input", { type: "text", required: true, placeholder: "name", "data-test": "app-create-name" });
  const description = h("input", { type: "text", placeholder: "description (optional)", "data-test": "app-create-description" });
  const role = h("select", { "data-test": "app-create-role" },
    ROLES.filter((r) => atLeast(c.role, r)).map((r) => h("option", { value: r, selected: r === "editor" }, r)));
  const namespace = c.role === "owner" ? h("input", { type: "text", placeholder: "namespace (default: yours)", "data-test": "app-create-namespace" }) : null;
  const slot = h("div", {});
  const submit = async (ev) => {
    ev.preventDefault();
    slot.replaceChildren();
    const body = { name: name.value.trim(), role: role.value };
    if (description.value.trim()) body.description = description.value.trim();
    if (namespace && namespace.value.trim()) body.namespace = namespace.value.trim();
    try {
      const r = await api("POST", `${APPS}/create`, body);
      const app = (r && r.created_application) || {};
      await showApps(out, c, secretBox(`Application ${app.name || body.name} created (${app.role || body.role})`, app.id, app.secret));
    } catch (err) {
      slot.append(errorBox(err));
    }
  };
  return h("form", { class: "panel", onsubmit: submit },
    h("h3", {}, "New application"),
    h("div", { class: "row" }, name, description, h("label", {}, "role ", role), namespace,
      h("button", { type: "submit", "data-test": "app-create-submit" }, "Create")),
    slot);
}

// showNamespaces lists the namespaces and, for the owner, offers to
// create and delete them.
async function showNamespaces(out, c, message) {
  const manage = c.role === "owner";
  let list;
  try {
    const r = await api("GET", NAMESPACES, undefined, { signal: c.signal });
    list = (r && r.namespaces) || [];
  } catch (err) {
    if (err.name === "AbortError") return;
    fill(out, h("h2", {}, "Namespaces"), message || null, errorBox(err));
    return;
  }
  const again = (m) => showNamespaces(out, c, m);
  const rows = list.map((n) => h("tr", { "data-test": "ns-row", "data-ns": n.name },
    h("td", {}, n.name), h("td", { class: "num" }, String(n.code ?? "")),
    h("td", {}, manage && n.name !== "default_namespace"
      ? confirmButton("Delete", `Delete namespace ${n.name}? Only an empty one can be.`, "ns-delete", async () => {
        try {
          await api("DELETE", `${NAMESPACES}/${encodeURIComponent(n.name)}`);
          await again(notice(`Namespace ${n.name} deleted.`));
        } catch (err) {
          out.prepend(errorBox(err));
        }
      })
      : null)));
  fill(out, h("h2", {}, "Namespaces"), message || null,
    h("table", { class: "grid", "data-test": "ns-table" },
      h("thead", {}, h("tr", {}, h("th", {}, "name"), h("th", { class: "num" }, "code"), h("th", {}, ""))),
      h("tbody", {}, rows)),
    manage ? createNamespaceForm(out, c) : null);
}

function createNamespaceForm(out, c) {
  const name = h("input", { type: "text", required: true, placeholder: "name", "data-test": "ns-create-name" });
  const slot = h("div", {});
  const submit = async (ev) => {
    ev.preventDefault();
    slot.replaceChildren();
    try {
      const r = await api("POST", `${NAMESPACES}/create`, { name: name.value.trim() });
      await showNamespaces(out, c, notice((r && r.message) || `Namespace ${name.value.trim()} created.`));
    } catch (err) {
      slot.append(errorBox(err));
    }
  };
  return h("form", { class: "panel", onsubmit: submit },
    h("h3", {}, "New namespace"),
    h("div", { class: "row" }, name, h("button", { type: "submit", "data-test": "ns-create-submit" }, "Create")),
    slot);
}

// fill puts children in el in place of what it held, leaving out the
// absent ones (null, undefined, false), as h does.
function fill(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}

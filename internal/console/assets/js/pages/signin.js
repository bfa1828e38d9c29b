// pages/signin.js: sign in with an application's id and secret (or the
// owner's, from the owner file). The token is kept in memory only (api.js).
// Without --auth the server needs no token, and this page says so.
import { h, page, ready, errorBox, link, go } from "../dom.js";
import { serverInfo, signIn, signedIn, currentWho } from "../api.js";
import { hrefs } from "../links.js";

// next is where to go once signed in: a page of the console only. It is
// read as the browser will read it (resolved against this page), since
// "/console/..//elsewhere" starts well and leads out of the console.
function nextOf(query) {
  let url;
  try {
    url = new URL(query.get("next") || "", location.href);
  } catch (_) {
    return hrefs.databases();
  }
  const ok = url.origin === location.origin && url.pathname.startsWith("/console/") &&
    !url.pathname.startsWith("/console/signin") && !url.pathname.startsWith("/console/assets/");
  return ok ? url.pathname + url.search + url.hash : hrefs.databases();
}

export async function render(view, params, query) {
  const next = nextOf(query);
  const root = page("signin", h("h1", {}, "Sign in"));
  view.append(root);
  const info = await serverInfo();
  if (!info.auth) {
    root.append(h("p", { "data-test": "signin-noauth" }, "This server runs without authentication (no --auth): the console needs no sign-in, and every caller may do everything. "),
      link(next, "Continue"));
    ready(root);
    return;
  }
  if (signedIn()) {
    const who = currentWho();
    root.append(h("p", {}, "Signed in", who ? ` as ${who.sub} (${who.role} in ${who.namespace})` : "", ". Sign in again to change application."));
  }
  const id = h("input", { type: "text", name: "client_id", autocomplete: "username", required: true, "data-test": "signin-id", class: "wide" });
  const secret = h("input", { type: "password", name: "client_secret", autocomplete: "current-password", required: true, "data-test": "signin-secret", class: "wide" });
  const submit = h("button", { type: "submit", "data-test": "signin-submit" }, "Sign in");
  const errors = h("div");
  const form = h("form", { class: "stack", "data-test": "signin-form", onsubmit: onSubmit },
    h("label", {}, "Application id", id),
    h("label", {}, "Secret", secret),
    submit, errors);
  root.append(
    h("p", { class: "muted" }, "An application's id and secret (folio app create), or the owner's from the owner file (owner.json in the data directory). The token stays in this page's memory: reloading the page signs out."),
    form);
  id.focus();
  ready(root);

  async function onSubmit(ev) {
    ev.preventDefault();
    errors.replaceChildren();
    submit.disabled = true;
    try {
      await signIn(id.value.trim(), secret.value);
      go(next, { replace: true });
    } catch (err) {
      errors.append(errorBox(err));
    } finally {
      submit.disabled = false;
    }
  }
}

// pages/admin.js: a placeholder until S builds this page (it renders its
// root with data-page="admin" so that the app loads and routes to it).
import { h, page, ready } from "../dom.js";

export async function render(view) {
  const root = page("admin", h("h1", {}, "admin"), h("p", { class: "muted" }, "not built yet"));
  view.append(root);
  ready(root);
}

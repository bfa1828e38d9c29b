// pages/live.js: a placeholder until S builds this page (it renders its
// root with data-page="live" so that the app loads and routes to it).
import { h, page, ready } from "../dom.js";

export async function render(view) {
  const root = page("live", h("h1", {}, "live"), h("p", { class: "muted" }, "not built yet"));
  view.append(root);
  ready(root);
}

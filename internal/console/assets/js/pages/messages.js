// pages/messages.js: a placeholder until S builds this page (it renders its
// root with data-page="messages" so that the app loads and routes to it).
import { h, page, ready } from "../dom.js";

export async function render(view) {
  const root = page("messages", h("h1", {}, "messages"), h("p", { class: "muted" }, "not built yet"));
  view.append(root);
  ready(root);
}

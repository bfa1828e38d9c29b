// follow.js: a stream a page follows (a collection's change events, a
// messages subscription). It opens with the page, pauses (closing the
// stream) and resumes after the last position seen, so nothing in between
// is lost; applying a filter reopens it from now; the filter and the
// position stay in the address (?filter=, ?from=), so that a bookmark
// resumes there. A page extends Follow with its controls (the fields
// below, made in its constructor) and what it shows: onLine(line),
// reset() (a new filter's empty view), and opening() (just before a stream
// opens).
import { errorBox, fieldError, ready } from "./dom.js";
import { stream, parseJSON } from "./api.js";
import { withQuery } from "./links.js";

export class Follow {
  // path is the streaming call's; liveLabel the state shown while open.
  constructor(root, path, query, pageSignal, liveLabel) {
    this.root = root;
    this.path = path;
    this.pageSignal = pageSignal;
    this.liveLabel = liveLabel;
    this.filterText = query.get("filter") || "";
    this.last = query.get("from") || ""; // resume after this position: the last one seen
    this.controller = null;
    // The page's controls, which its constructor makes: filter (textarea),
    // filterSlot, state, toggle, errors.
  }

  opening() {}

  reset() {}

  start() {
    this.errors.replaceChildren();
    let filter;
    try {
      filter = this.filterText ? parseJSON(this.filterText) : undefined;
    } catch (err) {
      this.filterSlot.replaceChildren(fieldError("filter", `not JSON: ${err.message}`));
      this.setState("paused");
      ready(this.root);
      return;
    }
    const body = {};
    if (filter !== undefined) body.filter = filter;
    if (this.last) body.options = { start_after: this.last };
    this.opening();
    const controller = new AbortController();
    this.controller = controller;
    this.setState("connecting");
    stream(this.path, body, (line) => this.onLine(line), {
      signal: AbortSignal.any([controller.signal, this.pageSignal]),
      // The stream answers 200 once it is in place: from then on every
      // change reaches it, and the page says it is ready.
      onOpen: () => {
        this.setState("live");
        ready(this.root);
      },
    }).then(() => {
      if (this.controller === controller) this.ended(null);
    }, (err) => {
      if (err && err.name === "AbortError") return;
      if (this.controller === controller) this.ended(err);
    });
  }

  stop() {
    if (this.controller) this.controller.abort();
    this.controller = null;
  }

  onToggle() {
    if (this.controller) {
      this.stop();
      this.setState("paused");
      this.remember();
    } else {
      this.start();
    }
  }

  applyFilter() {
    this.filterSlot.replaceChildren();
    const text = this.filter.value.trim();
    if (text !== "") {
      try {
        parseJSON(text);
      } catch (err) {
        this.filterSlot.append(fieldError("filter", `not JSON: ${err.message}`));
        return;
      }
    }
    // A new filter is a new view: it starts from now, empty.
    this.stop();
    this.filterText = text;
    this.last = "";
    this.reset();
    this.remember();
    this.start();
  }

  // ended: the server closed the stream (an error line, such as a stream
  // that fell behind, or the server shutting down), or it failed to open.
  ended(err) {
    this.controller = null;
    this.setState("ended");
    if (err) this.errors.replaceChildren(errorBox(err));
    this.remember();
    ready(this.root);
  }

  setState(s) {
    this.state.setAttribute("data-state", s);
    this.state.className = `live-state state-${s}`;
    this.state.textContent = { connecting: "connecting…", live: this.liveLabel, paused: "paused", ended: "ended" }[s];
    this.toggle.textContent = s === "live" || s === "connecting" ? "Pause" : "Resume";
  }

  // remember writes the filter and the last position into the address
  // (without showing the page again).
  remember() {
    const here = new URLSearchParams(location.search);
    history.replaceState(null, "", withQuery(location.pathname, { branch: here.get("branch") || "", filter: this.filterText, from: this.last }));
  }
}

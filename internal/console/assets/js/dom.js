// dom.js: every element the console shows is built here, with
// createElement and text nodes only. Documents, names and messages are
// user data: nothing is ever parsed as HTML (no innerHTML anywhere), so a
// document holding <script>alert(1)</script> shows as those characters.

// h builds an element: h("a", {href: "/console/", "data-test": "x"}, "text", child, ...).
// attrs: "class"; data-* and other attributes (set as attributes); on*
// functions (listeners); value, checked, disabled, selected, open (set as
// properties). Children: strings and numbers (text nodes), nodes, arrays
// of those; null, undefined and false are left out.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (name.startsWith("on") && typeof v === "function") {
      el.addEventListener(name.slice(2).toLowerCase(), v);
    } else if (name === "class") {
      el.className = v;
    } else if (name === "style") {
      // The policy forbids inline styles: give the element a class.
      throw new Error("h: no inline style; use a class of console.css");
    } else if (PROPS.has(name)) {
      el[name] = v;
    } else if ((name === "href" || name === "src" || name === "action") && !safeURL(v)) {
      continue;
    } else {
      el.setAttribute(name, v === true ? "" : String(v));
    }
  }
  append(el, children);
  return el;
}

const PROPS = new Set(["value", "checked", "disabled", "selected", "open", "hidden", "readOnly"]);

// safeURL: the console links within itself (or to data: images); never a
// javascript: URL, whatever a value holds.
function safeURL(v) {
  const s = String(v).trim().toLowerCase();
  return !(s.startsWith("javascript:") || s.startsWith("vbscript:"));
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

// clear removes every child of el.
export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

// link is an <a> to a page of the console; the router (app.js) takes its
// clicks and shows the page without reloading.
export function link(href, text, attrs) {
  return h("a", { ...(attrs || {}), href }, text);
}

// go shows another page of the console, as following a link to it would.
// (Pages never import app.js: it is loaded by a versioned name.)
export function go(href, { replace = false } = {}) {
  window.dispatchEvent(new CustomEvent("console:go", { detail: { href, replace } }));
}

// jsonView is a readable, collapsible tree of a JSON value: objects and
// arrays as <details> (open to depth `open`), scalars coloured by type,
// strings shown as JSON writes them.
export function jsonView(value, { open = 2 } = {}) {
  return h("div", { class: "json", "data-test": "json" }, jsonNode(value, 0, open));
}

function jsonNode(v, depth, open) {
  if (isRawJSON(v)) return h("span", { class: "n" }, v.rawJSON);
  if (v === null) return h("span", { class: "z" }, "null");
  if (Array.isArray(v)) {
    if (v.length === 0) return h("span", { class: "z" }, "[]");
    return h("details", { open: depth < open },
      h("summary", {}, `[ ${v.length} item${v.length === 1 ? "" : "s"} ]`),
      h("ul", {}, v.map((x, i) => h("li", {}, h("span", { class: "k" }, String(i)), ": ", jsonNode(x, depth + 1, open)))));
  }
  if (typeof v === "object") {
    const keys = Object.keys(v);
    if (keys.length === 0) return h("span", { class: "z" }, "{}");
    return h("details", { open: depth < open },
      h("summary", {}, `{ ${keys.length} field${keys.length === 1 ? "" : "s"} }`),
      h("ul", {}, keys.map((k) => h("li", { "data-field": k }, h("span", { class: "k" }, k), ": ", jsonNode(v[k], depth + 1, open)))));
  }
  if (typeof v === "string") return h("span", { class: "s" }, JSON.stringify(v));
  if (typeof v === "number") return h("span", { class: "n" }, String(v));
  if (typeof v === "boolean") return h("span", { class: "b" }, String(v));
  return h("span", {}, String(v));
}

function isRawJSON(v) {
  return typeof JSON.isRawJSON === "function" && JSON.isRawJSON(v);
}

// compact shows a value in one short line, for a table cell: strings as
// they are, anything else as JSON, cut at max characters.
export function compact(v, max = 80) {
  let s;
  if (typeof v === "string") s = v;
  else if (v === undefined) s = "";
  else s = JSON.stringify(v);
  return s.length > max ? s.slice(0, max - 1) + "…" : s;
}

// errorBox shows an error as the server said it: its code and message
// (an ApiError of api.js), or the message of any other error.
export function errorBox(err) {
  const box = h("div", { class: "error", "data-test": "error", role: "alert" });
  if (err && err.code) {
    box.append(h("span", { class: "code", "data-test": "error-code" }, err.code), h("span", { "data-test": "error-message" }, err.message));
  } else {
    box.append(h("span", { "data-test": "error-message" }, String((err && err.message) || err)));
  }
  return box;
}

// fieldError shows a validation error beside the field it names.
export function fieldError(field, message) {
  return h("div", { class: "field-error", "data-test": "field-error", "data-field": field, role: "alert" },
    h("span", { class: "field" }, field), message);
}

// notice is a short message of success.
export function notice(text) {
  return h("div", { class: "notice", "data-test": "notice", role: "status" }, text);
}

// confirmButton is a button whose action asks first, in the page (no
// dialog): a first click shows "Really …? Yes / Cancel"; Yes runs action.
// testName names the button (data-test), its yes "<testName>-yes".
export function confirmButton(label, question, testName, action) {
  const wrap = h("span", { class: "confirm-wrap" });
  const button = h("button", { type: "button", class: "danger", "data-test": testName, onclick: ask }, label);
  wrap.append(button);
  function ask() {
    const bar = h("span", { class: "confirm", "data-test": "confirm" }, question,
      h("button", { type: "button", class: "danger sure", "data-test": `${testName}-yes`, onclick: yes }, "Yes, " + label.toLowerCase()),
      h("button", { type: "button", class: "plain", "data-test": `${testName}-cancel`, onclick: cancel }, "Cancel"));
    button.hidden = true;
    wrap.append(bar);
    async function yes(ev) {
      ev.target.disabled = true;
      try { await action(); } finally { bar.remove(); button.hidden = false; }
    }
    function cancel() { bar.remove(); button.hidden = false; }
  }
  return wrap;
}

// page is a page's root element: data-page names it for the tests;
// ready() marks it loaded (data-ready="1"), which the tests wait for.
export function page(name, ...children) {
  return h("section", { class: "page", "data-page": name }, children);
}

export function ready(root) {
  root.setAttribute("data-ready", "1");
}

// formatBytes shows a size for people: 1.2 MB.
export function formatBytes(n) {
  if (n === undefined || n === null) return "";
  const units = ["B", "kB", "MB", "GB", "TB"];
  let i = 0;
  let x = Number(n);
  while (x >= 1000 && i < units.length - 1) { x /= 1000; i++; }
  return (i === 0 ? String(x) : x.toFixed(x < 10 ? 1 : 0)) + " " + units[i];
}

// formatCount shows a count with thousands separated.
export function formatCount(n) {
  return n === undefined || n === null ? "" : Number(n).toLocaleString("en-US");
}

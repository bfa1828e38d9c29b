// api.js: the console's one way to the server, the public API under /v1/,
// the same calls any client makes. The access token lives in this module
// only (never in localStorage, sessionStorage or a cookie): reloading the
// page forgets it, and a new tab signs in again.

let token = null;
let refreshToken = null;
let info = null; // GET /v1/info's answer, a promise of {server_version, engine, auth}
let whoami = null; // GET /v1/observability/whoami, once signed in
let onAuthRequired = () => {};
const sessionListeners = new Set();

// ApiError is an error answer of the server: its HTTP status, its code and
// message as the server wrote them, and the field a validation error names
// (a dot path, "" for the document itself; undefined when none).
export class ApiError extends Error {
  constructor(status, code, message, retry) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.retry = retry;
    this.field = fieldOf(message);
  }
}

// fieldOf finds the field a validation message names: the schema's
// "json schema validation failed for field 'a/b' reason '…'" (a JSON
// pointer: a.b here), with an unknown member ("additionalProperties 'x'
// not allowed") taken as that member, and "… field 'age' takes …".
export function fieldOf(message) {
  if (typeof message !== "string") return undefined;
  let m = /validation failed for field '(.*?)' reason '(.*)'/s.exec(message);
  if (m) {
    let field = m[1].split("/").filter((s) => s !== "").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~")).join(".");
    const extra = /additionalProperties '([^']+)' not allowed/.exec(m[2]);
    if (extra) field = field ? `${field}.${extra[1]}` : extra[1];
    const missing = /missing properties: '([^']+)'/.exec(m[2]);
    if (missing) field = field ? `${field}.${missing[1]}` : missing[1];
    return field;
  }
  m = /\bfield '([^']+)'/.exec(message);
  return m ? m[1] : undefined;
}

// parseJSON reads JSON keeping integers beyond 2^53 exact (as JSON.rawJSON
// values, written back digit for digit by stringify): a database's int64
// ids must survive being shown and edited. Browsers without the JSON
// source access (before 2023) read them as numbers, as JSON.parse does.
export function parseJSON(text) {
  if (typeof JSON.rawJSON !== "function") return JSON.parse(text);
  return JSON.parse(text, (key, v, ctx) => {
    if (typeof v === "number" && !Number.isSafeInteger(v) && ctx && /^-?\d+$/.test(ctx.source)) {
      return JSON.rawJSON(ctx.source);
    }
    return v;
  });
}

// stringify writes a value back as JSON (indent: spaces, or none).
export function stringify(v, indent) {
  return JSON.stringify(v, null, indent);
}

// setAuthRequiredHandler: what to do when the server answers 401 (the
// router shows the sign-in page, then comes back).
export function setAuthRequiredHandler(fn) {
  onAuthRequired = fn;
}

// onSessionChange calls fn after every sign-in and sign-out.
export function onSessionChange(fn) {
  sessionListeners.add(fn);
}

function sessionChanged() {
  for (const fn of sessionListeners) fn();
}

function headers(body) {
  const hd = {};
  if (body !== undefined) hd["Content-Type"] = "application/json";
  if (token) hd["Authorization"] = "Bearer " + token;
  return hd;
}

// send makes a request, once more with a refreshed token if the access
// token has expired and a refresh token is held.
async function send(method, path, body, signal, extraHeaders) {
  const init = () => ({
    method,
    headers: { ...headers(body), ...(extraHeaders || {}) },
    body: body === undefined ? undefined : typeof body === "string" ? body : stringify(body),
    signal,
    credentials: "same-origin",
    cache: "no-store",
  });
  let res = await fetch(path, init());
  if (res.status === 401 && refreshToken && token) {
    if (await refresh()) res = await fetch(path, init());
  }
  return res;
}

// errorOf turns an error answer into an ApiError; a 401 also asks for
// sign-in.
async function errorOf(res) {
  const text = await res.text();
  let code = "HTTP_" + res.status;
  let message = text || res.statusText;
  let retry;
  try {
    const e = JSON.parse(text).error;
    if (e && e.code) {
      code = e.code;
      message = e.message;
      retry = e.retry;
    }
  } catch (_) { /* not JSON: keep the text */ }
  const err = new ApiError(res.status, code, message, retry);
  if (res.status === 401) onAuthRequired(err);
  return err;
}

// api calls the API: api("POST", "/v1/projects/shop/database/describe",
// {branch: "main"}) → the answer's JSON (null for an empty answer), or
// throws an ApiError. opts: {signal, headers}.
export async function api(method, path, body, opts = {}) {
  const res = await send(method, path, body, opts.signal, opts.headers);
  if (!res.ok) throw await errorOf(res);
  const text = await res.text();
  return text.trim() === "" ? null : parseJSON(text);
}

// stream calls a streaming API (read, search, events, subscribe): the
// answer is one JSON object per line, each given to onLine as it arrives.
// An {"error":…} line ends the stream with an ApiError. It returns when
// the stream ends, or throws the AbortError of opts.signal. opts.onOpen,
// if given, is called with the response once it is OK, before any line:
// the events and subscribe streams answer as soon as they are in place, so
// a page can tell then that it will see what is written from now on.
export async function stream(path, body, onLine, opts = {}) {
  const res = await send("POST", path, body, opts.signal, opts.headers);
  if (!res.ok) throw await errorOf(res);
  if (opts.onOpen) opts.onOpen(res);
  if (!res.body) return;
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  const take = (line) => {
    if (line.trim() === "") return;
    const v = parseJSON(line);
    if (v && v.error && v.error.code) throw new ApiError(res.status, v.error.code, v.error.message, v.error.retry);
    onLine(v);
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      take(line);
    }
  }
  buf += decoder.decode();
  take(buf);
}

// serverInfo is GET /v1/info, asked once: the version, the engine and
// whether the server requires a token (auth). The promise is kept, so
// callers at the same moment (the header and the first page) share one
// request; a failed one is asked again next time.
export function serverInfo() {
  if (!info) {
    info = api("GET", "/v1/info");
    info.catch(() => { info = null; });
  }
  return info;
}

// authRequired reports whether the console must sign in before calling
// the API: the server has --auth and no token is held.
export async function authRequired() {
  const i = await serverInfo();
  return Boolean(i.auth) && !token;
}

export function signedIn() {
  return token !== null;
}

// signIn gets a token for an application's id and secret (OAuth2 client
// credentials), then asks who that is.
export async function signIn(id, secret) {
  const form = new URLSearchParams({ grant_type: "client_credentials", client_id: id, client_secret: secret });
  const res = await fetch("/v1/auth/token", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: form.toString(),
    cache: "no-store",
  });
  if (!res.ok) {
    const text = await res.text();
    let e = {};
    try { e = JSON.parse(text).error || {}; } catch (_) { /* text */ }
    throw new ApiError(res.status, e.code || "HTTP_" + res.status, e.message || text, e.retry);
  }
  const t = await res.json();
  token = t.access_token;
  refreshToken = t.refresh_token || null;
  whoami = null;
  try { await whoAmI(); } catch (_) { /* the token works; who it is stays unknown */ }
  sessionChanged();
}

async function refresh() {
  const form = new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken });
  const res = await fetch("/v1/auth/token", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: form.toString(),
    cache: "no-store",
  });
  if (!res.ok) {
    refreshToken = null;
    return false;
  }
  const t = await res.json();
  token = t.access_token;
  refreshToken = t.refresh_token || refreshToken;
  return true;
}

// signOut forgets the token.
export function signOut() {
  token = null;
  refreshToken = null;
  whoami = null;
  sessionChanged();
}

// whoAmI is the signed-in application: {sub, namespace, role, project}.
// Without --auth the server answers for the anonymous caller.
export async function whoAmI() {
  if (!whoami) whoami = await api("GET", "/v1/observability/whoami");
  return whoami;
}

export function currentWho() {
  return whoami;
}

// enc is one name of a path, encoded. "." and ".." cannot be one: the
// browser takes them (escaped as %2E too) as steps of the path before it
// sends the request, so a call about a collection "." would reach the
// route above it. They are refused here, before any call; every other
// name is the server's to judge.
function enc(name, what) {
  if (name === "." || name === "..") {
    throw new Error(`"${name}" cannot be a ${what}'s name: in an address the browser reads it as a step of the path, so the request would reach another route`);
  }
  return encodeURIComponent(name);
}

// The API's paths, each name encoded: the final (2023) routes where they
// exist, the 2022 ones (events, messages) otherwise.
export const paths = {
  projects: () => "/v1/projects",
  project: (db) => `/v1/projects/${enc(db, "database")}`,
  database: (db) => `/v1/projects/${enc(db, "database")}/database`,
  branches: (db) => `/v1/projects/${enc(db, "database")}/database/branches`,
  branch: (db, b) => `/v1/projects/${enc(db, "database")}/database/branches/${enc(b, "branch")}`,
  collections: (db) => `/v1/projects/${enc(db, "database")}/database/collections`,
  collection: (db, coll) => `/v1/projects/${enc(db, "database")}/database/collections/${enc(coll, "collection")}`,
  documents: (db, coll) => `/v1/projects/${enc(db, "database")}/database/collections/${enc(coll, "collection")}/documents`,
  // 2022 routes: events and messages (on main only).
  collection2022: (db, coll) => `/v1/databases/${enc(db, "database")}/collections/${enc(coll, "collection")}`,
};

// withBranch adds the branch to a request body where one is set ("" and
// null are main).
export function withBranch(body, branch) {
  return branch ? { ...body, branch } : body;
}

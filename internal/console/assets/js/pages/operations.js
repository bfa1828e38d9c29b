// pages/operations.js: /console/ops, the node at a glance: its health (the
// health call), the server (info), the store's sizes per database and
// collection (the describe calls, which answer sizes), and the main metrics
// over the last minutes, drawn as small line charts.
//
// The metrics come from the node's public metrics endpoint, GET /metrics
// (the Prometheus text format; no token needed, even with --auth), on the
// API's port unless the server was started with --metrics-addr: then the
// page says so and shows the rest. The page samples it every few seconds
// while it is open (?every=N seconds, 5 by default), keeps the last five
// minutes in memory, and turns counters into rates between samples.
// Charts are SVG built with createElementNS, styled by classes only (the
// content security policy allows no inline style).
//
// data-test hooks (root: data-page="operations"; data-ready="1" once the
// health, the sizes and the first sample are shown):
//   ops-health (data-state = ok or failing), ops-info (version, engine, auth),
//   ops-sizes (the table), size-db (a database's row: data-db), size-coll (a
//   collection's row: data-db, data-coll), size-log (the change log's size),
//   sizes-refresh;
//   ops-metrics (data-samples = samples taken), metrics-unavailable (when
//   /metrics cannot be read, with the reason), chart (each chart: data-chart =
//   requests, latency, commits, position, lag; data-points = points drawn),
//   chart-now (its latest values), ops-streams, ops-transactions; error.

import { h, link, errorBox, page, ready, formatBytes, formatCount } from "../dom.js";
import { api, paths } from "../api.js";
import { hrefs } from "../links.js";

const WINDOW_MS = 5 * 60 * 1000;
const METRICS_PATH = "/metrics";

export async function render(view, params, query, ctx) {
  const root = page("operations", h("h1", {}, "Operations"));
  view.append(root);
  const every = Math.max(1, parseInt(query.get("every") || "5", 10) || 5) * 1000;

  const health = h("div", { class: "row" });
  const sizes = h("div", {});
  const metrics = new MetricsView(ctx.signal);
  root.append(
    h("h2", {}, "Health"), health,
    h("h2", {}, "Metrics, last 5 minutes"), metrics.el,
    h("h2", {}, "Storage"), sizes);

  await Promise.all([
    showHealth(health, ctx.signal),
    showSizes(sizes, ctx.signal),
    metrics.sample(),
  ]);
  ready(root);

  const timer = setInterval(() => {
    if (ctx.signal.aborted) return;
    showHealth(health, ctx.signal);
    metrics.sample();
  }, every);
  return () => clearInterval(timer);
}

// showHealth asks the health call and the server's info.
async function showHealth(out, signal) {
  const parts = [];
  try {
    const r = await api("GET", "/v1/health", undefined, { signal });
    parts.push(h("span", { class: "health ok", "data-test": "ops-health", "data-state": "ok" }, `● ${(r && r.response) || "OK"}`));
  } catch (err) {
    if (err.name === "AbortError") return;
    parts.push(h("span", { class: "health failing", "data-test": "ops-health", "data-state": "failing" }, "● failing"), errorBox(err));
  }
  try {
    const i = await api("GET", "/v1/info", undefined, { signal });
    parts.push(h("span", { class: "muted", "data-test": "ops-info" },
      `Folio ${i.server_version || "?"}`, i.engine ? ` · engine ${i.engine}` : "", ` · authentication ${i.auth ? "on" : "off"}`,
      ` · checked ${new Date().toLocaleTimeString()}`));
  } catch (err) {
    if (err.name === "AbortError") return;
    parts.push(errorBox(err));
  }
  fill(out, ...parts);
}

// showSizes lists every database (project) the caller sees with its
// collections' sizes, from each database's describe.
async function showSizes(out, signal) {
  const refresh = h("button", { type: "button", class: "plain", "data-test": "sizes-refresh", onclick: () => showSizes(out, signal) }, "Refresh");
  let projects;
  try {
    const r = await api("GET", paths.projects(), undefined, { signal });
    projects = ((r && r.projects) || []).map((p) => p.project);
  } catch (err) {
    if (err.name === "AbortError") return;
    fill(out, errorBox(err), refresh);
    return;
  }
  const described = await Promise.all(projects.map(async (p) => {
    try {
      return { p, d: await api("POST", `${paths.database(p)}/describe`, {}, { signal }) };
    } catch (err) {
      return { p, err };
    }
  }));
  if (signal.aborted) return;

  let log = null;
  const rows = [];
  for (const { p, d, err } of described) {
    if (err) {
      rows.push(h("tr", { "data-test": "size-db", "data-db": p }, h("td", {}, link(hrefs.database(p), p)), h("td", { colspan: "4" }, errorBox(err))));
      continue;
    }
    const sz = d.sizes || {};
    if (sz.log !== undefined) log = sz.log;
    const colls = d.collections || [];
    rows.push(h("tr", { "data-test": "size-db", "data-db": p },
      h("td", {}, h("strong", {}, link(hrefs.database(p), p))),
      h("td", { class: "num" }, `${colls.length} collection${colls.length === 1 ? "" : "s"}`),
      h("td", { class: "num" }, formatBytes(sz.documents ?? d.size)),
      h("td", { class: "num" }, formatBytes(sz.indexes)),
      h("td", { class: "num" }, formatBytes((sz.documents ?? d.size ?? 0) + (sz.indexes ?? 0)))));
    for (const c of colls) {
      const cs = c.sizes || {};
      rows.push(h("tr", { class: "sub", "data-test": "size-coll", "data-db": p, "data-coll": c.collection },
        h("td", {}, link(hrefs.collection(p, c.collection), c.collection)),
        h("td", {}, ""),
        h("td", { class: "num" }, formatBytes(cs.documents ?? c.size)),
        h("td", { class: "num" }, formatBytes(cs.indexes)),
        h("td", { class: "num" }, formatBytes((cs.documents ?? c.size ?? 0) + (cs.indexes ?? 0)))));
    }
  }
  fill(out, 
    projects.length === 0 ? h("p", { class: "muted" }, "No databases yet.") :
      h("table", { class: "grid", "data-test": "ops-sizes" },
        h("thead", {}, h("tr", {}, h("th", {}, "database / collection"), h("th", { class: "num" }, ""), h("th", { class: "num" }, "documents"),
          h("th", { class: "num" }, "indexes"), h("th", { class: "num" }, "total"))),
        h("tbody", {}, rows)),
    log !== null ? h("p", { class: "muted", "data-test": "size-log" }, `The change log (one for every database) takes ${formatBytes(log)}.`) : null,
    h("p", { class: "muted" }, "Sizes are of each database's main branch, as the describe call answers them; the server stores more than these (its own records, the search indexes' files)."),
    refresh);
}

// MetricsView samples /metrics and draws the charts.
class MetricsView {
  constructor(signal) {
    this.signal = signal;
    this.samples = [];
    this.el = h("div", { class: "metrics", "data-test": "ops-metrics", "data-samples": "0" });
    this.el.append(h("p", { class: "muted" }, "Collecting…"));
  }

  async sample() {
    if (this.gone) return;
    let text;
    try {
      const res = await fetch(METRICS_PATH, { signal: this.signal, cache: "no-store" });
      if (!res.ok) {
        // A 404 is the server's setting (--metrics-addr): asking again every
        // few seconds would only repeat it.
        this.gone = res.status === 404;
        this.unavailable(res.status === 404
          ? `${METRICS_PATH} answered 404: this server serves its metrics on another address (--metrics-addr), apart from the API's port, where the console cannot read them.`
          : `${METRICS_PATH} answered ${res.status} ${res.statusText}.`);
        return;
      }
      text = await res.text();
    } catch (err) {
      if (err.name === "AbortError") return;
      this.unavailable(`${METRICS_PATH} could not be read: ${err.message}`);
      return;
    }
    const now = Date.now();
    this.samples.push(summarize(parseMetrics(text), now));
    while (this.samples.length > 0 && this.samples[0].t < now - WINDOW_MS - 60000) this.samples.shift();
    this.el.setAttribute("data-samples", String(this.samples.length));
    this.draw(now);
  }

  unavailable(reason) {
    this.el.replaceChildren(h("p", { class: "error", "data-test": "metrics-unavailable" }, reason));
  }

  draw(now) {
    const d = derive(this.samples);
    const from = now - WINDOW_MS;
    const last = this.samples[this.samples.length - 1];
    this.el.replaceChildren(
      h("p", { class: "muted" },
        h("span", { "data-test": "ops-streams" }, `${formatCount(last.streamsOpen)} event and subscribe streams open`), " · ",
        h("span", { "data-test": "ops-transactions" }, `${formatCount(last.txOpen)} interactive transactions open`), " · ",
        `sampled ${this.samples.length} time${this.samples.length === 1 ? "" : "s"}`),
      h("div", { class: "charts" },
        lineChart("requests", "Requests per second, by code", d.requests, from, now, (v) => v.toFixed(1)),
        lineChart("latency", "Request latency (ms): mean and p99", d.latency, from, now, (v) => v.toFixed(v < 1 ? 3 : v < 10 ? 2 : 0)),
        lineChart("commits", "Commits per second", d.commits, from, now, (v) => v.toFixed(1)),
        lineChart("position", "Change log position", d.position, from, now, (v) => formatCount(v)),
        lineChart("lag", "Readers' lag (positions behind the log's end)", d.lag, from, now, (v) => formatCount(v))));
  }
}

// parseMetrics reads the Prometheus text format: one {name, labels,
// value} per sample line (comments and blank lines skipped).
export function parseMetrics(text) {
  const out = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    let i = 0;
    while (i < line.length && line[i] !== "{" && line[i] !== " " && line[i] !== "\t") i++;
    const name = line.slice(0, i);
    const labels = {};
    if (line[i] === "{") {
      i++;
      while (i < line.length && line[i] !== "}") {
        const eq = line.indexOf("=", i);
        if (eq < 0) break;
        const key = line.slice(i, eq).trim().replace(/^,/, "").trim();
        i = eq + 1;
        if (line[i] !== "\"") break;
        i++;
        let v = "";
        while (i < line.length && line[i] !== "\"") {
          if (line[i] === "\\" && i + 1 < line.length) {
            i++;
            v += line[i] === "n" ? "\n" : line[i];
          } else v += line[i];
          i++;
        }
        i++; // the closing quote
        labels[key] = v;
        while (i < line.length && (line[i] === "," || line[i] === " ")) i++;
      }
      i++; // the closing brace
    }
    const value = line.slice(i).trim().split(/\s+/)[0];
    out.push({ name, labels, value: numberOf(value) });
  }
  return out;
}

function numberOf(s) {
  if (s === "+Inf" || s === "Inf") return Infinity;
  if (s === "-Inf") return -Infinity;
  return Number(s);
}

// summarize keeps of a scrape only what the charts need.
function summarize(samples, t) {
  const s = { t, byCode: {}, durSum: 0, durCount: 0, buckets: {}, commits: 0, position: NaN, lag: {}, streamsOpen: 0, txOpen: 0 };
  for (const m of samples) {
    switch (m.name) {
      case "folio_requests_total":
        s.byCode[m.labels.code] = (s.byCode[m.labels.code] || 0) + m.value;
        break;
      case "folio_request_duration_seconds_sum":
        s.durSum += m.value;
        break;
      case "folio_request_duration_seconds_count":
        s.durCount += m.value;
        break;
      case "folio_request_duration_seconds_bucket":
        s.buckets[m.labels.le] = (s.buckets[m.labels.le] || 0) + m.value;
        break;
      case "folio_kv_commits_total":
        s.commits += m.value;
        break;
      case "folio_changelog_position":
        s.position = m.value;
        break;
      case "folio_changelog_reader_lag_positions":
        s.lag[m.labels.reader || "reader"] = m.value;
        break;
      case "folio_streams_open":
        s.streamsOpen = m.value;
        break;
      case "folio_transactions_open":
        s.txOpen = m.value;
        break;
    }
  }
  return s;
}

// derive turns the samples into the charts' series: counters become
// rates between consecutive samples (a counter that went down, the server
// restarted, gives no point), gauges are drawn as they are.
function derive(samples) {
  const codes = new Set();
  const readers = new Set();
  for (const s of samples) {
    Object.keys(s.byCode).forEach((c) => codes.add(c));
    Object.keys(s.lag).forEach((r) => readers.add(r));
  }
  const requests = [...codes].sort(codeOrder).map((code) => ({ name: code, points: [] }));
  const mean = { name: "mean", points: [] };
  const p99 = { name: "p99", points: [] };
  const commits = { name: "commits/s", points: [] };
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1];
    const b = samples[i];
    const dt = (b.t - a.t) / 1000;
    if (dt <= 0) continue;
    for (const r of requests) {
      const d = (b.byCode[r.name] || 0) - (a.byCode[r.name] || 0);
      if (d >= 0) r.points.push([b.t, d / dt]);
    }
    const dc = b.durCount - a.durCount;
    if (dc > 0) {
      mean.points.push([b.t, ((b.durSum - a.durSum) / dc) * 1000]);
      const q = quantile(0.99, a.buckets, b.buckets);
      if (Number.isFinite(q)) p99.points.push([b.t, q * 1000]);
    } else if (dc === 0) {
      mean.points.push([b.t, 0]);
      p99.points.push([b.t, 0]);
    }
    const dk = b.commits - a.commits;
    if (dk >= 0) commits.points.push([b.t, dk / dt]);
  }
  const position = { name: "position", points: samples.filter((s) => Number.isFinite(s.position)).map((s) => [s.t, s.position]) };
  const lag = [...readers].sort().map((r) => ({ name: r, points: samples.filter((s) => r in s.lag).map((s) => [s.t, s.lag[r]]) }));
  return { requests, latency: [mean, p99], commits: [commits], position: [position], lag };
}

// codeOrder puts OK first, then the error codes by name.
function codeOrder(a, b) {
  if (a === "OK") return -1;
  if (b === "OK") return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

// quantile estimates the q-quantile of the calls between two samples of
// the duration histogram, as Prometheus's histogram_quantile does: the
// bucket it falls in, interpolated linearly within it.
function quantile(q, before, after) {
  const bounds = Object.keys(after).map((le) => ({ le, upper: numberOf(le) })).sort((x, y) => x.upper - y.upper);
  const counts = bounds.map((b) => (after[b.le] || 0) - (before[b.le] || 0));
  const total = counts[counts.length - 1];
  if (!(total > 0)) return NaN;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (let i = 0; i < bounds.length; i++) {
    if (counts[i] >= rank) {
      const upper = bounds[i].upper;
      if (!Number.isFinite(upper)) return lower; // beyond the last bound: its bound is all we know
      const inBucket = counts[i] - below;
      return inBucket > 0 ? lower + (upper - lower) * ((rank - below) / inBucket) : upper;
    }
    lower = bounds[i].upper;
    below = counts[i];
  }
  return lower;
}

// The charts: SVG, in a fixed box scaled by its viewBox.
const SVG = "http://www.w3.org/2000/svg";
const W = 360;
const H = 120;
const PAD = { left: 44, right: 6, top: 8, bottom: 18 };

function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  for (const c of children) el.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
  return el;
}

// lineChart draws series of [time ms, value] points over [from, to].
function lineChart(name, title, series, from, to, fmt) {
  let max = 0;
  let points = 0;
  for (const s of series) {
    for (const [, v] of s.points) if (Number.isFinite(v) && v > max) max = v;
    points += s.points.length;
  }
  const top = niceCeiling(max);
  const x = (t) => PAD.left + ((t - from) / (to - from)) * (W - PAD.left - PAD.right);
  const y = (v) => H - PAD.bottom - (v / top) * (H - PAD.top - PAD.bottom);

  const plot = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart-svg", role: "img", "aria-label": title });
  for (const v of [0, top / 2, top]) {
    plot.append(svg("line", { x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v), class: "grid-line" }),
      svg("text", { x: PAD.left - 4, y: y(v) + 4, class: "axis-label end" }, fmt(v)));
  }
  plot.append(svg("text", { x: PAD.left, y: H - 4, class: "axis-label" }, "−5 min"),
    svg("text", { x: W - PAD.right, y: H - 4, class: "axis-label end" }, "now"));
  series.forEach((s, i) => {
    const pts = s.points.filter(([t, v]) => t >= from && Number.isFinite(v));
    if (pts.length === 0) return;
    const line = pts.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
    plot.append(pts.length === 1
      ? svg("circle", { cx: x(pts[0][0]), cy: y(pts[0][1]), r: 2, class: `series-dot c${i % 6}` })
      : svg("polyline", { points: line, class: `series-line c${i % 6}` }));
  });

  const now = series.map((s, i) => {
    const last = s.points[s.points.length - 1];
    return h("span", { class: "legend-item" }, h("span", { class: `swatch c${i % 6}` }), `${s.name} `, h("strong", {}, last ? fmt(last[1]) : "–"));
  });
  return h("figure", { class: "chart", "data-test": "chart", "data-chart": name, "data-points": String(points) },
    h("figcaption", {}, title),
    plot,
    h("div", { class: "legend", "data-test": "chart-now" }, points === 0 ? h("span", { class: "muted" }, "waiting for a second sample…") : now));
}

// niceCeiling rounds a chart's top up to 1, 2 or 5 times a power of ten.
function niceCeiling(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

// fill puts children in el in place of what it held, leaving out the
// absent ones (null, undefined, false), as h does.
function fill(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}

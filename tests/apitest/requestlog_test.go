package apitest

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
)

// The request log (issue 17): a line per failed request at info level (a
// 5xx at error), every request's with LogRequests, slow ones at warn with
// their query plans, each with its request id, which the answer's
// X-Request-Id header carries too.

// logLine is a JSON log line, numbers kept as json.Number.
type logLine map[string]any

// jsonLogs is a node's log, in JSON, at info level and above.
func jsonLogs() (*lockedBuffer, *slog.Logger) {
	logs := &lockedBuffer{}
	return logs, slog.New(slog.NewJSONHandler(logs, nil))
}

// requestLines returns the request log's lines for a request id.
func requestLines(t testing.TB, logs *lockedBuffer, id string) []logLine {
	t.Helper()
	var out []logLine
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l logLine
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.UseNumber()
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("a log line that is not JSON: %s", sc.Text())
		}
		if l["msg"] == "request" && l["request_id"] == id {
			out = append(out, l)
		}
	}
	return out
}

// requestLine waits for a request's one line: the server writes it after
// the answer has gone.
func requestLine(t testing.TB, logs *lockedBuffer, id string) logLine {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		lines := requestLines(t, logs, id)
		switch {
		case len(lines) == 1:
			return lines[0]
		case len(lines) > 1:
			t.Fatalf("request %s logged %d times: %v", id, len(lines), lines)
		case time.Now().After(deadline):
			t.Fatalf("no log line for request %s in:\n%s", id, logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// requestID is the id an answer carries.
func requestID(t testing.TB, r *response) string {
	t.Helper()
	id := r.header.Get("X-Request-Id")
	if id == "" {
		t.Fatalf("an answer without X-Request-Id: %s", r)
	}
	return id
}

// wantFields checks a log line's fields; a json.Number compares by its
// text.
func wantFields(t testing.TB, l logLine, want map[string]any) {
	t.Helper()
	for k, v := range want {
		got := l[k]
		if n, ok := got.(json.Number); ok {
			got = n.String()
		}
		if got != v {
			t.Errorf("log field %s = %v (%T), want %v; line %v", k, l[k], l[k], v, l)
		}
	}
}

func TestRequestLogFailures(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		logs, log := jsonLogs()
		c := startServer(t, b.Open(t), node.DefaultConfigWith(func(nc *node.Config) {
			nc.Logger = log
			nc.Ops.SlowRequest = -1
		}))

		// A request that succeeds is not logged at info level.
		ok := c.ok(t, "GET", "/v1/health", "")
		okID := requestID(t, ok)

		// A client's error: info level, with what happened.
		missing := c.do(t, "POST", "/v1/databases/nope/describe", "")
		if missing.status != http.StatusNotFound {
			t.Fatalf("describe of a missing database: %s", missing)
		}
		l := requestLine(t, logs, requestID(t, missing))
		wantFields(t, l, map[string]any{"level": "INFO", "transport": "http", "method": "POST",
			"path": "/v1/databases/nope/describe", "status": "404", "code": "NOT_FOUND",
			"bytes_in": "0", "bytes_out": strconv.Itoa(len(missing.body))})
		if _, ok := l["duration"]; !ok {
			t.Errorf("no duration: %v", l)
		}

		// No route: logged too, with its code.
		noRoute := c.do(t, "POST", "/v1/nowhere", "")
		wantFields(t, requestLine(t, logs, requestID(t, noRoute)), map[string]any{"level": "INFO", "status": "404", "code": "NOT_FOUND"})

		// A body that is not JSON: its bytes are counted.
		body := `{"schema":`
		bad := c.do(t, "POST", "/v1/databases/db1/collections/c/createOrUpdate", body)
		wantFields(t, requestLine(t, logs, requestID(t, bad)), map[string]any{"level": "INFO", "status": "400", "code": "INVALID_ARGUMENT", "bytes_in": strconv.Itoa(len(body))})

		// The server's fault (here: a call it does not implement, 501) is
		// logged at error level.
		unbuilt := c.do(t, "GET", "/v1/observability/metrics/x", "")
		if unbuilt.status != http.StatusNotImplemented {
			t.Fatalf("an unbuilt call: %s", unbuilt)
		}
		wantFields(t, requestLine(t, logs, requestID(t, unbuilt)), map[string]any{"level": "ERROR", "status": "501", "code": "UNIMPLEMENTED"})

		if lines := requestLines(t, logs, okID); len(lines) != 0 {
			t.Errorf("a request that succeeded was logged at info level: %v", lines)
		}
	})
}

func TestRequestIDs(t *testing.T) {
	logs, log := jsonLogs()
	c := startServer(t, backendtest.OpenPebble(t), node.DefaultConfigWith(func(nc *node.Config) {
		nc.Logger = log
		nc.Ops.LogRequests = true
	}))
	send := func(id string) *response {
		req, err := http.NewRequest("GET", c.base+"/v1/health", nil)
		if err != nil {
			t.Fatal(err)
		}
		if id != "" {
			req.Header.Set("X-Request-Id", id)
		}
		return c.doRequest(t, req)
	}
	// A client's (or a proxy's) id follows the request into the log.
	if got := requestID(t, send("proxy-42.a:b_c")); got != "proxy-42.a:b_c" {
		t.Errorf("the client's request id was replaced by %q", got)
	}
	requestLine(t, logs, "proxy-42.a:b_c")
	// One that could garble a log or a header is replaced, as is none.
	seen := map[string]bool{}
	for _, id := range []string{"", "has space", "line\tbreak", strings.Repeat("x", 65), "ünïcode"} {
		got := requestID(t, send(id))
		if got == id || seen[got] || len(got) != 16 {
			t.Errorf("request id %q answered with %q", id, got)
		}
		seen[got] = true
		requestLine(t, logs, got)
	}
}

func TestRequestLogEveryRequest(t *testing.T) {
	logs, log := jsonLogs()
	c := startServer(t, backendtest.OpenPebble(t), node.DefaultConfigWith(func(nc *node.Config) {
		nc.Logger = log
		nc.Ops.LogRequests = true
		nc.Ops.SlowRequest = -1
	}))
	c.createDB(t, "db1")
	body := `{"schema":` + stockSchema + `}`
	r := c.ok(t, "POST", "/v1/databases/db1/collections/items/createOrUpdate", body)
	l := requestLine(t, logs, requestID(t, r))
	wantFields(t, l, map[string]any{"level": "INFO", "status": "200", "bytes_in": strconv.Itoa(len(body)), "bytes_out": strconv.Itoa(len(r.body))})
	if _, ok := l["code"]; ok {
		t.Errorf("a request that succeeded logged with a code: %v", l)
	}
	if _, ok := l["slow"]; ok {
		t.Errorf("a request logged as slow with the slow log off: %v", l)
	}
}

// A request slower than the threshold (here: any) is logged at warn level
// with the plans its reads ran; a stream, long by design, is not.
func TestSlowRequestLogsPlans(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		logs, log := jsonLogs()
		c := startServer(t, b.Open(t), node.DefaultConfigWith(func(nc *node.Config) {
			nc.Logger = log
			nc.Ops.SlowRequest = time.Nanosecond
		}))
		c.createDB(t, "db1")
		c.createColl(t, "db1", "items", stockSchema)
		c.insert(t, "db1", "items", `{"id":1,"name":"a","qty":3}`, `{"id":2,"name":"b","qty":5}`)
		r := c.ok(t, "POST", "/v1/databases/db1/collections/items/documents/read", `{"filter":{"qty":{"$gt":4}}}`)
		l := requestLine(t, logs, requestID(t, r))
		wantFields(t, l, map[string]any{"level": "WARN", "slow": true})
		plans, _ := l["plans"].([]any)
		if len(plans) != 1 || !strings.HasPrefix(plans[0].(string), "items: ") || !strings.Contains(plans[0].(string), "qty") {
			t.Errorf("plans %v, want the read's plan on qty", l["plans"])
		}
		// The same read's explain names the same plan.
		ex := c.okObject(t, "POST", "/v1/databases/db1/collections/items/documents/explain", `{"filter":{"qty":{"$gt":4}}}`)
		if want := "items: " + str(t, ex, "plan"); len(plans) == 1 && plans[0] != want {
			t.Errorf("logged plan %q, explain says %q", plans[0], want)
		}
	})
}

// stockSchema has an integer field to filter on.
const stockSchema = `{"title":"items","primary_key":["id"],"properties":{"id":{"type":"integer"},"name":{"type":"string"},"qty":{"type":"integer"}}}`

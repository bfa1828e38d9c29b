package apitest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
	"github.com/foliodb/folio/tests/servetest"
)

func TestMain(m *testing.M) { os.Exit(servetest.Main(m)) }

// eachBackend runs fn once per backend, as a subtest with a server of its
// own on an empty store.
func eachBackend(t *testing.T, fn func(t *testing.T, c *client)) {
	t.Helper()
	eachBackendWith(t, node.DefaultConfig(), fn)
}

// eachBackendWith is eachBackend with server settings (Store and Addr are
// filled in). Besides a subtest per backend, on the default HTTP/1.1
// server (fasthttp), it runs one on net/http's (--http1-server net/http)
// over the embedded engine: the test sees no difference between them.
func eachBackendWith(t *testing.T, cfg node.Config, fn func(t *testing.T, c *client)) {
	t.Helper()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		fn(t, startServer(t, b.Open(t), cfg))
	})
	t.Run("pebble-net-http", func(t *testing.T) {
		t.Parallel()
		std := cfg
		std.HTTP1Server = node.HTTP1NetHTTP
		fn(t, startServer(t, backendtest.OpenPebble(t), std))
	})
}

// startServer runs a node over store on a free loopback port until the
// end of the test.
func startServer(t *testing.T, store kv.Store, cfg node.Config) *client {
	t.Helper()
	n := startNode(t, store, cfg)
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Errorf("shut the node down: %v", err)
		}
	})
	return newClient("http://" + n.Addr().String())
}

// startNode starts a node over store on a free loopback port.
func startNode(t *testing.T, store kv.Store, cfg node.Config) *node.Node {
	t.Helper()
	cfg.Store = store
	cfg.Addr = "127.0.0.1:0"
	cfg.ShutdownTimeout = 10 * time.Second
	n, err := node.Start(context.Background(), cfg)
	if err != nil {
		store.Close()
		t.Fatalf("start a node: %v", err)
	}
	return n
}

// client talks to one server. Its methods take the *testing.T of the
// (sub)test that calls them, so that failures land in the right test.
type client struct {
	base  string
	hc    *http.Client
	token string // sent as a bearer token, if set
}

// as is the client sending token as its bearer token.
func (c *client) as(token string) *client {
	cc := *c
	cc.token = token
	return &cc
}

func newClient(base string) *client {
	return &client{base: base, hc: &http.Client{Timeout: 30 * time.Second}}
}

// response is an HTTP response read whole.
type response struct {
	status  int
	header  http.Header
	body    []byte
	chunked bool // sent with Transfer-Encoding: chunked
}

func (r *response) String() string { return fmt.Sprintf("%d %s", r.status, r.body) }

// send makes one request; an empty body sends none. It does not touch a
// test, so goroutines may call it.
func (c *client) send(method, path, body string) (*response, error) {
	contentType := ""
	if body != "" {
		contentType = "application/json"
	}
	return c.sendWithType(method, path, contentType, body)
}

// sendWithType is send with the given Content-Type ("" sends none).
func (c *client) sendWithType(method, path, contentType, body string) (*response, error) {
	var rd io.Reader = http.NoBody
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return c.roundTrip(req)
}

func (c *client) roundTrip(req *http.Request) (*response, error) {
	if c.token != "" && req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the response: %w", req.Method, req.URL.Path, err)
	}
	return &response{status: res.StatusCode, header: res.Header, body: b, chunked: slices.Contains(res.TransferEncoding, "chunked")}, nil
}

// sendTyped is do with the given Content-Type ("" sends none).
func (c *client) sendTyped(t testing.TB, method, path, contentType, body string) *response {
	t.Helper()
	r, err := c.sendWithType(method, path, contentType, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// doRequest sends a request made by the test.
func (c *client) doRequest(t testing.TB, req *http.Request) *response {
	t.Helper()
	r, err := c.roundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	return r
}

// do makes a request and returns the response whatever its status.
func (c *client) do(t testing.TB, method, path, body string) *response {
	t.Helper()
	r, err := c.send(method, path, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// ok makes a request that must succeed with a JSON body.
func (c *client) ok(t testing.TB, method, path, body string) *response {
	t.Helper()
	r := c.do(t, method, path, body)
	if r.status != http.StatusOK {
		t.Fatalf("%s %s %s: got %s, want 200", method, path, body, r)
	}
	wantJSONContentType(t, r)
	return r
}

// okObject is ok returning the body as a JSON object.
func (c *client) okObject(t testing.TB, method, path, body string) map[string]any {
	t.Helper()
	return c.ok(t, method, path, body).object(t)
}

// object decodes the body as one JSON object, numbers kept as json.Number.
func (r *response) object(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || dec.More() {
		t.Fatalf("response body is not one JSON object (%v): %s", err, r.body)
	}
	return m
}

func wantJSONContentType(t testing.TB, r *response) {
	t.Helper()
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
}

// anyMessage in wantError accepts any non-empty message, for errors whose
// text the reference does not fix.
const anyMessage = "\x00any"

// wantError checks that r is the API's JSON error with the given status,
// code and message, and nothing else. It returns the message.
func wantError(t testing.TB, r *response, status int, code, message string) string {
	t.Helper()
	got, ok := errorOf(t, r)
	if !ok {
		return ""
	}
	if r.status != status || got.Code != code || (message != anyMessage && got.Message != message) {
		want := message
		if message == anyMessage {
			want = "<any>"
		}
		t.Errorf("got %d %s %q\nwant %d %s %q", r.status, got.Code, got.Message, status, code, want)
	}
	return got.Message
}

// wantClientError checks that r is a 4xx with the API's JSON error body.
func wantClientError(t testing.TB, r *response) {
	t.Helper()
	if _, ok := errorOf(t, r); ok && (r.status < 400 || r.status > 499) {
		t.Errorf("got %s, want a 4xx error", r)
	}
}

type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Retry   *struct {
		Delay int64 `json:"delay"`
	} `json:"retry"`
}

// errorOf decodes the API's error body {"error":{"code","message"}} from r,
// reporting a test error if r is not one.
func errorOf(t testing.TB, r *response) (apiError, bool) {
	t.Helper()
	var body struct {
		Error apiError `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || dec.More() || body.Error.Code == "" || body.Error.Message == "" {
		t.Errorf("got %s: not a JSON error body (%v)", r, err)
		return apiError{}, false
	}
	wantJSONContentType(t, r)
	return body.Error, true
}

// Paths of the API.
func dbPath(db, op string) string { return "/v1/databases/" + db + "/" + op }
func collPath(db, coll, op string) string {
	return "/v1/databases/" + db + "/collections/" + coll + "/" + op
}
func docPath(db, coll, op string) string { return collPath(db, coll, "documents/"+op) }

func (c *client) createDB(t testing.TB, db string) {
	t.Helper()
	c.ok(t, "POST", dbPath(db, "create"), "")
}

// createColl creates or updates a collection with the schema (JSON).
func (c *client) createColl(t testing.TB, db, coll, schema string) {
	t.Helper()
	c.ok(t, "POST", collPath(db, coll, "createOrUpdate"), `{"schema":`+schema+`}`)
}

// insert inserts documents (JSON objects) and returns the response's keys.
func (c *client) insert(t testing.TB, db, coll string, docs ...string) []string {
	t.Helper()
	return keysOf(t, c.ok(t, "POST", docPath(db, coll, "insert"), `{"documents":[`+strings.Join(docs, ",")+`]}`))
}

// keysOf returns the keys of an insert or replace response, each as the
// JSON text sent.
func keysOf(t testing.TB, r *response) []string {
	t.Helper()
	var body struct{ Keys []json.RawMessage }
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatalf("keys of %s: %v", r, err)
	}
	out := make([]string, len(body.Keys))
	for i, k := range body.Keys {
		out[i] = string(k)
	}
	return out
}

// item is one chunk of a read stream.
type item struct {
	line        string          // the whole line, without its newline
	data        json.RawMessage // the document as sent
	createdAt   string
	updatedAt   string
	resumeToken string
}

// read runs a read request and returns its items, checking the stream's
// framing: 200, JSON content type, one {"result":{...}} object per line,
// each line ending in a newline, nothing else.
func (c *client) read(t testing.TB, db, coll, body string) []item {
	t.Helper()
	r := c.ok(t, "POST", docPath(db, coll, "read"), body)
	return parseStream(t, r)
}

func parseStream(t testing.TB, r *response) []item {
	t.Helper()
	if len(r.body) > 0 && !bytes.HasSuffix(r.body, []byte("\n")) {
		t.Fatalf("stream does not end with a newline: %q", r.body)
	}
	var items []item
	sc := bufio.NewScanner(bytes.NewReader(r.body))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Text()
		var chunk struct {
			Result struct {
				Data     json.RawMessage `json:"data"`
				Metadata struct {
					CreatedAt string `json:"created_at"`
					UpdatedAt string `json:"updated_at"`
				} `json:"metadata"`
				ResumeToken string `json:"resume_token"`
			} `json:"result"`
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&chunk); err != nil || dec.More() || !strings.HasPrefix(line, `{"result":{"data":`) {
			t.Fatalf("stream line is not a {\"result\":...} read item (%v): %s", err, line)
		}
		res := chunk.Result
		if res.Metadata.CreatedAt == "" || res.ResumeToken == "" {
			t.Fatalf("read item without created_at or resume_token: %s", line)
		}
		items = append(items, item{line: line, data: res.Data, createdAt: res.Metadata.CreatedAt, updatedAt: res.Metadata.UpdatedAt, resumeToken: res.ResumeToken})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return items
}

// docs returns the documents read with body, as the exact bytes stored.
func (c *client) docs(t testing.TB, db, coll, body string) []string {
	t.Helper()
	var out []string
	for _, it := range c.read(t, db, coll, body) {
		out = append(out, string(it.data))
	}
	return out
}

// all returns every document of a collection, in key order.
func (c *client) all(t testing.TB, db, coll string) []string {
	t.Helper()
	return c.docs(t, db, coll, `{"filter":{}}`)
}

// snapshot returns everything a client can see of the server's data: the
// databases, their descriptions (schemas and sizes included) and every
// document with its metadata. Two equal snapshots mean nothing changed.
func (c *client) snapshot(t testing.TB) string {
	t.Helper()
	var b strings.Builder
	var list struct {
		Databases []struct {
			DB string `json:"db"`
		} `json:"databases"`
	}
	r := c.ok(t, "POST", "/v1/databases/list", "")
	b.Write(r.body)
	if err := json.Unmarshal(r.body, &list); err != nil {
		t.Fatal(err)
	}
	for _, d := range list.Databases {
		var desc struct {
			Collections []struct {
				Collection string `json:"collection"`
			} `json:"collections"`
		}
		r := c.ok(t, "POST", dbPath(d.DB, "describe"), "")
		b.Write(r.body)
		if err := json.Unmarshal(r.body, &desc); err != nil {
			t.Fatal(err)
		}
		for _, coll := range desc.Collections {
			b.Write(c.ok(t, "POST", docPath(d.DB, coll.Collection, "read"), `{"filter":{}}`).body)
		}
	}
	return b.String()
}

// parseTime parses an API timestamp, which must be RFC 3339 in UTC with
// nanosecond precision.
func parseTime(t testing.TB, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("timestamp %q is not RFC 3339: %v", s, err)
	}
	if !strings.HasSuffix(s, "Z") {
		t.Errorf("timestamp %q is not in UTC", s)
	}
	if s != ts.Format(time.RFC3339Nano) {
		t.Errorf("timestamp %q is not in RFC 3339 with nanoseconds (want the form %q)", s, ts.Format(time.RFC3339Nano))
	}
	return ts
}

// str returns m[key] as a string, failing if it is not one.
func str(t testing.TB, m map[string]any, key string) string {
	t.Helper()
	s, ok := m[key].(string)
	if !ok {
		t.Fatalf("%q is %#v, want a string, in %v", key, m[key], m)
	}
	return s
}

// obj returns m[key] as an object, failing if it is not one.
func obj(t testing.TB, m map[string]any, key string) map[string]any {
	t.Helper()
	o, ok := m[key].(map[string]any)
	if !ok {
		t.Fatalf("%q is %#v, want an object, in %v", key, m[key], m)
	}
	return o
}

// equalStrings fails the test if got and want differ.
func equalStrings(t testing.TB, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

package apitest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
	"github.com/foliodb/folio/tests/servetest"
)

// Bad input is answered with a 4xx that names what is wrong, and changes
// nothing: never a 500, never a request half-applied or silently altered.
func TestBadInputAnsweredAndNothingChanged(t *testing.T) {
	users := func(op string) string { return docPath("db1", "users", op) }
	const prefix = "json schema validation failed for field "
	cases := []struct {
		name, method, path, body string
		status                   int
		code, message            string
	}{
		// Numbers beyond float64's range name their field.
		{"insert: number beyond float64", "POST", users("insert"), `{"documents":[{"id":10,"score":1e400}]}`,
			400, "INVALID_ARGUMENT", prefix + "'score' reason ''1e400' is out of the range of a 64-bit floating point number'"},
		{"replace: number beyond float64", "PUT", users("replace"), `{"documents":[{"id":1,"score":-2e308}]}`,
			400, "INVALID_ARGUMENT", prefix + "'score' reason ''-2e308' is out of the range of a 64-bit floating point number'"},
		{"update: $set of a number beyond float64", "PUT", users("update"), `{"filter":{"id":1},"fields":{"$set":{"score":1e400}}}`,
			400, "INVALID_ARGUMENT", prefix + "'score' reason ''1e400' is out of the range of a 64-bit floating point number'"},

		// A member given twice in a request is refused, not resolved.
		{"insert: documents twice", "POST", users("insert"), `{"documents":[{"id":6}],"documents":[{"id":7}]}`,
			400, "INVALID_ARGUMENT", "member 'documents' is given twice in the request"},
		{"update: filter twice", "PUT", users("update"), `{"filter":{"id":1},"fields":{"$set":{"name":"x"}},"filter":{"id":2}}`,
			400, "INVALID_ARGUMENT", "member 'filter' is given twice in the request"},
		{"delete: filter twice, escaped", "DELETE", users("delete"), `{"filter":{"id":1},"filt\u0065r":{"id":2}}`,
			400, "INVALID_ARGUMENT", "member 'filter' is given twice in the request"},
		{"create collection: schema twice", "POST", collPath("db1", "other", "createOrUpdate"),
			`{"schema":{"title":"other","properties":{"id":{"type":"integer"}}},"schema":{"title":"other","properties":{"id":{"type":"string"}}}}`,
			400, "INVALID_ARGUMENT", "member 'schema' is given twice in the request"},
		{"read: an option twice", "POST", users("read"), `{"filter":{},"options":{"limit":1,"limit":2}}`,
			400, "INVALID_ARGUMENT", "member 'options.limit' is given twice in the request"},
	}
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		c.insert(t, "db1", "users", `{"id":1,"name":"a","score":1.5}`, `{"id":2,"name":"b"}`)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				before := c.snapshot(t)
				wantError(t, c.do(t, tc.method, tc.path, tc.body), tc.status, tc.code, tc.message)
				if after := c.snapshot(t); after != before {
					t.Errorf("the request changed the data:\nbefore %s\nafter  %s", before, after)
				}
			})
		}
	})
}

// 64-bit integer options may come as JSON strings, as proto3's JSON
// mapping writes them and as the original's gateway accepted them.
func TestInt64OptionsAsStrings(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		c.insert(t, "db1", "users", `{"id":1}`, `{"id":2}`, `{"id":3}`)
		for _, tc := range []struct{ options, want string }{
			{`{"limit":"1"}`, `{"id":1}`},
			{`{"limit":"2","skip":"1"}`, `{"id":2} {"id":3}`},
			{`{"skip":"2"}`, `{"id":3}`},
			{`{"limit":1,"skip":"1"}`, `{"id":2}`},
		} {
			got := strings.Join(c.docs(t, "db1", "users", `{"filter":{},"options":`+tc.options+`}`), " ")
			if got != tc.want {
				t.Errorf("read with options %s: %s, want %s", tc.options, got, tc.want)
			}
		}
		for _, bad := range []string{`{"limit":"one"}`, `{"limit":"1.5"}`, `{"skip":"-"}`, `{"limit":"9223372036854775808"}`} {
			wantError(t, c.do(t, "POST", docPath("db1", "users", "read"), `{"filter":{},"options":`+bad+`}`), 400, "INVALID_ARGUMENT", anyMessage)
		}

		// Update and delete take their limit as a string too.
		r := c.ok(t, "PUT", docPath("db1", "users", "update"), `{"filter":{"id":{"$gte":1}},"fields":{"$set":{"name":"x"}},"options":{"limit":"2"}}`)
		if n := intOf(t, r.object(t)["modified_count"]); n != 2 {
			t.Errorf("update with limit \"2\" modified %d documents, want 2", n)
		}
		if got := len(c.docs(t, "db1", "users", `{"filter":{"name":"x"}}`)); got != 2 {
			t.Errorf("after the update with limit \"2\", %d documents have the new name, want 2", got)
		}
		r = c.ok(t, "DELETE", docPath("db1", "users", "delete"), `{"filter":{"id":{"$gte":1}},"options":{"limit":"1"}}`)
		if n := intOf(t, r.object(t)["modified_count"]); n != 1 {
			t.Errorf("delete with limit \"1\" deleted %d documents, want 1", n)
		}
		if got := len(c.docs(t, "db1", "users", `{"filter":{}}`)); got != 2 {
			t.Errorf("after the delete with limit \"1\", %d documents are left, want 2", got)
		}
		wantError(t, c.do(t, "PUT", docPath("db1", "users", "update"), `{"filter":{"id":{"$gte":1}},"fields":{"$set":{"name":"y"}},"options":{"limit":"two"}}`), 400, "INVALID_ARGUMENT", anyMessage)
		wantError(t, c.do(t, "DELETE", docPath("db1", "users", "delete"), `{"filter":{"id":{"$gte":1}},"options":{"limit":"1.5"}}`), 400, "INVALID_ARGUMENT", anyMessage)
		if got := len(c.docs(t, "db1", "users", `{"filter":{}}`)); got != 2 {
			t.Errorf("a delete with a bad limit changed the collection: %d documents left, want 2", got)
		}

		c.createColl(t, "db1", "msgs", messagesSchema)
		c.ok(t, "POST", collPath("db1", "msgs", "messages/publish"), `{"messages":[{"n":1}],"options":{"partition":"0"}}`)
		wantError(t, c.do(t, "POST", collPath("db1", "msgs", "messages/publish"), `{"messages":[{"n":1}],"options":{"partition":"1"}}`),
			400, "INVALID_ARGUMENT", "Invalid partition number `1`")
		ls := c.openStream(t, collPath("db1", "msgs", "messages/subscribe"), `{"options":{"partitions":["0"]}}`)
		defer ls.close()
		c.ok(t, "POST", collPath("db1", "msgs", "messages/publish"), `{"messages":[{"n":2}]}`)
		// On PostgreSQL "now" is the newest position log readers may read,
		// which can lag a commit just acknowledged: message 1 may come too.
		m := ls.message(t)
		if string(m.Message) == `{"n":1}` {
			m = ls.message(t)
		}
		if string(m.Message) != `{"n":2}` {
			t.Errorf("subscribed with partitions [\"0\"]: got %s, want {\"n\":2}", m.Message)
		}
	})
}

// The calls Folio does not serve yet answer 501 UNIMPLEMENTED, so that a
// client can tell them from paths that do not exist (404).
func TestUnbuiltCallsAnswerUnimplemented(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		for _, tc := range []struct{ method, path, body, message string }{
			{"POST", "/v1/observability/metrics/timeseries/query", `{}`, "metrics queries is not implemented by this server yet"},
		} {
			wantError(t, c.do(t, tc.method, tc.path, tc.body), 501, "UNIMPLEMENTED", tc.message)
		}
		wantError(t, c.do(t, "POST", "/v1/nothing/here", ""), 404, "NOT_FOUND", "Not Found")
	})
}

// A request with a body must say it is JSON: a browser sends a cross-site
// text/plain or form POST without asking first, so accepting those would
// let any web page write to a server its visitor can reach.
func TestRequestsWithABodyMustBeJSON(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		insert := docPath("db1", "users", "insert")
		body := `{"documents":[{"id":1}]}`
		for _, tc := range []struct {
			name, method, path, contentType, body string
			status                                int
			message                               string
		}{
			{"text/plain", "POST", insert, "text/plain", body, 415, "Content-Type must be application/json, not 'text/plain'"},
			{"form", "POST", insert, "application/x-www-form-urlencoded", body, 415, "Content-Type must be application/json, not 'application/x-www-form-urlencoded'"},
			{"multipart", "POST", dbPath("db2", "create"), "multipart/form-data; boundary=x", `--x--`, 415, "Content-Type must be application/json, not 'multipart/form-data; boundary=x'"},
			{"none with a body", "PUT", docPath("db1", "users", "replace"), "", body, 415, "a request with a body must have the header Content-Type: application/json"},
			{"none with a body on delete", "DELETE", dbPath("db1", "drop"), "", `{}`, 415, "a request with a body must have the header Content-Type: application/json"},
			{"JSON with a charset", "POST", insert, "application/json; charset=utf-8", body, 200, ""},
			{"a +json type", "POST", docPath("db1", "users", "read"), "application/vnd.folio+json", `{"filter":{}}`, 200, ""},
			{"no body, no type", "POST", dbPath("db3", "create"), "", "", 200, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				before := c.snapshot(t)
				r := c.sendTyped(t, tc.method, tc.path, tc.contentType, tc.body)
				if tc.status == 200 {
					if r.status != 200 {
						t.Fatalf("got %s, want 200", r)
					}
					return
				}
				wantError(t, r, tc.status, "INVALID_ARGUMENT", tc.message)
				if after := c.snapshot(t); after != before {
					t.Errorf("the request changed the data:\nbefore %s\nafter  %s", before, after)
				}
			})
		}
		// OAuth2's token request is form-encoded by definition: it gets
		// past the check to its endpoint, which reads the form (an unknown
		// application's credentials, refused as such, not as a content type).
		t.Run("form to the token endpoint", func(t *testing.T) {
			r := c.sendTyped(t, "POST", "/v1/auth/token", "application/x-www-form-urlencoded", "grant_type=client_credentials&client_id=app&client_secret=secret")
			wantError(t, r, 401, "UNAUTHENTICATED", "invalid client credentials")
		})
	})
}

// CORS is off unless origins are configured: no page of another site gets
// an answer it may read. With an allowed origin, its preflight is answered
// and its requests carry the header that lets the browser hand them over.
func TestCORS(t *testing.T) {
	preflight := func(t *testing.T, c *client, origin string) *response {
		t.Helper()
		req, err := http.NewRequest("OPTIONS", c.base+dbPath("db1", "create"), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type")
		return c.doRequest(t, req)
	}
	withOrigin := func(t *testing.T, c *client, origin string) *response {
		t.Helper()
		req, err := http.NewRequest("POST", c.base+"/v1/databases/list", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", origin)
		return c.doRequest(t, req)
	}
	t.Run("off by default", func(t *testing.T) {
		c := startServer(t, backendtest.OpenPebble(t), node.DefaultConfig())
		if r := preflight(t, c, "https://evil.example"); r.status == 204 || r.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight without configured origins: %d %v", r.status, r.header)
		}
		if r := withOrigin(t, c, "https://evil.example"); r.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("a cross-origin request got %q", r.header.Get("Access-Control-Allow-Origin"))
		}
	})
	t.Run("configured", func(t *testing.T) {
		c := startServer(t, backendtest.OpenPebble(t), node.DefaultConfigWith(func(nc *node.Config) {
			nc.CORSOrigins = []string{"https://app.example"}
		}))
		r := preflight(t, c, "https://app.example")
		if r.status != 204 || r.header.Get("Access-Control-Allow-Origin") != "https://app.example" ||
			!strings.Contains(r.header.Get("Access-Control-Allow-Headers"), "Content-Type") {
			t.Errorf("preflight of an allowed origin: %d %v", r.status, r.header)
		}
		if r := withOrigin(t, c, "https://app.example"); r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != "https://app.example" {
			t.Errorf("request of an allowed origin: %d %v", r.status, r.header)
		}
		if r := preflight(t, c, "https://evil.example"); r.status == 204 || r.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight of another origin: %d %v", r.status, r.header)
		}
	})
}

// A page of another site can make a browser send a "simple" request (a
// POST without a body, or with text/plain) without asking first: every
// request but GET, HEAD and OPTIONS that names another origin than the
// server's, and one CORS does not allow, is refused with 403 before it
// does anything, whatever its body and content type.
func TestCrossOriginWritesRefused(t *testing.T) {
	c := startServer(t, backendtest.OpenPebble(t), node.DefaultConfigWith(func(nc *node.Config) {
		nc.CORSOrigins = []string{"https://app.example"}
	}))
	c.createDB(t, "db1")
	c.createColl(t, "db1", "users", usersSchema)
	self := c.base // http://127.0.0.1:port
	_, port, _ := strings.Cut(strings.TrimPrefix(self, "http://"), ":")
	send := func(t *testing.T, method, path, origin, contentType, body string) *response {
		t.Helper()
		var rd io.Reader = http.NoBody
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, c.base+path, rd)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", origin)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		return c.doRequest(t, req)
	}
	insert := docPath("db1", "users", "insert")
	for _, tc := range []struct {
		name, method, path, origin, contentType, body string
		refused                                       bool
	}{
		{"no body, text/plain", "POST", dbPath("db2", "create"), "https://evil.example", "text/plain", "", true},
		{"no body, no type", "POST", dbPath("db2", "create"), "https://evil.example", "", "", true},
		{"a JSON body", "POST", insert, "https://evil.example", "application/json", `{"documents":[{"id":7}]}`, true},
		{"delete", "DELETE", dbPath("db1", "drop"), "https://evil.example", "", "", true},
		{"put", "PUT", docPath("db1", "users", "update"), "https://evil.example", "application/json", `{"filter":{"id":1},"fields":{"$set":{"a":1}}}`, true},
		{"a sandboxed page", "POST", dbPath("db2", "create"), "null", "text/plain", "", true},
		{"the same host, another port", "POST", dbPath("db2", "create"), "http://127.0.0.1:1", "", "", true},
		{"the same host and port, another scheme", "POST", dbPath("db2", "create"), "https://127.0.0.1:" + port, "", "", true},
		{"the token endpoint", "POST", "/v1/auth/token", "https://evil.example", "application/x-www-form-urlencoded", "grant_type=client_credentials", true},
		{"a read by GET", "GET", "/v1/health", "https://evil.example", "", "", false},
		{"same origin", "POST", dbPath("db3", "create"), self, "text/plain", "", false},
		{"same origin, a JSON body", "POST", insert, self, "application/json", `{"documents":[{"id":8}]}`, false},
		{"an allowed origin", "POST", dbPath("db5", "create"), "https://app.example", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := c.snapshot(t)
			r := send(t, tc.method, tc.path, tc.origin, tc.contentType, tc.body)
			if !tc.refused {
				if r.status == http.StatusForbidden {
					t.Fatalf("refused: %s", r)
				}
				return
			}
			wantError(t, r, 403, "PERMISSION_DENIED", "cross-origin request refused: the origin '"+tc.origin+"' is not this server's, nor one --cors-origins allows")
			if after := c.snapshot(t); after != before {
				t.Errorf("the request changed the data:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// DNS rebinding: a page of evil.example points its name at the server's
// address, and the browser then takes the server for evil.example's:
// Origin and Host both name evil.example, so the request looks like one of
// the server's own pages. A server that listens on loopback only answers
// only requests that name it (an IP address, localhost, its listen or
// advertise address's host, --allowed-hosts): any other Host is refused
// with 403 before anything else, reads by GET included. One that listens
// beyond loopback, which clients may reach by any name, refuses such a
// browser's request (one with an Origin) as cross-origin, and every
// request that names another host once --allowed-hosts lists its names.
func TestDNSRebindingRefused(t *testing.T) {
	const refusal = "request refused: the host '%s' is not a name of this server (an IP address, localhost, the host of its listen or advertise address, or one --allowed-hosts lists)"
	type request struct {
		name, method, path, host, origin, body string
		refused                                bool
	}
	check := func(t *testing.T, c *client, port string, requests []request) {
		t.Helper()
		for _, tc := range requests {
			t.Run(tc.name, func(t *testing.T) {
				before := c.snapshot(t)
				var body io.Reader = http.NoBody
				if tc.body != "" {
					body = strings.NewReader(tc.body)
				}
				req, err := http.NewRequest(tc.method, c.base+tc.path, body)
				if err != nil {
					t.Fatal(err)
				}
				req.Host = strings.ReplaceAll(tc.host, "PORT", port)
				if tc.origin != "" {
					req.Header.Set("Origin", strings.ReplaceAll(tc.origin, "PORT", port))
				}
				if tc.body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				r := c.doRequest(t, req)
				if !tc.refused {
					if r.status == http.StatusForbidden {
						t.Fatalf("refused: %s", r)
					}
					return
				}
				host, _, _ := strings.Cut(req.Host, ":")
				wantError(t, r, 403, "PERMISSION_DENIED", fmt.Sprintf(refusal, host))
				if after := c.snapshot(t); after != before {
					t.Errorf("the request changed the data:\nbefore %s\nafter  %s", before, after)
				}
			})
		}
	}
	read := docPath("db1", "users", "read")
	insert := docPath("db1", "users", "insert")

	t.Run("on loopback", func(t *testing.T) {
		c := startServer(t, backendtest.OpenPebble(t), node.DefaultConfigWith(func(nc *node.Config) {
			nc.AllowedHosts = []string{"folio.internal"}
			nc.AdvertiseAddr = "node-a.internal:8081"
		}))
		c.createDB(t, "db1")
		c.createColl(t, "db1", "users", usersSchema)
		c.insert(t, "db1", "users", `{"id":1,"name":"secret"}`)
		_, port, _ := strings.Cut(strings.TrimPrefix(c.base, "http://"), ":")
		check(t, c, port, []request{
			{"a rebound page's write", "POST", dbPath("db2", "create"), "evil.example:PORT", "http://evil.example:PORT", "", true},
			{"a rebound page's insert", "POST", insert, "evil.example:PORT", "http://evil.example:PORT", `{"documents":[{"id":7}]}`, true},
			{"a rebound page's read", "POST", read, "evil.example:PORT", "http://evil.example:PORT", `{"filter":{}}`, true},
			{"a read without Origin", "POST", read, "evil.example:PORT", "", `{"filter":{}}`, true},
			{"a read by GET", "GET", "/v1/info", "evil.example:PORT", "", "", true},
			{"the metrics", "GET", "/metrics", "evil.example:PORT", "", "", true},
			{"a preflight", "OPTIONS", insert, "evil.example:PORT", "http://evil.example:PORT", "", true},
			{"a name ending in localhost", "POST", read, "evil-localhost:PORT", "", `{"filter":{}}`, true},
			{"a name under an allowed one", "POST", read, "x.folio.internal:PORT", "", `{"filter":{}}`, true},
			{"127.0.0.1", "POST", read, "127.0.0.1:PORT", "http://127.0.0.1:PORT", `{"filter":{}}`, false},
			{"::1", "POST", read, "[::1]:PORT", "", `{"filter":{}}`, false},
			{"localhost", "POST", dbPath("db3", "create"), "localhost:PORT", "http://localhost:PORT", "", false},
			{"LOCALHOST., no port", "POST", read, "LOCALHOST.", "", `{"filter":{}}`, false},
			{"a name under localhost", "POST", read, "app.localhost:PORT", "http://app.localhost:PORT", `{"filter":{}}`, false},
			{"an allowed host", "POST", dbPath("db4", "create"), "folio.internal:PORT", "http://folio.internal:PORT", "", false},
			{"an allowed host, upper case", "GET", "/metrics", "Folio.Internal:PORT", "", "", false},
			// Where the other nodes send the requests they relay.
			{"the advertised host", "POST", read, "node-a.internal:8081", "", `{"filter":{}}`, false},
		})
	})

	t.Run("beyond loopback", func(t *testing.T) {
		for _, tc := range []struct {
			name    string
			allowed []string
			every   bool // every request that names another host is refused
		}{{"no --allowed-hosts", nil, false}, {"--allowed-hosts", []string{"folio.internal"}, true}} {
			t.Run(tc.name, func(t *testing.T) {
				n, err := node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
					nc.Store = backendtest.OpenPebble(t)
					nc.Addr = "0.0.0.0:0"
					nc.AllowedHosts = tc.allowed
				}))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { n.Close() })
				_, port, _ := net.SplitHostPort(n.Addr().String())
				c := newClient("http://127.0.0.1:" + port)
				c.createDB(t, "db1")
				c.createColl(t, "db1", "users", usersSchema)
				requests := []request{
					{"a rebound page's write", "POST", dbPath("db2", "create"), "evil.example:PORT", "http://evil.example:PORT", "", true},
					{"a rebound page's read", "POST", read, "evil.example:PORT", "http://evil.example:PORT", `{"filter":{}}`, true},
					{"a client's read", "POST", read, "evil.example:PORT", "", `{"filter":{}}`, tc.every},
					{"a read by GET", "GET", "/v1/info", "evil.example:PORT", "", "", tc.every},
					{"an IP address", "POST", read, "192.0.2.7:PORT", "http://192.0.2.7:PORT", `{"filter":{}}`, false},
				}
				if tc.every {
					requests = append(requests, request{"an allowed host", "POST", read, "folio.internal:PORT", "http://folio.internal:PORT", `{"filter":{}}`, false})
				}
				check(t, c, port, requests)
			})
		}
	})
}

// brokenStore fails every transaction with an error that holds what a
// client must never see: an address, a user and a database name.
type brokenStore struct{ kv.Store }

var errBroken = errors.New("dial tcp 10.9.8.7:5432: password authentication failed for user \"secret_user\" (database \"prod_db\")")

func (brokenStore) Begin(context.Context) (kv.Tx, error) { return nil, errBroken }

// A server fault is answered with "internal error" and an id; the details
// go to the log under that id. A client error names what is wrong in the
// API's terms, not in Go's or the store's.
func TestErrorsSayNothingOfTheInside(t *testing.T) {
	t.Run("internal", func(t *testing.T) {
		logs := &servetest.SyncBuffer{}
		store := brokenStore{backendtest.OpenPebble(t)}
		c := startServer(t, store, node.DefaultConfigWith(func(nc *node.Config) {
			nc.Logger = slog.New(slog.NewTextHandler(logs, nil))
		}))
		for _, req := range []struct{ method, path, body string }{
			{"POST", dbPath("db1", "create"), ""},
			{"POST", docPath("db1", "users", "read"), `{"filter":{}}`},
			{"PUT", docPath("db1", "users", "update"), `{"filter":{"id":1},"fields":{"$set":{"a":1}}}`},
		} {
			msg := wantError(t, c.do(t, req.method, req.path, req.body), 500, "INTERNAL", anyMessage)
			id, ok := strings.CutPrefix(msg, "internal error; the server's log has the details under request id ")
			if !ok || len(id) != 16 {
				t.Errorf("%s %s: message %q, want internal error with a request id", req.method, req.path, msg)
				continue
			}
			for _, secret := range []string{"10.9.8.7", "5432", "secret_user", "prod_db", "dial tcp"} {
				if strings.Contains(msg, secret) {
					t.Errorf("the message %q tells %q", msg, secret)
				}
			}
			if line := lineWith(logs, id); !strings.Contains(line, "secret_user") || !strings.Contains(line, req.path) {
				t.Errorf("the log has no details under request id %s: %q", id, line)
			}
		}
	})
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "db1")
		c.createColl(t, "db1", "named", `{"title":"named","properties":{"name":{"type":"string"}},"primary_key":["name"]}`)
		for _, tc := range []struct{ name, method, path, body, message string }{
			{"key too large", "POST", docPath("db1", "named", "insert"), `{"documents":[{"name":"` + strings.Repeat("k", 11000) + `"}]}`, "a primary key is too large for the store ("},
			{"wrong type of option", "POST", docPath("db1", "named", "read"), `{"filter":{},"options":{"limit":true}}`, "malformed JSON request: 'options.limit' must be an integer, not a boolean"},
			{"offset not base64", "POST", docPath("db1", "named", "read"), `{"filter":{},"options":{"offset":"!!"}}`, "malformed JSON request: a bytes value (such as options.offset) is not valid base64"},
			{"not an object", "POST", docPath("db1", "named", "read"), `[1]`, "malformed JSON request: the request must be a JSON object, not an array"},
			{"options not an object", "POST", dbPath("db1", "describe"), `{"options":5}`, "malformed JSON request: 'options' must be an object, not a number"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				msg := wantError(t, c.do(t, tc.method, tc.path, tc.body), 400, "INVALID_ARGUMENT", anyMessage)
				if !strings.HasPrefix(msg, tc.message) {
					t.Errorf("message %q, want it to start with %q", msg, tc.message)
				}
				for _, inside := range []string{"kv:", "Go struct", "int64", "pebblekv", "sqlkv", "json: "} {
					if strings.Contains(msg, inside) {
						t.Errorf("the message %q tells %q", msg, inside)
					}
				}
			})
		}
	})
}

// lineWith returns the first line written to b that holds s.
func lineWith(b *servetest.SyncBuffer, s string) string {
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.Contains(line, s) {
			return line
		}
	}
	return ""
}

// A client that sends its body slowly is cut off at the body timeout, and
// the connection cap keeps a flood of them from using up file descriptors:
// past the cap new connections wait (and the server says so in its log),
// and they are served as soon as the slow ones are cut.
func TestSlowBodiesAgainstTheConnectionCap(t *testing.T) {
	const maxConns = 4
	logs := &servetest.SyncBuffer{}
	c := startServer(t, backendtest.OpenPebble(t), node.DefaultConfigWith(func(nc *node.Config) {
		nc.MaxConnections = maxConns
		nc.BodyTimeout = 500 * time.Millisecond
		nc.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}))
	c.createDB(t, "db1")
	c.hc.CloseIdleConnections() // every slot for the slow bodies
	addr := strings.TrimPrefix(c.base, "http://")
	type answer struct {
		status int
		body   string
		err    error
	}
	answers := make(chan answer, maxConns)
	for range maxConns {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", docPath("db1", "users", "insert"))
		go func() {
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				answers <- answer{err: err}
				return
			}
			b, _ := io.ReadAll(res.Body)
			answers <- answer{status: res.StatusCode, body: string(b)}
		}()
	}
	start := time.Now()
	// Every slot is taken: this one waits for a slow body to be cut.
	health := c.ok(t, "GET", "/v1/health", "")
	if waited := time.Since(start); waited > 10*time.Second {
		t.Errorf("health answered after %v", waited)
	}
	if !strings.Contains(string(health.body), "OK") {
		t.Errorf("health: %s", health)
	}
	for range maxConns {
		select {
		case a := <-answers:
			if a.err != nil || a.status != 400 || !strings.Contains(a.body, "did not arrive within the server's body timeout") {
				t.Errorf("a slow body got %d %s %v, want 400 saying the body did not arrive in time", a.status, a.body, a.err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a slow body was never cut off")
		}
	}
	if lineWith(logs, "connection limit reached") == "" {
		t.Errorf("the server did not log that the connection limit was reached:\n%s", logs.String())
	}
}

// A client that stops reading a response is cut off at the write timeout:
// it holds neither its connection nor its read's transaction any longer.
func TestStalledReaderIsCutOff(t *testing.T) {
	c := startServer(t, backendtest.OpenPebble(t), node.DefaultConfigWith(func(nc *node.Config) {
		nc.WriteTimeout = 300 * time.Millisecond
	}))
	withUsers(t, c)
	var docs []string
	for i := range 16000 {
		docs = append(docs, fmt.Sprintf(`{"id":%d,"name":"%s"}`, i, strings.Repeat("x", 1000)))
	}
	for i := 0; i < len(docs); i += 2000 {
		c.insert(t, "db1", "users", docs[i:i+2000]...)
	}
	// A tiny receive buffer, so that the response (about 17 MB) cannot
	// all sit in the kernel's buffers.
	dialer := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	conn, err := dialer.Dial("tcp", strings.TrimPrefix(c.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"filter":{}}`
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", docPath("db1", "users", "read"), len(body), body)
	time.Sleep(2 * time.Second) // the client reads nothing
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response head: %v", err)
	}
	n, err := io.Copy(io.Discard, res.Body)
	if err == nil {
		t.Fatalf("the stalled client got the whole read (%d bytes): it was not cut off", n)
	}
	// The server is fine, and the collection's reads too.
	if got := len(c.docs(t, "db1", "users", `{"filter":{},"options":{"limit":5}}`)); got != 5 {
		t.Errorf("a read after the cut: %d documents", got)
	}
}

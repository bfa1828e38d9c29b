package apitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/node"
)

// readAccepting reads with the given Accept header.
func (c *client) readAccepting(t *testing.T, path, accept, body string) *response {
	t.Helper()
	req, err := http.NewRequest("POST", c.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	return c.doRequest(t, req)
}

// oneObject parses a read's one-object answer: its documents, each with
// its times, which it checks are RFC 3339, and removes.
func oneObject(t *testing.T, r *response) (docs []string, created, updated []string) {
	t.Helper()
	if r.status != 200 || r.chunked || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("want one application/json object, not chunked: %d %v %.300s", r.status, r.header, r.body)
	}
	var res map[string]map[string][]map[string]any
	if err := json.Unmarshal(r.body, &res); err != nil || len(res) != 1 || len(res["result"]) != 1 {
		t.Fatalf("want {\"result\":{\"data\":[...]}}: %.300s (%v)", r.body, err)
	}
	docs, created, updated = []string{}, []string{}, []string{}
	for _, d := range res["result"]["data"] {
		for _, k := range []string{"_tigris_created_at", "_tigris_updated_at"} {
			v, ok := d[k].(string)
			if !ok {
				continue
			}
			if _, err := time.Parse(time.RFC3339Nano, v); err != nil {
				t.Errorf("%s %q: %v", k, v, err)
			}
			if k == "_tigris_created_at" {
				created = append(created, v)
			} else {
				updated = append(updated, v)
			}
			delete(d, k)
		}
		b, _ := json.Marshal(d)
		docs = append(docs, string(b))
	}
	return docs, created, updated
}

// A read on a 2023 route with Accept: application/json (that value alone)
// is answered as one object of all its documents, their times inline, as
// the final server did; at most 256 without a limit. Anything else
// streams, as do the 2022 routes.
func TestReadAcceptApplicationJSON(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "shop")
		c.createColl(t, "shop", "users", usersSchema23)
		var docs []string
		for i := 1; i <= 300; i++ {
			docs = append(docs, fmt.Sprintf(`{"id":%d,"name":"u%d"}`, i, i))
		}
		c.ok(t, "POST", p23Doc("shop", "users", "insert"), `{"documents":[`+strings.Join(docs, ",")+`]}`)
		c.ok(t, "PUT", p23Doc("shop", "users", "update"), `{"filter":{"id":2},"fields":{"$set":{"name":"two"}}}`)
		read := p23Doc("shop", "users", "read")

		got, created, updated := oneObject(t, c.readAccepting(t, read, "application/json", `{"filter":{"$or":[{"id":1},{"id":2},{"id":3}]},"options":{"limit":2}}`))
		equalStrings(t, "limit 2", got, []string{`{"id":1,"name":"u1"}`, `{"id":2,"name":"two"}`})
		if len(created) != 2 || len(updated) != 1 {
			t.Errorf("times: created %v, updated %v; want both created, the updated one's update", created, updated)
		}
		got, _, _ = oneObject(t, c.readAccepting(t, read, "application/json", `{"filter":{},"fields":{"name":1},"options":{"limit":2,"skip":2}}`))
		equalStrings(t, "skip 2 with a projection", got, []string{`{"name":"u3"}`, `{"name":"u4"}`})
		got, _, _ = oneObject(t, c.readAccepting(t, read, "application/json", `{"filter":{"id":{"$gt":1000}}}`))
		equalStrings(t, "no match", got, []string{})
		if got, _, _ = oneObject(t, c.readAccepting(t, read, "application/json", `{"filter":{}}`)); len(got) != 256 {
			t.Errorf("without a limit: %d documents, want the original's 256", len(got))
		}
		if got, _, _ = oneObject(t, c.readAccepting(t, read, "application/json", `{"filter":{},"options":{"limit":300}}`)); len(got) != 300 {
			t.Errorf("limit 300: %d documents", len(got))
		}
		// An error is the usual error answer.
		wantError(t, c.readAccepting(t, read, "application/json", `{"filter":{"nope":1}}`), 400, "INVALID_ARGUMENT", anyMessage)
		wantError(t, c.readAccepting(t, p23Doc("shop", "none", "read"), "application/json", `{"filter":{}}`), 404, "NOT_FOUND", anyMessage)

		// Other Accept values, and the 2022 routes, stream.
		for _, tc := range []struct{ path, accept string }{{read, "application/json, */*"}, {read, "*/*"}, {docPath("shop", "users", "read"), "application/json"}} {
			r := c.readAccepting(t, tc.path, tc.accept, `{"filter":{},"options":{"limit":2}}`)
			if items := parseStream(t, r); !r.chunked || len(items) != 2 || strings.Contains(string(r.body), "_tigris_created_at") {
				t.Errorf("%s with Accept %q: want a stream of 2, got %s", tc.path, tc.accept, r)
			}
		}
	})
}

// The one-object answer is built whole, so it is bounded like a request
// body: past that, a 400 that says what to do, and nothing else.
func TestReadAcceptApplicationJSONBounded(t *testing.T) {
	eachBackendWith(t, node.DefaultConfigWith(func(nc *node.Config) {
		nc.MaxBodyBytes = 4096
	}), func(t *testing.T, c *client) {
		c.createDB(t, "shop")
		c.createColl(t, "shop", "users", usersSchema23)
		long := strings.Repeat("x", 1000)
		for i := 1; i <= 5; i++ {
			c.ok(t, "POST", p23Doc("shop", "users", "insert"), fmt.Sprintf(`{"documents":[{"id":%d,"name":%q}]}`, i, long))
		}
		read := p23Doc("shop", "users", "read")
		if got, _, _ := oneObject(t, c.readAccepting(t, read, "application/json", `{"filter":{},"options":{"limit":3}}`)); len(got) != 3 {
			t.Errorf("3 documents within the bound: got %d", len(got))
		}
		wantError(t, c.readAccepting(t, read, "application/json", `{"filter":{}}`), 400, "INVALID_ARGUMENT",
			"the documents read exceed 4096 bytes, the most an answer to 'Accept: application/json' holds: ask for fewer (options.limit) or read them as a stream (without that header)")
		// The stream has no such bound.
		if r := c.readAccepting(t, read, "*/*", `{"filter":{}}`); len(parseStream(t, r)) != 5 {
			t.Errorf("the stream: %s", r)
		}
	})
}

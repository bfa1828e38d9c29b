package apitest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
)

// errorCase is one request and the error it must get.
type errorCase struct {
	name, method, path, body string
	status                   int
	code, message            string
}

func (tc errorCase) run(t *testing.T, c *client) {
	t.Run(tc.name, func(t *testing.T) {
		wantError(t, c.do(t, tc.method, tc.path, tc.body), tc.status, tc.code, tc.message)
	})
}

// withErrorFixtures creates what the error cases refer to: database db1
// with users (one document, id 1), typed (formats), keyed (a string key)
// and msgs (a messages collection).
func withErrorFixtures(t *testing.T, c *client) {
	t.Helper()
	withUsers(t, c)
	c.insert(t, "db1", "users", `{"id":1,"name":"a"}`)
	c.createColl(t, "db1", "typed", `{"title":"typed","properties":{"id":{"type":"integer"},"s":{"type":"string"},"b":{"type":"string","format":"byte"},"d":{"type":"string","format":"date-time"},"u":{"type":"string","format":"uuid"}},"primary_key":["id"]}`)
	c.createColl(t, "db1", "keyed", `{"title":"keyed","properties":{"k":{"type":"string"},"v":{"type":"integer"}},"primary_key":["k"]}`)
	c.createColl(t, "db1", "msgs", `{"title":"msgs","collection_type":"messages","properties":{"text":{"type":"string"}}}`)
}

// nameRule is the name rule that the message of a refused name gives.
const nameRule = "a name starts with a letter, then has letters, digits, '_' or '-', 2 to 128 characters in all"

// badName is the message for a refused database or collection name: the
// original's, then the name and the rule, or for a keyword of the client
// languages, that it is one.
func badName(what, name string) string {
	why := nameRule
	if name == "abstract" || name == "yield" {
		why = "'" + name + "' is a keyword of a client language, which clients generate code from"
	}
	return "invalid " + what + " name '" + name + "': " + why
}

// The message table of reference §4, and its other messages. The row of an
// unknown transaction ("session is gone") is in transactions_test.go.
func TestErrorMessages(t *testing.T) {
	const (
		noDB   = "database doesn't exist 'random_database1'"
		noColl = "collection doesn't exist 'random_collection'"
	)
	users := func(op string) string { return docPath("db1", "users", op) }
	var cases []errorCase
	add := func(name, method, path, body string, status int, code, message string) {
		cases = append(cases, errorCase{name, method, path, body, status, code, message})
	}

	// Names: the rule ^[a-zA-Z]+[a-zA-Z0-9_-]+$, language keywords refused.
	for _, n := range []struct{ path, name string }{{"1abc", "1abc"}, {"a", "a"}, {"-ab", "-ab"}, {"a.b", "a.b"}, {"_ab", "_ab"},
		{"abstract", "abstract"}, {"yield", "yield"}, {"a%2Fb", "a/b"}, {"caf%C3%A9", "café"}} {
		add("db name "+n.path, "POST", dbPath(n.path, "create"), "", 400, "INVALID_ARGUMENT", badName("database", n.name))
		add("coll name "+n.path, "POST", collPath("db1", n.path, "createOrUpdate"), `{"schema":{}}`, 400, "INVALID_ARGUMENT", badName("collection", n.name))
	}
	// An empty name reaches the check as "-" (the server's path cleaning
	// keeps the mux from redirecting), which the rule refuses as well.
	for _, r := range allDatabaseRoutes {
		add("empty db name "+r.op, r.method, "/v1/databases//"+r.op, "", 400, "INVALID_ARGUMENT", badName("database", "-"))
		if r.op != "create" {
			add("no db "+r.op, r.method, dbPath("random_database1", r.op), "", 404, "NOT_FOUND", noDB)
		}
	}
	for _, r := range allCollectionRoutes {
		add("empty coll name "+r.op, r.method, "/v1/databases/db1/collections//"+r.op, "", 400, "INVALID_ARGUMENT", badName("collection", "-"))
		add("empty db name "+r.op, r.method, "/v1/databases//collections/users/"+r.op, "", 400, "INVALID_ARGUMENT", badName("database", "-"))
		// The collection name is checked before the database name.
		add("both names bad "+r.op, r.method, collPath("1db", "yield", r.op), "", 400, "INVALID_ARGUMENT", badName("collection", "yield"))
		// The database must exist, then the collection.
		body := validBodies[r.op]
		add("no db "+r.op, r.method, collPath("random_database1", "random_collection", r.op), body, 404, "NOT_FOUND", noDB)
		if r.op != "createOrUpdate" && r.op != "drop" {
			add("no coll "+r.op, r.method, collPath("db1", "random_collection", r.op), body, 404, "NOT_FOUND", noColl)
		}
	}
	add("drop of a missing collection", "DELETE", collPath("db1", "test_collection", "drop"), "", 404, "NOT_FOUND", "collection doesn't exists 'test_collection'")
	// The final server fixed its 2022 wording.
	add("drop of a missing collection (2023)", "DELETE", p23Coll("db1", "test_collection", "drop"), "", 404, "NOT_FOUND", "collection doesn't exist 'test_collection'")

	add("create an existing db", "POST", dbPath("db1", "create"), "", 409, "ALREADY_EXISTS", "database already exist")
	add("only_create of an existing collection", "POST", collPath("db1", "users", "createOrUpdate"), `{"schema":`+usersSchema+`,"only_create":true}`, 409, "ALREADY_EXISTS", "collection already exist")
	add("duplicate key", "POST", users("insert"), `{"documents":[{"id":1}]}`, 409, "ALREADY_EXISTS", `duplicate key value, violates key constraint: key {"id":1} exists already`)

	add("insert documents []", "POST", users("insert"), `{"documents":[]}`, 400, "INVALID_ARGUMENT", "empty documents received")
	add("insert without documents", "POST", users("insert"), `{}`, 400, "INVALID_ARGUMENT", "empty documents received")
	add("insert documents null", "POST", users("insert"), `{"documents":null}`, 400, "INVALID_ARGUMENT", "empty documents received")
	add("insert without body", "POST", users("insert"), ``, 400, "INVALID_ARGUMENT", "empty documents received")
	add("replace documents []", "PUT", users("replace"), `{"documents":[]}`, 400, "INVALID_ARGUMENT", "empty documents received")

	add("update without fields", "PUT", users("update"), `{"filter":{"id":1}}`, 400, "INVALID_ARGUMENT", "empty fields received")
	add("update fields null", "PUT", users("update"), `{"filter":{"id":1},"fields":null}`, 400, "INVALID_ARGUMENT", "empty fields received")
	add("update fields {}", "PUT", users("update"), `{"filter":{"id":1},"fields":{}}`, 400, "INVALID_ARGUMENT", "empty fields received")
	add("update without fields or filter", "PUT", users("update"), `{}`, 400, "INVALID_ARGUMENT", "empty fields received")
	for _, r := range []struct{ method, op, body string }{
		{"PUT", "update", `"fields":{"$set":{"name":"x"}}`},
		{"DELETE", "delete", `"options":{}`},
		{"POST", "read", `"options":{}`},
	} {
		add(r.op+" without filter", r.method, users(r.op), `{`+r.body+`}`, 400, "INVALID_ARGUMENT", "filter is a required field")
		add(r.op+" filter null", r.method, users(r.op), `{"filter":null,`+r.body+`}`, 400, "INVALID_ARGUMENT", "filter is a required field")
	}
	add("update filter {}", "PUT", users("update"), `{"filter":{},"fields":{"$set":{"name":"x"}}}`, 400, "INVALID_ARGUMENT", "updating all documents is not allowed")

	add("schema null", "POST", collPath("db1", "newcoll", "createOrUpdate"), `{"schema":null}`, 400, "INVALID_ARGUMENT", "schema is a required during collection creation")
	add("schema missing", "POST", collPath("db1", "newcoll", "createOrUpdate"), `{"only_create":true}`, 400, "INVALID_ARGUMENT", "schema is a required during collection creation")

	for _, v := range []struct{ name, doc, field, reason string }{
		{"integer", `{"id":1.5}`, "id", "expected integer or null, but got number"},
		{"string", `{"id":2,"s":5}`, "s", "expected string or null, but got number"},
		{"byte", `{"id":2,"b":"not enough"}`, "b", "'not enough' is not valid 'byte'"},
		{"date-time", `{"id":2,"d":"Mon, 02 Jan 2006"}`, "d", "'Mon, 02 Jan 2006' is not valid 'date-time'"},
		{"uuid", `{"id":2,"u":"abc-bcd"}`, "u", "'abc-bcd' is not valid 'uuid'"},
		{"unknown field", `{"id":2,"extra_key":1}`, "", "additionalProperties 'extra_key' not allowed"},
	} {
		add("validation "+v.name, "POST", docPath("db1", "typed", "insert"), `{"documents":[`+v.doc+`]}`,
			400, "INVALID_ARGUMENT", "json schema validation failed for field '"+v.field+"' reason '"+v.reason+"'")
	}

	add("missing key field", "POST", docPath("db1", "keyed", "insert"), `{"documents":[{"v":1}]}`, 400, "INVALID_ARGUMENT", "missing index key column(s) 'k': Key path not found")
	add("filter on a non-schema field", "POST", users("read"), `{"filter":{"x":1}}`, 400, "INVALID_ARGUMENT", "querying on non schema field 'x'")
	add("bad collation", "POST", users("read"), `{"filter":{},"options":{"collation":{"case":"xx"}}}`, 400, "INVALID_ARGUMENT", "collation 'xx' is not supported")
	add("bad field collation", "POST", users("read"), `{"filter":{"name":{"$eq":"a","collation":{"case":"xx"}}}}`, 400, "INVALID_ARGUMENT", "collation 'xx' is not supported")
	// $and/$or with fewer than 2: 400, where the original sent 500 (§11).
	add("$and of one", "POST", users("read"), `{"filter":{"$and":[{"id":1}]}}`, 400, "INVALID_ARGUMENT", "and filter needs minimum 2 filters")
	add("$or of one", "PUT", users("update"), `{"filter":{"$or":[{"id":1}]},"fields":{"$set":{"name":"x"}}}`, 400, "INVALID_ARGUMENT", "or filter needs minimum 2 filters")
	add("$or of none", "DELETE", users("delete"), `{"filter":{"$or":[]}}`, 400, "INVALID_ARGUMENT", "or filter needs minimum 2 filters")
	add("integer filter value 1.5", "POST", users("read"), `{"filter":{"id":1.5}}`, 400, "INVALID_ARGUMENT", "unsupported value type: field 'id' takes an integer, not 1.5")
	add("ordered comparison with an array", "POST", users("read"), `{"filter":{"tags":{"$lt":["x"]}}}`, 400, "INVALID_ARGUMENT", `unsupported value type: array field 'tags' compares with an array only by equality, not with ["x"]`)
	add("filter on an object field", "POST", users("read"), `{"filter":{"address":1}}`, 400, "INVALID_ARGUMENT", "unsupported value type: field 'address' is an object, which a filter cannot compare; compare its fields, as 'address.city'")

	for _, r := range []struct{ method, op, body string }{
		{"POST", "insert", `{"documents":[{"text":"x"}]}`},
		{"PUT", "replace", `{"documents":[{"text":"x"}]}`},
		{"PUT", "update", `{"filter":{"text":"x"},"fields":{"$set":{"text":"y"}}}`},
		{"DELETE", "delete", `{"filter":{"text":"x"}}`},
	} {
		add(r.op+" on messages", r.method, docPath("db1", "msgs", r.op), r.body,
			400, "INVALID_ARGUMENT", r.op+" is only supported on collection type of 'documents'")
	}

	eachBackend(t, func(t *testing.T, c *client) {
		withErrorFixtures(t, c)
		for _, tc := range cases {
			tc.run(t, c)
		}
		// None of them changed anything.
		equalStrings(t, "users", c.all(t, "db1", "users"), []string{`{"id":1,"name":"a"}`})
	})
}

// Validation order (reference §4): names, then request-level checks, then
// the database, then the collection, then the schema.
func TestValidationOrder(t *testing.T) {
	var cases []errorCase
	add := func(name, method, path, body string, status int, code, message string) {
		cases = append(cases, errorCase{name, method, path, body, status, code, message})
	}
	nowhere := func(op string) string { return docPath("random_database1", "random_collection", op) }
	add("collection name before request", "POST", docPath("db1", "1x", "insert"), `{"documents":[]}`, 400, "INVALID_ARGUMENT", badName("collection", "1x"))
	add("database name before request", "POST", docPath("1x", "users", "insert"), `{"documents":[]}`, 400, "INVALID_ARGUMENT", badName("database", "1x"))
	add("name before malformed body", "POST", docPath("db1", "1x", "insert"), `{`, 400, "INVALID_ARGUMENT", badName("collection", "1x"))
	add("documents before database", "POST", nowhere("insert"), `{"documents":[]}`, 400, "INVALID_ARGUMENT", "empty documents received")
	add("fields before database", "PUT", nowhere("update"), `{"filter":{"id":1}}`, 400, "INVALID_ARGUMENT", "empty fields received")
	add("filter before database", "POST", nowhere("read"), `{}`, 400, "INVALID_ARGUMENT", "filter is a required field")
	add("schema before database", "POST", collPath("random_database1", "random_collection", "createOrUpdate"), `{}`, 400, "INVALID_ARGUMENT", "schema is a required during collection creation")
	add("database before collection", "POST", nowhere("insert"), `{"documents":[{"id":1}]}`, 404, "NOT_FOUND", "database doesn't exist 'random_database1'")
	add("database before document", "POST", nowhere("insert"), `{"documents":[{"x":"bad"}]}`, 404, "NOT_FOUND", "database doesn't exist 'random_database1'")
	add("database before filter", "POST", nowhere("read"), `{"filter":{"x":1}}`, 404, "NOT_FOUND", "database doesn't exist 'random_database1'")
	add("database before update of all", "PUT", nowhere("update"), `{"filter":{},"fields":{"$set":{"a":1}}}`, 404, "NOT_FOUND", "database doesn't exist 'random_database1'")
	add("database before schema", "POST", collPath("random_database1", "random_collection", "createOrUpdate"), `{"schema":{"title":"wrong"}}`, 404, "NOT_FOUND", "database doesn't exist 'random_database1'")
	add("collection before document", "POST", docPath("db1", "random_collection", "insert"), `{"documents":[{"x":"bad"}]}`, 404, "NOT_FOUND", "collection doesn't exist 'random_collection'")
	add("collection before filter", "DELETE", docPath("db1", "random_collection", "delete"), `{"filter":{"x":1}}`, 404, "NOT_FOUND", "collection doesn't exist 'random_collection'")
	add("existing key after schema", "POST", docPath("db1", "users", "insert"), `{"documents":[{"id":1,"name":7}]}`, 400, "INVALID_ARGUMENT", "json schema validation failed for field 'name' reason 'expected string or null, but got number'")
	eachBackend(t, func(t *testing.T, c *client) {
		withErrorFixtures(t, c)
		for _, tc := range cases {
			tc.run(t, c)
		}
	})
}

// route is one route of the API.
type route struct{ method, op string }

var (
	allDatabaseRoutes = []route{{"POST", "create"}, {"DELETE", "drop"}, {"POST", "describe"}, {"POST", "collections/list"}}
	// allCollectionRoutes are the routes under a collection.
	allCollectionRoutes = []route{
		{"POST", "createOrUpdate"}, {"DELETE", "drop"}, {"POST", "describe"},
		{"POST", "documents/insert"}, {"PUT", "documents/replace"}, {"PUT", "documents/update"},
		{"DELETE", "documents/delete"}, {"POST", "documents/read"},
	}
	// validBodies are well-formed bodies for the collection routes.
	validBodies = map[string]string{
		"createOrUpdate":   `{"schema":{"title":"random_collection","properties":{"id":{"type":"integer"}},"primary_key":["id"]}}`,
		"documents/insert": `{"documents":[{"id":1}]}`, "documents/replace": `{"documents":[{"id":1}]}`,
		"documents/update": `{"filter":{"id":1},"fields":{"$set":{"id":1}}}`,
		"documents/delete": `{"filter":{"id":1}}`, "documents/read": `{"filter":{}}`,
	}
)

func TestRouting(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		withErrorFixtures(t, c)
		// GET / is the console's redirect (below); every other method
		// there is the API's.
		errorCase{"POST /", "POST", "/", "", 404, "NOT_FOUND", "Not Found"}.run(t, c)
		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		if res, err := noFollow.Get(c.base + "/"); err != nil {
			t.Error(err)
		} else if res.Body.Close(); res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/console/" {
			t.Errorf("GET /: %d Location %q, want the console's 302 to /console/", res.StatusCode, res.Header.Get("Location"))
		}
		for _, path := range []string{"/foo", "/v1", "/v1/nope", "/v1/databases", "/v1/databases/db1", "/v1/databases/db1/create/",
			"/v1/databases/db1/collections/users", "/v1/databases/db1/collections/users/documents/nope", "/v1/databases/db1/collections/users/documents//read"} {
			for _, method := range []string{"GET", "POST"} {
				errorCase{method + " " + path, method, path, "", 404, "NOT_FOUND", "Not Found"}.run(t, c)
			}
		}

		// A known path with the wrong method: 405 METHOD_NOT_ALLOWED, where
		// the original sent 500 by accident (§11), with an Allow header.
		routes := []known{{"GET", "/v1/health"}, {"GET", "/v1/info"}, {"GET", "/v1/observability/info"}, {"POST", "/v1/databases/list"},
			{"POST", dbPath("db1", "transactions/begin")}, {"POST", dbPath("db1", "transactions/commit")}, {"POST", dbPath("db1", "transactions/rollback")}}
		for _, r := range allDatabaseRoutes {
			routes = append(routes, known{r.method, dbPath("db1", r.op)})
		}
		for _, r := range allCollectionRoutes {
			routes = append(routes, known{r.method, collPath("db1", "users", r.op)})
		}
		for _, r := range routes {
			for _, wrong := range []string{"GET", "POST", "PUT", "DELETE", "PATCH"} {
				if wrong == r.method {
					continue
				}
				t.Run(wrong+" "+r.path, func(t *testing.T) {
					res := c.do(t, wrong, r.path, "")
					wantError(t, res, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", anyMessage)
					if allow := strings.Split(res.header.Get("Allow"), ", "); !slices.Contains(allow, r.method) {
						t.Errorf("Allow %q, want it to list %s", res.header.Get("Allow"), r.method)
					}
				})
			}
		}
	})
}

// Requests that Go's client never sends or would clean first, written on
// the wire: a CONNECT names a host and port (one of the server's, which
// the host check lets through), not a path; "*" names no
// resource; a path with "." or empty segments is one the mux would
// redirect to its clean form. Those with no route get the API's JSON 404
// or 405, as any unknown route, not the mux's plain text or a redirect;
// an unclean path to a route is still redirected to it.
func TestRoutingOfRequestsOnTheWire(t *testing.T) {
	for _, server := range []string{node.HTTP1FastHTTP, node.HTTP1NetHTTP} {
		t.Run(server, func(t *testing.T) {
			c := startServer(t, backendtest.OpenPebble(t), node.DefaultConfigWith(func(nc *node.Config) { nc.HTTP1Server = server }))
			// The asterisk form is for OPTIONS only (RFC 9112, 3.2.4):
			// fasthttp refuses it elsewhere, net/http hands it on.
			asterisk, asteriskCode := 404, "NOT_FOUND"
			if server == node.HTTP1FastHTTP {
				asterisk, asteriskCode = 400, "INVALID_ARGUMENT"
			}
			routeOnTheWire(t, c, asterisk, asteriskCode)
		})
	}
}

func routeOnTheWire(t *testing.T, c *client, asterisk int, asteriskCode string) {
	for _, tc := range []struct {
		requestLine string
		status      int
		code, allow string
		location    string // for a redirect
	}{
		{requestLine: "CONNECT localhost:443 HTTP/1.1", status: 404, code: "NOT_FOUND"},
		{requestLine: "CONNECT /v1/health HTTP/1.1", status: 405, code: "METHOD_NOT_ALLOWED", allow: "GET"},
		{requestLine: "GET * HTTP/1.1", status: asterisk, code: asteriskCode},
		{requestLine: "GET /v1/./nope HTTP/1.1", status: 404, code: "NOT_FOUND"},
		{requestLine: "GET /v1/../x HTTP/1.1", status: 404, code: "NOT_FOUND"},
		{requestLine: "POST /v1/./health HTTP/1.1", status: 405, code: "METHOD_NOT_ALLOWED", allow: "GET"},
		{requestLine: "POST /a///b HTTP/1.1", status: 404, code: "NOT_FOUND"},
		{requestLine: "GET /v1/./health HTTP/1.1", status: http.StatusTemporaryRedirect, location: "/v1/health"},
	} {
		t.Run(tc.requestLine, func(t *testing.T) {
			res := rawRequest(t, c, tc.requestLine)
			if tc.location != "" {
				if res.status != tc.status || res.header.Get("Location") != tc.location {
					t.Fatalf("got %d to %q, want %d to %q", res.status, res.header.Get("Location"), tc.status, tc.location)
				}
				return
			}
			wantError(t, res, tc.status, tc.code, anyMessage)
			if allow := res.header.Get("Allow"); allow != tc.allow {
				t.Errorf("Allow %q, want %q", allow, tc.allow)
			}
		})
	}
}

// rawRequest sends a request with no body, its request line as given, on a
// connection of its own.
func rawRequest(t testing.TB, c *client, requestLine string) *response {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(c.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "%s\r\nHost: localhost\r\n\r\n", requestLine)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s: %v", requestLine, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s: %v", requestLine, err)
	}
	return &response{status: res.StatusCode, header: res.Header, body: body}
}

// A body that is not JSON, or not the JSON of the request, is a 400 on every
// route that reads one.
func TestMalformedJSON(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		withErrorFixtures(t, c)
		paths := []known{{"POST", "/v1/databases/list"}}
		for _, r := range allDatabaseRoutes {
			paths = append(paths, known{r.method, dbPath("db1", r.op)})
		}
		for _, r := range allCollectionRoutes {
			paths = append(paths, known{r.method, collPath("db1", "users", r.op)})
		}
		for _, p := range paths {
			for _, body := range []string{`{`, `nope`, `{"a":1}x`, `[1]`, `"text"`, `{"filter":{},}`} {
				errorCase{p.method + " " + p.path + " " + body, p.method, p.path, body, 400, "INVALID_ARGUMENT", anyMessage}.run(t, c)
			}
		}
		equalStrings(t, "users", c.all(t, "db1", "users"), []string{`{"id":1,"name":"a"}`})
	})
}

// known is a route with its path filled in.
type known struct{ method, path string }

// An error that echoes the request (a field name, a value) echoes a
// bounded part of it: a field name of half a megabyte (a whole megabyte
// is a document too large) gives a message of some hundred bytes that
// still says what is wrong, its start and its end kept.
func TestErrorMessagesEchoBoundedInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		long := strings.Repeat("f", 1<<19)
		for _, tc := range []struct {
			name, method, path, body string
			start, end               string
		}{
			{"unknown field in a document", "POST", docPath("db1", "users", "insert"), `{"documents":[{"id":1,"` + long + `":1}]}`,
				"json schema validation failed for field '' reason 'additionalProperties 'fff", "'"},
			{"unknown field in a filter", "POST", docPath("db1", "users", "read"), `{"filter":{"` + long + `":1}}`,
				"", "'"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				msg := wantError(t, c.do(t, tc.method, tc.path, tc.body), 400, "INVALID_ARGUMENT", anyMessage)
				if len(msg) > 600 {
					t.Errorf("the message takes %d bytes: %.80q…", len(msg), msg)
				}
				if !strings.HasPrefix(msg, tc.start) || !strings.HasSuffix(msg, tc.end) || !strings.Contains(msg, "…") {
					t.Errorf("the message %q does not keep its start %q and end %q around an ellipsis", msg, tc.start, tc.end)
				}
			})
		}
	})
}

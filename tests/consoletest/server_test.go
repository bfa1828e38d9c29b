package consoletest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/tests/backendtest"
	"github.com/foliodb/folio/tests/servetest"
)

func TestMain(m *testing.M) {
	code := servetest.Main(m)
	stopBrowser()
	os.Exit(code)
}

// A console is a `folio serve` on one engine, with or without --auth, and
// what a test needs to reach it: its address, and with --auth the owner's
// credentials (from the owner file) and access token, with which tests
// set up their data through the API.
type console struct {
	engine string
	srv    *servetest.Server
	base   string                 // http://host:port
	owner  *auth.OwnerCredentials // nil without --auth
	token  string                 // the owner's access token; "" without --auth
}

// startConsole starts a server on engine b for the console tests, with
// --auth if secured; it stops when tb ends.
func startConsole(tb testing.TB, b backendtest.Backend, secured bool) *console {
	tb.Helper()
	var args []string
	ownerFile := filepath.Join(tb.TempDir(), "owner.json")
	if secured {
		args = append(args, "--auth", "--owner-file", ownerFile)
	}
	srv := servetest.Start(tb, servetest.Options{Backend: b, Args: args})
	c := &console{engine: b.Name, srv: srv, base: "http://" + srv.Addr}
	if secured {
		raw, err := os.ReadFile(ownerFile)
		var owner auth.OwnerCredentials
		if err != nil || json.Unmarshal(raw, &owner) != nil || owner.ClientID == "" {
			tb.Fatalf("the owner file %s: %v %s", ownerFile, err, raw)
		}
		c.owner = &owner
		c.token = c.accessToken(tb, owner.ClientID, owner.ClientSecret)
	}
	return c
}

// secured says whether the server runs with --auth.
func (c *console) secured() bool { return c.owner != nil }

// url is the address of a console path (or any path) on the server.
func (c *console) url(path string) string { return c.base + path }

// accessToken gets an access token for an application's id and secret
// with the OAuth2 client-credentials call, as the console's sign-in does.
func (c *console) accessToken(tb testing.TB, id, secret string) string {
	tb.Helper()
	status, body := c.tokenCall(tb, id, secret)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &tok) != nil || tok.AccessToken == "" {
		tb.Fatalf("token for %s: %d %s", id, status, body)
	}
	return tok.AccessToken
}

// tokenCall makes the token call and returns its status and body.
func (c *console) tokenCall(tb testing.TB, id, secret string) (int, []byte) {
	tb.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}}
	res, err := http.Post(c.url("/v1/auth/token"), "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		tb.Fatalf("token: %v", err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, body
}

// apiError is the code and message of an API error answer.
func apiError(tb testing.TB, body []byte) (code, message string) {
	tb.Helper()
	var e struct {
		Error struct {
			Code    any    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Message == "" {
		tb.Fatalf("not an API error: %v %s", err, body)
	}
	return fmt.Sprint(e.Error.Code), e.Error.Message
}

// apiTimeout bounds one API call a test makes to set up or check data.
const apiTimeout = 30 * time.Second

// send makes an API call as the owner (or anonymously without --auth)
// and returns the status and the body. body is sent as JSON unless nil.
func (c *console) send(tb testing.TB, method, path string, body any) (int, []byte) {
	tb.Helper()
	return c.sendAs(tb, c.token, method, path, body)
}

// sendAs is send with another access token ("": none).
func (c *console) sendAs(tb testing.TB, token, method, path string, body any) (int, []byte) {
	tb.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			tb.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, c.url(path), rd)
	if err != nil {
		tb.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{Timeout: apiTimeout}
	res, err := client.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	return res.StatusCode, raw
}

// call makes an API call that must succeed, and returns its answer (the
// first line of a streaming one) decoded into a map.
func (c *console) call(tb testing.TB, method, path string, body any) map[string]any {
	tb.Helper()
	status, raw := c.send(tb, method, path, body)
	if status/100 != 2 {
		tb.Fatalf("%s %s: %d %s", method, path, status, raw)
	}
	out := map[string]any{}
	if line, _, _ := bytes.Cut(raw, []byte("\n")); len(bytes.TrimSpace(line)) > 0 {
		if err := json.Unmarshal(line, &out); err != nil {
			tb.Fatalf("%s %s: the answer is not JSON: %v\n%s", method, path, err, raw)
		}
	}
	return out
}

// dbSeq numbers the databases tests make, so that tests sharing a server
// never share data.
var dbSeq atomic.Int64

// newDatabase makes a database of the test's own through the API and
// returns its name, which starts with prefix.
func (c *console) newDatabase(tb testing.TB, prefix string) string {
	tb.Helper()
	name := fmt.Sprintf("%s_%d", prefix, dbSeq.Add(1))
	c.call(tb, "POST", "/v1/projects/"+name+"/create", nil)
	return name
}

// newCollection makes a collection in db with the schema's properties and
// primary key, through the API.
func (c *console) newCollection(tb testing.TB, db, coll string, properties map[string]any, primaryKey ...string) {
	tb.Helper()
	if len(primaryKey) == 0 {
		primaryKey = []string{"id"}
	}
	schema := map[string]any{"title": coll, "properties": properties, "primary_key": primaryKey}
	c.call(tb, "POST", "/v1/databases/"+db+"/collections/"+coll+"/createOrUpdate", map[string]any{"schema": schema})
}

// insert inserts documents into db.coll through the API.
func (c *console) insert(tb testing.TB, db, coll string, docs ...map[string]any) {
	tb.Helper()
	c.call(tb, "POST", "/v1/databases/"+db+"/collections/"+coll+"/documents/insert", map[string]any{"documents": docs})
}

// readAll reads db.coll's documents matching filter through the API.
func (c *console) readAll(tb testing.TB, db, coll string, filter map[string]any) []map[string]any {
	tb.Helper()
	if filter == nil {
		filter = map[string]any{}
	}
	status, raw := c.send(tb, "POST", "/v1/databases/"+db+"/collections/"+coll+"/documents/read", map[string]any{"filter": filter})
	if status != http.StatusOK {
		tb.Fatalf("read %s.%s: %d %s", db, coll, status, raw)
	}
	var docs []map[string]any
	for _, line := range bytes.Split(raw, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var item struct {
			Result struct {
				Data map[string]any `json:"data"`
			} `json:"result"`
			Error any `json:"error"`
		}
		if err := json.Unmarshal(line, &item); err != nil || item.Error != nil {
			tb.Fatalf("read %s.%s: %v %s", db, coll, err, line)
		}
		docs = append(docs, item.Result.Data)
	}
	return docs
}

// newApplication makes an application with role through the API (as the
// owner) and returns its id and secret.
func (c *console) newApplication(tb testing.TB, name, role string) (id, secret string) {
	tb.Helper()
	out := c.call(tb, "POST", "/v1/management/applications/create",
		map[string]any{"name": name, "description": "made by the console's browser tests", "role": role})
	app, _ := out["created_application"].(map[string]any)
	id, _ = app["id"].(string)
	secret, _ = app["secret"].(string)
	if id == "" || secret == "" {
		tb.Fatalf("create application %s: no id or secret in %v", name, out)
	}
	return id, secret
}

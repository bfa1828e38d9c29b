package apitest

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
)

func TestHealthAndInfo(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		r := c.ok(t, "GET", "/v1/health", "")
		if got := string(r.body); got != `{"response":"OK"}` {
			t.Errorf("health: %s", got)
		}
		if r.chunked || r.header.Get("Content-Length") == "" {
			t.Errorf("health is a unary response: want Content-Length, not chunked")
		}
		// Clients alpha.32 read /v1/info, later ones /v1/observability/info:
		// the same body at both.
		info := c.ok(t, "GET", "/v1/info", "")
		if v, _ := info.object(t)["server_version"].(string); v == "" {
			t.Errorf("info: %s, want a server_version", info.body)
		}
		if obs := c.ok(t, "GET", "/v1/observability/info", ""); string(obs.body) != string(info.body) {
			t.Errorf("/v1/observability/info %s differs from /v1/info %s", obs.body, info.body)
		}
	})
}

// Info names the storage engine and whether calls need a token (Folio's
// members, for `folio status`), beside the original's server_version.
func TestInfoNamesEngineAndAuth(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		c := startServer(t, b.Open(t), node.DefaultConfig())
		want := `{"server_version":"` + "dev" + `","engine":"` + b.Name + `","auth":false}`
		info := c.ok(t, "GET", "/v1/info", "")
		if got := string(info.body); got != want {
			t.Errorf("info %s, want %s", got, want)
		}
	})
	s := startAuthServer(t, backendtest.OpenPebble(t), authConfig(t))
	if m := s.anon.ok(t, "GET", "/v1/info", "").object(t); m["auth"] != true {
		t.Errorf("info with --auth: %v, want auth true", m)
	}
}

func TestDatabases(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		list := func() string { return string(c.ok(t, "POST", "/v1/databases/list", "").body) }
		if got := list(); got != `{"databases":[]}` {
			t.Errorf("list with no database: %s", got)
		}

		r := c.ok(t, "POST", dbPath("zeta", "create"), "")
		if got := string(r.body); got != `{"message":"database created successfully","status":"created"}` {
			t.Errorf("create: %s", got)
		}
		// The body is optional; options may come with it.
		c.ok(t, "POST", dbPath("alpha_1", "create"), `{"options":{}}`)
		wantError(t, c.do(t, "POST", dbPath("zeta", "create"), ""), 409, "ALREADY_EXISTS", "database already exist")

		if got := list(); got != `{"databases":[{"db":"alpha_1","metadata":{}},{"db":"zeta","metadata":{}}]}` {
			t.Errorf("list: %s", got)
		}

		// An empty database describes with "collections":[], never null.
		// Creating a database logs no change: the log is empty.
		r = c.ok(t, "POST", dbPath("zeta", "describe"), "")
		wantSameJSON(t, "describe of an empty database", string(r.body), `{"db":"zeta","metadata":{},"collections":[],"size":0,"sizes":{"documents":0,"indexes":0,"log":0}}`)

		r = c.ok(t, "DELETE", dbPath("zeta", "drop"), "")
		if got := string(r.body); got != `{"message":"database dropped successfully","status":"dropped"}` {
			t.Errorf("drop: %s", got)
		}
		if got := list(); got != `{"databases":[{"db":"alpha_1","metadata":{}}]}` {
			t.Errorf("list after drop: %s", got)
		}
		wantError(t, c.do(t, "DELETE", dbPath("zeta", "drop"), ""), 404, "NOT_FOUND", "database doesn't exist 'zeta'")
		wantError(t, c.do(t, "POST", dbPath("zeta", "describe"), ""), 404, "NOT_FOUND", "database doesn't exist 'zeta'")
	})
}

// A dropped database takes its collections and documents with it, and a
// database created again under its name starts empty.
func TestDropDatabaseRemovesEverything(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "shop")
		c.createColl(t, "shop", "items", `{"title":"items","properties":{"id":{"type":"integer"}},"primary_key":["id"]}`)
		c.insert(t, "shop", "items", `{"id":1}`)
		c.ok(t, "DELETE", dbPath("shop", "drop"), "")
		wantError(t, c.do(t, "POST", docPath("shop", "items", "read"), `{"filter":{}}`), 404, "NOT_FOUND", "database doesn't exist 'shop'")

		c.createDB(t, "shop")
		if got := string(c.ok(t, "POST", dbPath("shop", "collections/list"), "").body); got != `{"collections":[]}` {
			t.Errorf("collections of the re-created database: %s", got)
		}
		c.createColl(t, "shop", "items", `{"title":"items","properties":{"id":{"type":"integer"}},"primary_key":["id"]}`)
		if got := c.all(t, "shop", "items"); len(got) != 0 {
			t.Errorf("re-created collection holds %q", got)
		}
		c.insert(t, "shop", "items", `{"id":1}`) // no duplicate left behind
	})
}

func TestCollections(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "db1")
		listColls := func() string { return string(c.ok(t, "POST", dbPath("db1", "collections/list"), "").body) }
		if got := listColls(); got != `{"collections":[]}` {
			t.Errorf("list of no collection: %s", got)
		}

		const schema = `{"title":"users","description":"people","properties":{"id":{"type":"integer"},"name":{"type":"string","maxLength":100}},"primary_key":["id"]}`
		const created = `{"message":"collection of type 'documents' created successfully","status":"created"}`
		r := c.ok(t, "POST", collPath("db1", "users", "createOrUpdate"), `{"schema":`+schema+`,"only_create":true,"options":{}}`)
		if got := string(r.body); got != created {
			t.Errorf("create: %s", got)
		}
		wantError(t, c.do(t, "POST", collPath("db1", "users", "createOrUpdate"), `{"schema":`+schema+`,"only_create":true}`),
			409, "ALREADY_EXISTS", "collection already exist")

		// An update answers like a create, as the original did.
		const schema2 = `{"title":"users","description":"people","properties":{"id":{"type":"integer"},"name":{"type":"string","maxLength":100},"age":{"type":"integer"}},"primary_key":["id"]}`
		r = c.ok(t, "POST", collPath("db1", "users", "createOrUpdate"), `{"schema":`+schema2+`}`)
		if got := string(r.body); got != created {
			t.Errorf("update: %s", got)
		}

		c.createColl(t, "db1", "orders", `{"title":"orders","properties":{"id":{"type":"integer"}},"primary_key":["id"]}`)
		if got := listColls(); got != `{"collections":[{"collection":"orders","metadata":{}},{"collection":"users","metadata":{}}]}` {
			t.Errorf("list: %s", got)
		}

		// describe: the stored schema as sent, size 0 while empty.
		desc := c.ok(t, "POST", collPath("db1", "users", "describe"), "")
		wantSameJSON(t, "describe", string(desc.body), `{"collection":"users","metadata":{},"schema":`+schema2+`,"size":0,"sizes":{"documents":0,"indexes":0}}`)
		var raw struct {
			Schema json.RawMessage `json:"schema"`
		}
		if err := json.Unmarshal(desc.body, &raw); err != nil || string(raw.Schema) != schema2 {
			t.Errorf("described schema %s, want the bytes sent %s", raw.Schema, schema2)
		}

		r = c.ok(t, "DELETE", collPath("db1", "orders", "drop"), "")
		if got := string(r.body); got != `{"message":"collection dropped successfully","status":"dropped"}` {
			t.Errorf("drop: %s", got)
		}
		if got := listColls(); got != `{"collections":[{"collection":"users","metadata":{}}]}` {
			t.Errorf("list after drop: %s", got)
		}
		wantError(t, c.do(t, "DELETE", collPath("db1", "orders", "drop"), ""), 404, "NOT_FOUND", "collection doesn't exists 'orders'")
		wantError(t, c.do(t, "POST", collPath("db1", "orders", "describe"), ""), 404, "NOT_FOUND", "collection doesn't exist 'orders'")
	})
}

// Sizes are bytes of data: 0 when empty, growing with documents, and a
// database's size is the sum of its collections'. Beside the original's
// size (the documents), sizes tells documents and index entries apart.
func TestSizes(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "db1")
		for _, coll := range []string{"aa", "bb"} {
			c.createColl(t, "db1", coll, `{"title":"`+coll+`","properties":{"id":{"type":"integer"},"s":{"type":"string"}},"primary_key":["id"]}`)
		}
		size := func(coll string) int64 {
			m := c.okObject(t, "POST", collPath("db1", coll, "describe"), "")
			if docs := intOf(t, obj(t, m, "sizes")["documents"]); docs != intOf(t, m["size"]) {
				t.Errorf("%s: sizes.documents %d, size %d", coll, docs, intOf(t, m["size"]))
			}
			return intOf(t, m["size"])
		}
		indexSize := func(coll string) int64 {
			m := c.okObject(t, "POST", collPath("db1", coll, "describe"), "")
			return intOf(t, obj(t, m, "sizes")["indexes"])
		}
		dbSize := func() (total, sum int64) {
			m := c.okObject(t, "POST", dbPath("db1", "describe"), "")
			for _, d := range m["collections"].([]any) {
				sum += intOf(t, d.(map[string]any)["size"])
			}
			return intOf(t, m["size"]), sum
		}
		if s := size("aa"); s != 0 {
			t.Errorf("size of an empty collection: %d", s)
		}
		if total, _ := dbSize(); total != 0 {
			t.Errorf("size of a database of empty collections: %d", total)
		}

		c.insert(t, "db1", "aa", `{"id":1,"s":"hello"}`)
		one := size("aa")
		if one <= 0 {
			t.Fatalf("size after one insert: %d", one)
		}
		oneIndex := indexSize("aa")
		if oneIndex <= 0 {
			t.Fatalf("index size after one insert: %d", oneIndex)
		}
		c.insert(t, "db1", "aa", `{"id":2,"s":"A longer string than the first one"}`)
		two := size("aa")
		if two <= one {
			t.Errorf("size did not grow with a second document: %d then %d", one, two)
		}
		// A longer string has longer entries, and "A longer…" a Folded one too.
		if twoIndex := indexSize("aa"); twoIndex <= 2*oneIndex {
			t.Errorf("index size with the second document %d, want more than twice the first's %d", twoIndex, oneIndex)
		}
		m := c.okObject(t, "POST", dbPath("db1", "describe"), "")
		if got, want := intOf(t, obj(t, m, "sizes")["indexes"]), indexSize("aa")+indexSize("bb"); got != want {
			t.Errorf("database index size %d, collections sum to %d", got, want)
		}
		c.insert(t, "db1", "bb", `{"id":1}`)
		if total, sum := dbSize(); total != sum || total != two+size("bb") {
			t.Errorf("database size %d, collections sum to %d (aa %d, bb %d)", total, sum, two, size("bb"))
		}

		c.ok(t, "DELETE", docPath("db1", "aa", "delete"), `{"filter":{"id":2}}`)
		if s := size("aa"); s != one {
			t.Errorf("size after deleting the second document: %d, want %d", s, one)
		}
		if s := indexSize("aa"); s != oneIndex {
			t.Errorf("index size after deleting the second document: %d, want %d", s, oneIndex)
		}
		c.ok(t, "DELETE", docPath("db1", "aa", "delete"), `{"filter":{}}`)
		if s, i := size("aa"), indexSize("aa"); s != 0 || i != 0 {
			t.Errorf("sizes after deleting everything: documents %d, indexes %d", s, i)
		}
	})
}

// Describe database reports the change log's bytes beside the documents'
// and the index entries' (sizes.log), as node.Stats does: one log for the
// server, growing with every write by at least what the write logged,
// deletes included. A collection's description has none.
func TestLogSize(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		n := startNode(t, b.Open(t), node.DefaultConfig())
		t.Cleanup(func() { n.Close() })
		c := newClient("http://" + n.Addr().String())
		c.createDB(t, "db1")
		c.createDB(t, "db2")
		c.createColl(t, "db1", "aa", `{"title":"aa","properties":{"id":{"type":"integer"},"s":{"type":"string"}},"primary_key":["id"]}`)
		logSize := func(db string) int64 {
			t.Helper()
			return intOf(t, obj(t, c.okObject(t, "POST", dbPath(db, "describe"), ""), "sizes")["log"])
		}
		// On PostgreSQL the log is counted to its horizon, as the events
		// streams read it: a commit counts once the transactions older
		// than it in the cluster have ended.
		growsBy := func(from, atLeast int64) int64 {
			t.Helper()
			deadline := time.Now().Add(10 * time.Second)
			for {
				got := logSize("db1")
				if got-from >= atLeast {
					return got
				}
				if time.Now().After(deadline) {
					t.Fatalf("the log's size went from %d to %d, want at least %d more", from, got, atLeast)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		created := growsBy(0, 1) // the collection's creation
		c.insert(t, "db1", "aa", `{"id":1,"s":"`+strings.Repeat("x", 2000)+`"}`)
		inserted := growsBy(created, 2000)
		if other := logSize("db2"); other != inserted {
			t.Errorf("db2 reports a log of %d bytes, db1 %d: the log is the server's", other, inserted)
		}
		if st := n.Stats().LogBytes; st != inserted {
			t.Errorf("node.Stats reports a log of %d bytes, describe %d", st, inserted)
		}
		c.ok(t, "DELETE", docPath("db1", "aa", "delete"), `{"filter":{"id":1}}`)
		growsBy(inserted, 1)
		if _, ok := obj(t, c.okObject(t, "POST", collPath("db1", "aa", "describe"), ""), "sizes")["log"]; ok {
			t.Error("a collection's description reports the log's size")
		}
	})
}

// A dropped collection takes its documents; one created again under its
// name starts empty.
func TestDropCollectionRemovesDocuments(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		const schema = `{"title":"cc","properties":{"id":{"type":"integer","format":"int32","autoGenerate":true}},"primary_key":["id"]}`
		c.createDB(t, "db1")
		c.createColl(t, "db1", "cc", schema)
		c.insert(t, "db1", "cc", `{}`, `{}`)
		c.ok(t, "DELETE", collPath("db1", "cc", "drop"), "")
		wantError(t, c.do(t, "POST", docPath("db1", "cc", "read"), `{"filter":{}}`), 404, "NOT_FOUND", "collection doesn't exist 'cc'")

		c.createColl(t, "db1", "cc", schema)
		if got := c.all(t, "db1", "cc"); len(got) != 0 {
			t.Errorf("re-created collection holds %q", got)
		}
		m := c.okObject(t, "POST", collPath("db1", "cc", "describe"), "")
		if s := intOf(t, m["size"]); s != 0 {
			t.Errorf("re-created collection has size %d", s)
		}
		// The int32 counter starts again too.
		equalStrings(t, "keys", c.insert(t, "db1", "cc", `{}`), []string{`{"id":1}`})
	})
}

// intOf reads a JSON number decoded with UseNumber as an integer.
func intOf(t testing.TB, v any) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%#v is not a number", v)
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		t.Fatalf("%s is not an integer", n)
	}
	return i
}

// wantSameJSON compares two JSON texts as values (member order aside).
func wantSameJSON(t testing.TB, what, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Errorf("%s: %s is not JSON: %v", what, got, err)
		return
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: the expected %s is not JSON: %v", what, want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}

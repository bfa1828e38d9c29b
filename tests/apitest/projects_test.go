package apitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// Paths of the 2023 API.
func projectPath(project, op string) string { return "/v1/projects/" + project + "/" + op }
func p23Path(project, op string) string {
	return "/v1/projects/" + project + "/database/" + op
}
func p23Coll(project, coll, op string) string {
	return p23Path(project, "collections/"+coll+"/"+op)
}
func p23Doc(project, coll, op string) string { return p23Coll(project, coll, "documents/"+op) }

// withBranch adds "branch" to a JSON object body ("" sends the body as is).
func withBranch(body, branch string) string {
	if branch == "" {
		return body
	}
	if body == "" || body == "{}" {
		return `{"branch":"` + branch + `"}`
	}
	return `{"branch":"` + branch + `",` + strings.TrimPrefix(body, "{")
}

// read23 reads a collection of a project's branch over the 2023 route and
// returns the documents.
func (c *client) read23(t testing.TB, project, branch, coll, filter string) []string {
	t.Helper()
	r := c.ok(t, "POST", p23Doc(project, coll, "read"), withBranch(`{"filter":`+filter+`}`, branch))
	var out []string
	for _, it := range parseStream(t, r) {
		out = append(out, string(it.data))
	}
	return out
}

func (c *client) insert23(t testing.TB, project, branch, coll string, docs ...string) {
	t.Helper()
	c.ok(t, "POST", p23Doc(project, coll, "insert"), withBranch(`{"documents":[`+strings.Join(docs, ",")+`]}`, branch))
}

// names returns member key of each object of the array m[list].
func names(t testing.TB, m map[string]any, list, key string) []string {
	t.Helper()
	arr, ok := m[list].([]any)
	if !ok {
		t.Fatalf("%q is not an array: %v", list, m)
	}
	out := []string{}
	for _, e := range arr {
		o, ok := e.(map[string]any)
		if !ok {
			t.Fatalf("%q holds a non-object: %v", list, m)
		}
		out = append(out, str(t, o, key))
	}
	return out
}

const usersSchema23 = `{"title":"users","properties":{"id":{"type":"integer"},"name":{"type":"string"}},"primary_key":["id"]}`

func TestProjects(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		got := c.okObject(t, "POST", projectPath("shop", "create"), "")
		if got["status"] != "created" || got["message"] != "project created successfully" {
			t.Errorf("create project: %v", got)
		}
		wantError(t, c.do(t, "POST", projectPath("shop", "create"), ""), http.StatusConflict, "ALREADY_EXISTS", "project already exist")
		wantError(t, c.do(t, "POST", projectPath("1shop", "create"), ""), http.StatusBadRequest, "INVALID_ARGUMENT", badName("database", "1shop"))
		// A database of the 2022 API is a project, and the other way round.
		c.createDB(t, "legacy")
		wantError(t, c.do(t, "POST", projectPath("legacy", "create"), ""), http.StatusConflict, "ALREADY_EXISTS", "project already exist")
		for _, method := range []string{"GET", "POST"} {
			equalStrings(t, method+" projects", names(t, c.okObject(t, method, "/v1/projects", ""), "projects", "project"), []string{"legacy", "shop"})
		}
		equalStrings(t, "databases", names(t, c.okObject(t, "POST", "/v1/databases/list", ""), "databases", "db"), []string{"legacy", "shop"})

		got = c.okObject(t, "DELETE", projectPath("legacy", "delete"), "")
		if got["status"] != "dropped" || got["message"] != "project deleted successfully" {
			t.Errorf("delete project: %v", got)
		}
		wantError(t, c.do(t, "DELETE", projectPath("legacy", "delete"), ""), http.StatusNotFound, "NOT_FOUND", "project doesn't exist 'legacy'")
		// The 2022 wording stays on the 2022 routes.
		wantError(t, c.do(t, "DELETE", dbPath("legacy", "drop"), ""), http.StatusNotFound, "NOT_FOUND", "database doesn't exist 'legacy'")
		equalStrings(t, "projects", names(t, c.okObject(t, "GET", "/v1/projects", ""), "projects", "project"), []string{"shop"})
	})
}

// The 2022 and 2023 names reach the same data, both ways.
func TestProjectsAreDatabases(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "shop")
		c.createColl(t, "shop", "users", usersSchema23)
		c.insert(t, "shop", "users", `{"id":1,"name":"Ann"}`)
		equalStrings(t, "2023 read", c.read23(t, "shop", "", "users", `{}`), []string{`{"id":1,"name":"Ann"}`})
		c.insert23(t, "shop", "main", "users", `{"id":2,"name":"Bob"}`)
		equalStrings(t, "2022 read", c.all(t, "shop", "users"), []string{`{"id":1,"name":"Ann"}`, `{"id":2,"name":"Bob"}`})

		d := c.okObject(t, "POST", p23Path("shop", "describe"), "")
		if _, ok := d["db"]; ok {
			t.Errorf("the 2023 describe has a db member: %v", d)
		}
		equalStrings(t, "branches", toStrings(t, d["branches"]), []string{"main"})
		equalStrings(t, "collections", names(t, d, "collections", "collection"), []string{"users"})
		d = c.okObject(t, "POST", dbPath("shop", "describe"), "")
		if _, ok := d["branches"]; ok || d["db"] != "shop" {
			t.Errorf("the 2022 describe changed: %v", d)
		}
	})
}

// The 2023 describes list a collection's indexes (the two system ones on
// the documents' times, then every field Folio indexes, active from the
// start); the 2022 answers, which had none, stay as they were.
func TestDescribeListsIndexes23(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "shop")
		c.createColl(t, "shop", "users", usersSchema23)
		want := `[{"name":"_tigris_created_at","state":"INDEX ACTIVE"},{"name":"_tigris_updated_at","state":"INDEX ACTIVE"},` +
			`{"fields":[{"name":"id"}],"name":"id","state":"INDEX ACTIVE"},{"fields":[{"name":"name"}],"name":"name","state":"INDEX ACTIVE"}]`
		for _, path := range []string{p23Coll("shop", "users", "describe"), p23Path("shop", "describe")} {
			d := c.okObject(t, "POST", path, "")
			if colls, ok := d["collections"].([]any); ok {
				d = colls[0].(map[string]any)
			}
			b, _ := json.Marshal(d["indexes"])
			if string(b) != want {
				t.Errorf("%s: indexes %s, want %s", path, b, want)
			}
		}
		for _, path := range []string{collPath("shop", "users", "describe"), dbPath("shop", "describe")} {
			if r := c.ok(t, "POST", path, ""); strings.Contains(string(r.body), `"indexes":[`) || strings.Contains(string(r.body), `search_status`) {
				t.Errorf("the 2022 %s answers indexes or a search status: %s", path, r.body)
			}
		}
	})
}

// The 2023 describe of a collection says it can be searched: Folio's
// search covers every string field, marked searchIndex or not (the
// original said "No Search Index" until a field was marked). A database's
// describe has no search status, as in the original.
func TestDescribeSearchStatus23(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "shop")
		c.createColl(t, "shop", "users", usersSchema23)
		if d := c.okObject(t, "POST", p23Coll("shop", "users", "describe"), ""); d["search_status"] != "Search Active" {
			t.Errorf("search_status %v, want Search Active", d["search_status"])
		}
		// What the status promises: a search finds a document by a field
		// no schema marked for search.
		c.insert(t, "shop", "users", `{"id":1,"name":"ada lovelace"}`)
		r := c.ok(t, "POST", p23Coll("shop", "users", "documents/search"), `{"q":"lovelace"}`)
		if !strings.Contains(string(r.body), `"ada lovelace"`) {
			t.Errorf("search of an unmarked field: %s", r.body)
		}
		d := c.okObject(t, "POST", p23Path("shop", "describe"), "")
		if colls := d["collections"].([]any); len(colls) != 1 || colls[0].(map[string]any)["search_status"] != nil {
			t.Errorf("a database's describe: %v", d["collections"])
		}
	})
}

func toStrings(t testing.TB, v any) []string {
	t.Helper()
	arr, ok := v.([]any)
	if !ok {
		t.Fatalf("not an array: %v", v)
	}
	out := []string{}
	for _, e := range arr {
		s, ok := e.(string)
		if !ok {
			t.Fatalf("not a string: %v", e)
		}
		out = append(out, s)
	}
	return out
}

func TestBranches(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.ok(t, "POST", projectPath("shop", "create"), "")
		c.ok(t, "POST", p23Coll("shop", "users", "createOrUpdate"), `{"schema":`+usersSchema23+`}`)
		c.insert23(t, "shop", "", "users", `{"id":1,"name":"Ann"}`)

		got := c.okObject(t, "POST", p23Path("shop", "branches/feat/create"), "")
		if got["status"] != "created" {
			t.Errorf("create branch: %v", got)
		}
		c.ok(t, "POST", p23Path("shop", "branches/alpha.1/create"), "{}")
		for _, method := range []string{"GET", "POST"} {
			equalStrings(t, method+" branches", names(t, c.okObject(t, method, p23Path("shop", "branches"), ""), "branches", "branch"), []string{"main", "alpha.1", "feat"})
		}

		// A new branch has main's collections and schemas, and no documents.
		d := c.okObject(t, "POST", p23Path("shop", "describe"), `{"branch":"feat"}`)
		equalStrings(t, "branches", toStrings(t, d["branches"]), []string{"main", "alpha.1", "feat"})
		colls, _ := d["collections"].([]any)
		if len(colls) != 1 {
			t.Fatalf("branch describe: %v", d)
		}
		if coll := colls[0].(map[string]any); coll["collection"] != "users" || coll["size"] != json.Number("0") {
			t.Errorf("branch collection: %v", coll)
		}
		desc := c.okObject(t, "POST", p23Coll("shop", "users", "describe"), `{"branch":"feat"}`)
		mainDesc := c.okObject(t, "POST", p23Coll("shop", "users", "describe"), `{}`)
		if fmt.Sprint(desc["schema"]) != fmt.Sprint(mainDesc["schema"]) {
			t.Errorf("branch schema %v, main's %v", desc["schema"], mainDesc["schema"])
		}
		if r := c.read23(t, "shop", "feat", "users", `{}`); len(r) != 0 {
			t.Errorf("a new branch holds documents: %v", r)
		}

		// A branch's data is its own.
		c.insert23(t, "shop", "feat", "users", `{"id":7,"name":"Eve"}`)
		equalStrings(t, "branch", c.read23(t, "shop", "feat", "users", `{}`), []string{`{"id":7,"name":"Eve"}`})
		equalStrings(t, "main", c.read23(t, "shop", "main", "users", `{}`), []string{`{"id":1,"name":"Ann"}`})
		equalStrings(t, "main by 2022", c.all(t, "shop", "users"), []string{`{"id":1,"name":"Ann"}`})
		equalStrings(t, "other branch", c.read23(t, "shop", "alpha.1", "users", `{}`), nil)
		equalStrings(t, "branch search", hitField(t, c.searchAt(t, p23Doc("shop", "users", "search"), `{"branch":"feat","q":""}`), "name"), []string{`"Eve"`})
		equalStrings(t, "main search", hitField(t, c.searchAt(t, p23Doc("shop", "users", "search"), `{"q":""}`), "name"), []string{`"Ann"`})
		// A 2022 route reads no branch: main, whatever the body says.
		equalStrings(t, "2022 read naming a branch", c.docs(t, "shop", "users", `{"filter":{},"branch":"feat"}`), []string{`{"id":1,"name":"Ann"}`})

		// A schema changed on a branch stays there.
		c.ok(t, "POST", p23Coll("shop", "users", "createOrUpdate"), `{"branch":"feat","schema":{"title":"users","properties":{"id":{"type":"integer"},"name":{"type":"string"},"age":{"type":"integer"}},"primary_key":["id"]}}`)
		if s := fmt.Sprint(c.okObject(t, "POST", p23Coll("shop", "users", "describe"), "")["schema"]); strings.Contains(s, "age") {
			t.Errorf("main's schema changed with the branch's: %s", s)
		}

		// Branch storage is hidden.
		equalStrings(t, "projects", names(t, c.okObject(t, "GET", "/v1/projects", ""), "projects", "project"), []string{"shop"})
		equalStrings(t, "databases", names(t, c.okObject(t, "POST", "/v1/databases/list", ""), "databases", "db"), []string{"shop"})

		// Errors, in the original's words.
		wantError(t, c.do(t, "POST", p23Path("shop", "branches/feat/create"), ""), http.StatusConflict, "ALREADY_EXISTS", "branch already exist 'feat'")
		wantError(t, c.do(t, "POST", p23Path("shop", "branches/main/create"), ""), http.StatusConflict, "ALREADY_EXISTS", "branch already exist 'main'")
		wantError(t, c.do(t, "DELETE", p23Path("shop", "branches/main/delete"), ""), http.StatusBadRequest, "INVALID_ARGUMENT", "'main' database cannot be deleted.")
		wantError(t, c.do(t, "DELETE", p23Path("shop", "branches/nope/delete"), ""), http.StatusNotFound, "NOT_FOUND", "database branch doesn't exist 'nope'")
		wantError(t, c.do(t, "POST", p23Doc("shop", "users", "read"), `{"branch":"nope","filter":{}}`), http.StatusNotFound, "NOT_FOUND", "database branch doesn't exist 'nope'")
		wantError(t, c.do(t, "POST", p23Doc("shop", "users", "insert"), `{"branch":"nope","documents":[{"id":3}]}`), http.StatusNotFound, "NOT_FOUND", "database branch doesn't exist 'nope'")
		wantError(t, c.do(t, "POST", p23Path("shop", "describe"), `{"branch":"nope"}`), http.StatusNotFound, "NOT_FOUND", "database branch doesn't exist 'nope'")
		wantError(t, c.do(t, "GET", p23Path("shop", "collections")+"?branch=nope", ""), http.StatusNotFound, "NOT_FOUND", "database branch doesn't exist 'nope'")
		wantError(t, c.do(t, "POST", p23Doc("ghost", "users", "read"), `{"filter":{}}`), http.StatusNotFound, "NOT_FOUND", "project doesn't exist 'ghost'")
		wantError(t, c.do(t, "POST", p23Doc("ghost", "users", "read"), `{"branch":"feat","filter":{}}`), http.StatusNotFound, "NOT_FOUND", "project doesn't exist 'ghost'")
		wantError(t, c.do(t, "POST", p23Path("ghost", "branches/feat/create"), ""), http.StatusNotFound, "NOT_FOUND", "project doesn't exist 'ghost'")
		wantError(t, c.do(t, "DELETE", p23Path("ghost", "branches/feat/delete"), ""), http.StatusNotFound, "NOT_FOUND", "project doesn't exist 'ghost'")
		wantError(t, c.do(t, "GET", p23Path("ghost", "branches"), ""), http.StatusNotFound, "NOT_FOUND", "project doesn't exist 'ghost'")
		wantError(t, c.do(t, "POST", p23Doc("shop", "orders", "read"), `{"branch":"feat","filter":{}}`), http.StatusNotFound, "NOT_FOUND", "collection doesn't exist 'orders'")
		for _, bad := range []string{"a$b", "-x", "a/b", strings.Repeat("b", 65)} {
			r := c.do(t, "POST", p23Doc("shop", "users", "read"), `{"branch":`+quote(bad)+`,"filter":{}}`)
			wantError(t, r, http.StatusBadRequest, "INVALID_ARGUMENT", anyMessage)
		}
		wantError(t, c.do(t, "POST", p23Path("shop", "branches/a$b/create"), ""), http.StatusBadRequest, "INVALID_ARGUMENT", anyMessage)

		// Deleting a branch deletes its data: one created again is empty.
		got = c.okObject(t, "DELETE", p23Path("shop", "branches/feat/delete"), "")
		if got["status"] != "deleted" {
			t.Errorf("delete branch: %v", got)
		}
		wantError(t, c.do(t, "POST", p23Doc("shop", "users", "read"), `{"branch":"feat","filter":{}}`), http.StatusNotFound, "NOT_FOUND", "database branch doesn't exist 'feat'")
		c.ok(t, "POST", p23Path("shop", "branches/feat/create"), "")
		equalStrings(t, "branch created again", c.read23(t, "shop", "feat", "users", `{}`), nil)
		equalStrings(t, "main kept", c.read23(t, "shop", "", "users", `{}`), []string{`{"id":1,"name":"Ann"}`})

		// Deleting a project deletes its branches.
		c.insert23(t, "shop", "feat", "users", `{"id":8}`)
		c.ok(t, "DELETE", projectPath("shop", "delete"), "")
		c.ok(t, "POST", projectPath("shop", "create"), "")
		equalStrings(t, "branches of a project created again", names(t, c.okObject(t, "GET", p23Path("shop", "branches"), ""), "branches", "branch"), []string{"main"})
		c.ok(t, "POST", p23Coll("shop", "users", "createOrUpdate"), `{"schema":`+usersSchema23+`}`)
		c.ok(t, "POST", p23Path("shop", "branches/feat/create"), "")
		equalStrings(t, "branch of a project created again", c.read23(t, "shop", "feat", "users", `{}`), nil)
		// And so does dropping it as a 2022 database.
		c.ok(t, "DELETE", dbPath("shop", "drop"), "")
		equalStrings(t, "databases", names(t, c.okObject(t, "POST", "/v1/databases/list", ""), "databases", "db"), []string{})
		c.createDB(t, "shop")
		equalStrings(t, "branches after a 2022 drop", names(t, c.okObject(t, "GET", p23Path("shop", "branches"), ""), "branches", "branch"), []string{"main"})
	})
}

// Every 2023 document and collection route, on a branch.
func TestProjectRoutesOnBranch(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.ok(t, "POST", projectPath("shop", "create"), "")
		c.ok(t, "POST", p23Path("shop", "branches/dev/create"), "")
		const b = "dev"
		c.ok(t, "POST", p23Coll("shop", "users", "createOrUpdate"), withBranch(`{"schema":`+usersSchema23+`}`, b))
		equalStrings(t, "collections on dev", names(t, c.okObject(t, "GET", p23Path("shop", "collections")+"?branch=dev", ""), "collections", "collection"), []string{"users"})
		equalStrings(t, "collections on dev (POST)", names(t, c.okObject(t, "POST", p23Path("shop", "collections"), `{"branch":"dev"}`), "collections", "collection"), []string{"users"})
		equalStrings(t, "collections on main", names(t, c.okObject(t, "GET", p23Path("shop", "collections"), ""), "collections", "collection"), []string{})

		c.insert23(t, "shop", b, "users", `{"id":1,"name":"Ann"}`, `{"id":2,"name":"Bob"}`)
		c.ok(t, "PUT", p23Doc("shop", "users", "replace"), withBranch(`{"documents":[{"id":2,"name":"Bo"}]}`, b))
		up := c.okObject(t, "PUT", p23Doc("shop", "users", "update"), withBranch(`{"filter":{"id":1},"fields":{"$set":{"name":"Anne"}}}`, b))
		if up["modified_count"] != json.Number("1") {
			t.Errorf("update: %v", up)
		}
		equalStrings(t, "after writes", c.read23(t, "shop", b, "users", `{}`), []string{`{"id":1,"name":"Anne"}`, `{"id":2,"name":"Bo"}`})
		ex := c.okObject(t, "POST", p23Doc("shop", "users", "explain"), withBranch(`{"filter":{"name":"Bo"}}`, b))
		if ex["collection"] != "users" || ex["read_type"] != "secondary index" || ex["filter"] != `{"name":"Bo"}` || ex["matched"] != json.Number("1") {
			t.Errorf("explain: %v", ex)
		}
		del := c.okObject(t, "DELETE", p23Doc("shop", "users", "delete"), withBranch(`{"filter":{"id":2}}`, b))
		if del["modified_count"] != json.Number("1") {
			t.Errorf("delete: %v", del)
		}
		equalStrings(t, "after delete", c.read23(t, "shop", b, "users", `{}`), []string{`{"id":1,"name":"Anne"}`})
		// The 2022 explain has none of the 2023 members.
		c.createColl(t, "shop", "users", usersSchema23)
		if ex := c.okObject(t, "POST", docPath("shop", "users", "explain"), `{"filter":{}}`); ex["read_type"] != nil || ex["collection"] != nil {
			t.Errorf("2022 explain: %v", ex)
		}

		got := c.okObject(t, "DELETE", p23Coll("shop", "users", "drop"), withBranch("", b))
		if got["status"] != "dropped" {
			t.Errorf("drop: %v", got)
		}
		equalStrings(t, "collections on dev", names(t, c.okObject(t, "GET", p23Path("shop", "collections")+"?branch=dev", ""), "collections", "collection"), []string{})
		equalStrings(t, "collections on main", names(t, c.okObject(t, "GET", p23Path("shop", "collections"), ""), "collections", "collection"), []string{"users"})
		wantError(t, c.do(t, "POST", p23Coll("shop", "users", "describe"), withBranch("", b)), http.StatusNotFound, "NOT_FOUND", "collection doesn't exist 'users'")
	})
}

// A transaction is bound to the branch it began on.
func TestProjectTransactions(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.ok(t, "POST", projectPath("bank", "create"), "")
		c.ok(t, "POST", p23Coll("bank", "users", "createOrUpdate"), `{"schema":`+usersSchema23+`}`)
		c.ok(t, "POST", p23Path("bank", "branches/dev/create"), "")

		r := c.ok(t, "POST", p23Path("bank", "transactions/begin"), `{"branch":"dev"}`)
		var begun struct {
			TxCtx struct{ ID, Origin string } `json:"tx_ctx"`
		}
		if err := json.Unmarshal(r.body, &begun); err != nil || begun.TxCtx.ID == "" {
			t.Fatalf("begin: %s", r)
		}
		tx := &txClient{c: c, db: "bank", id: begun.TxCtx.ID, origin: begun.TxCtx.Origin}
		tx.ok(t, "POST", p23Doc("bank", "users", "insert"), `{"branch":"dev","documents":[{"id":1,"name":"Ann"}]}`)
		r = tx.do(t, "POST", p23Doc("bank", "users", "insert"), `{"documents":[{"id":2}]}`)
		msg := wantError(t, r, http.StatusBadRequest, "INVALID_ARGUMENT", anyMessage)
		if want := fmt.Sprintf("transaction %s belongs to branch 'dev' of database 'bank', not branch 'main' of database 'bank'", tx.id); !strings.HasPrefix(msg, want) {
			t.Errorf("message %q, want it to start with %q", msg, want)
		}
		// Over the 2022 route too: that is main.
		wantError(t, tx.do(t, "POST", docPath("bank", "users", "insert"), `{"documents":[{"id":2}]}`), http.StatusBadRequest, "INVALID_ARGUMENT", anyMessage)
		// Not yet committed: nobody else sees it.
		equalStrings(t, "dev before commit", c.read23(t, "bank", "dev", "users", `{}`), nil)
		got := tx.ok(t, "POST", p23Path("bank", "transactions/commit"), `{"branch":"dev"}`).object(t)
		if got["status"] != "committed" {
			t.Errorf("commit: %v", got)
		}
		equalStrings(t, "dev", c.read23(t, "bank", "dev", "users", `{}`), []string{`{"id":1,"name":"Ann"}`})
		equalStrings(t, "main", c.read23(t, "bank", "", "users", `{}`), nil)

		// Rollback, on main by default.
		r = c.ok(t, "POST", p23Path("bank", "transactions/begin"), "")
		if err := json.Unmarshal(r.body, &begun); err != nil {
			t.Fatal(err)
		}
		tx = &txClient{c: c, db: "bank", id: begun.TxCtx.ID, origin: begun.TxCtx.Origin}
		tx.ok(t, "POST", p23Doc("bank", "users", "insert"), `{"documents":[{"id":5}]}`)
		if got := tx.ok(t, "POST", p23Path("bank", "transactions/rollback"), "").object(t); got["status"] != "rolled back" {
			t.Errorf("rollback: %v", got)
		}
		equalStrings(t, "main after rollback", c.read23(t, "bank", "", "users", `{}`), nil)
		// A transaction begun on a branch that is not there fails at its
		// first request, as one on a database that is not there does.
		r = c.ok(t, "POST", p23Path("bank", "transactions/begin"), `{"branch":"nope"}`)
		if err := json.Unmarshal(r.body, &begun); err != nil {
			t.Fatal(err)
		}
		tx = &txClient{c: c, db: "bank", id: begun.TxCtx.ID, origin: begun.TxCtx.Origin}
		wantError(t, tx.do(t, "POST", p23Doc("bank", "users", "read"), `{"branch":"nope","filter":{}}`), http.StatusNotFound, "NOT_FOUND", "database branch doesn't exist 'nope'")
		tx.ok(t, "POST", p23Path("bank", "transactions/rollback"), `{"branch":"nope"}`)
	})
}

func TestCreateOrUpdateCollections(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.ok(t, "POST", projectPath("shop", "create"), "")
		const orders = `{"title":"orders","properties":{"id":{"type":"integer"},"total":{"type":"number"}},"primary_key":["id"]}`
		got := c.okObject(t, "POST", p23Path("shop", "collections/createOrUpdate"), `{"schemas":[`+usersSchema23+`,`+orders+`]}`)
		if fmt.Sprint(got["resp"]) != "[map[status:created] map[status:created]]" || len(got) != 1 {
			t.Errorf("createOrUpdate of two: %v", got)
		}
		equalStrings(t, "collections", names(t, c.okObject(t, "GET", p23Path("shop", "collections"), ""), "collections", "collection"), []string{"orders", "users"})
		// Again: an update of each, same answer.
		c.ok(t, "POST", p23Path("shop", "collections/createOrUpdate"), `{"schemas":[`+usersSchema23+`,`+orders+`]}`)

		// All or nothing: the new collection before a bad schema is not
		// created, the update before it not applied.
		const items = `{"title":"items","properties":{"id":{"type":"integer"}},"primary_key":["id"]}`
		const usersWider = `{"title":"users","properties":{"id":{"type":"integer"},"name":{"type":"string"},"age":{"type":"integer"}},"primary_key":["id"]}`
		const badOrders = `{"title":"orders","properties":{"id":{"type":"string"}},"primary_key":["id"]}`
		before := c.snapshot(t)
		msg := wantError(t, c.do(t, "POST", p23Path("shop", "collections/createOrUpdate"), `{"schemas":[`+items+`,`+usersWider+`,`+badOrders+`]}`),
			http.StatusBadRequest, "INVALID_ARGUMENT", anyMessage)
		if !strings.HasPrefix(msg, "schemas[2] (collection 'orders'): ") {
			t.Errorf("message %q does not name the schema", msg)
		}
		if after := c.snapshot(t); after != before {
			t.Errorf("a failed createOrUpdate changed the data:\n%s\nwas\n%s", after, before)
		}
		wantError(t, c.do(t, "POST", p23Path("shop", "collections/createOrUpdate"), `{"schemas":[`+items+`,{"properties":{}}]}`),
			http.StatusBadRequest, "INVALID_ARGUMENT", "Collection name is empty at index 1: a schema's title names its collection")
		wantError(t, c.do(t, "POST", p23Path("shop", "collections/createOrUpdate"), `{"schemas":[`+orders+`],"only_create":true}`),
			http.StatusConflict, "ALREADY_EXISTS", "schemas[0] (collection 'orders'): collection already exist; no collection was created or changed")
		wantError(t, c.do(t, "POST", p23Path("ghost", "collections/createOrUpdate"), `{"schemas":[`+orders+`]}`),
			http.StatusNotFound, "NOT_FOUND", "project doesn't exist 'ghost'")
		wantError(t, c.do(t, "POST", p23Path("shop", "collections/createOrUpdate"), `{"schemas":{}}`), http.StatusBadRequest, "INVALID_ARGUMENT", anyMessage)

		// On a branch: there only.
		c.ok(t, "POST", p23Path("shop", "branches/dev/create"), "")
		c.ok(t, "POST", p23Path("shop", "collections/createOrUpdate"), `{"branch":"dev","schemas":[`+items+`]}`)
		equalStrings(t, "dev", names(t, c.okObject(t, "GET", p23Path("shop", "collections")+"?branch=dev", ""), "collections", "collection"), []string{"items", "orders", "users"})
		equalStrings(t, "main", names(t, c.okObject(t, "GET", p23Path("shop", "collections"), ""), "collections", "collection"), []string{"orders", "users"})
		wantError(t, c.do(t, "POST", p23Path("shop", "collections/createOrUpdate"), `{"branch":"nope","schemas":[`+items+`]}`),
			http.StatusNotFound, "NOT_FOUND", "database branch doesn't exist 'nope'")
	})
}

// A wrong method or path under /v1/projects gets the API's 405 or 404.
func TestProjectRoutesUnknown(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		r := c.do(t, "PUT", projectPath("shop", "create"), "")
		wantError(t, r, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", anyMessage)
		if allow := r.header.Get("Allow"); !slices.Contains(strings.Split(allow, ", "), "POST") {
			t.Errorf("Allow %q", allow)
		}
		wantError(t, c.do(t, "POST", p23Path("shop", "nothing"), ""), http.StatusNotFound, "NOT_FOUND", "Not Found")
	})
}

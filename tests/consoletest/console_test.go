package consoletest

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/tests/backendtest"
)

// The console in a real browser, on each engine: the tests share the
// engine's two servers (without --auth, and with it), each in databases of
// its own.
func TestConsole(t *testing.T) {
	if testing.Short() {
		t.Skip("runs folio serve and Chromium")
	}
	startBrowser(t)
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		open := startConsole(t, b, false)
		secured := startConsole(t, b, true)
		for _, tc := range []struct {
			name string
			c    *console
			run  func(*testing.T, *console)
		}{
			{"NoSignInWithoutAuth", open, testNoSignInWithoutAuth},
			{"SignIn", secured, testSignIn},
			{"CreateDatabaseAndCollection", secured, testCreateDatabaseAndCollection},
			{"InsertAndEditDocument", open, testInsertAndEditDocument},
			{"FilterAndPage", open, testFilterAndPage},
			{"SearchWithFacet", open, testSearchWithFacet},
			{"LiveEvent", open, testLiveEvent},
			{"Messages", open, testMessages},
			{"ValidationErrorBesideField", open, testValidationError},
			{"ReaderRefusedWrite", secured, testReaderRefusedWrite},
			{"ScriptInDataIsText", open, testScriptInDataIsText},
			{"ScriptInDataIsTextSignedIn", secured, testScriptInDataIsText},
			{"ContentSecurityPolicy", open, testContentSecurityPolicy},
			{"DocumentKeyMustBeThePrimaryKey", open, testDocumentKeyMustBeThePrimaryKey},
			{"DotNamesRefused", open, testDotNamesRefused},
			{"SearchCallsEndWithThePage", open, testSearchCallsEndWithThePage},
			{"SignInNextStaysInConsole", secured, testSignInNextStaysInConsole},
			{"TokenInMemoryOnly", secured, testTokenInMemoryOnly},
			{"MarkupInSearchIsText", open, testMarkupInSearchIsText},
		} {
			t.Run(tc.name, func(t *testing.T) { tc.run(t, tc.c) })
		}
	})
}

// itemsSchema is the collection most tests use.
var itemsSchema = map[string]any{
	"id":   map[string]any{"type": "integer"},
	"name": map[string]any{"type": "string"},
	"kind": map[string]any{"type": "string"},
	"n":    map[string]any{"type": "integer"},
}

// newItems makes a database with an items collection holding docs.
func newItems(t *testing.T, c *console, prefix string, docs ...map[string]any) string {
	t.Helper()
	db := c.newDatabase(t, prefix)
	c.newCollection(t, db, "items", itemsSchema)
	if len(docs) > 0 {
		c.insert(t, db, "items", docs...)
	}
	return db
}

// docsPath is the address of db.coll's documents page.
func docsPath(db, coll string) string { return "/console/db/" + db + "/c/" + coll + "/docs" }

// docPath is the address of a document's page, by its key's JSON,
// escaped as the console writes it (links.js: as url.PathEscape does).
func docPath(db, coll, key string) string {
	return "/console/db/" + db + "/c/" + coll + "/doc/" + url.PathEscape(key)
}

// Without --auth the console never asks anyone to sign in: / leads to
// the databases page, which says there is no authentication.
func testNoSignInWithoutAuth(t *testing.T, c *console) {
	db := newItems(t, c, "noauth", map[string]any{"id": 1, "name": "one"})
	tb := newTab(t, c)
	tb.open("/", "databases")
	if got := tb.location(); got != "/console/" {
		t.Errorf("/ led to %s, want /console/", got)
	}
	tb.waitFor(testSel("db-row", attr("data-db", db)))
	tb.waitText(testSel("whoami"), "no authentication")
	if tb.count(testSel("signin-link")) != 0 {
		t.Error("a sign-in link on a server without --auth")
	}
	tb.open("/console/signin", "signin")
	tb.waitFor(testSel("signin-noauth"))
}

// With --auth: a deep link opens the sign-in page, a wrong secret gets the
// server's refusal as it said it, the right one goes on to the page asked
// for (its filter kept), and signing out asks again.
func testSignIn(t *testing.T, c *console) {
	db := newItems(t, c, "signin", map[string]any{"id": 1, "name": "one"}, map[string]any{"id": 2, "name": "two"})
	tb := newTab(t, c)
	deep := docsPath(db, "items") + "?filter=" + url.QueryEscape(`{"id":2}`)
	tb.do("open "+deep, navigate(tb, deep))
	tb.waitPage("signin")
	if loc := tb.location(); !strings.HasPrefix(loc, "/console/signin?next=") {
		t.Errorf("a deep link without a token led to %s, want the sign-in page with next=", loc)
	}

	status, body := c.tokenCall(t, c.owner.ClientID, "not the secret")
	if status != http.StatusUnauthorized {
		t.Fatalf("a wrong secret: %d %s", status, body)
	}
	code, message := apiError(t, body)
	tb.fill(testSel("signin-id"), c.owner.ClientID)
	tb.fill(testSel("signin-secret"), "not the secret")
	tb.click(testSel("signin-submit"))
	tb.waitText(pageSel("signin", true)+" "+testSel("error"), message)
	if got := tb.text(pageSel("signin", true) + " " + testSel("error-code")); got != code {
		t.Errorf("the refusal's code shown: %q, want %q", got, code)
	}

	tb.signIn()
	tb.waitPage("documents")
	if loc := tb.location(); loc != deep {
		t.Errorf("signed in at %s, want the page asked for, %s", loc, deep)
	}
	tb.waitFor(testSel("doc-row", attr("data-key", `{"id":2}`)))
	if n := tb.count(testSel("doc-row")); n != 1 {
		t.Errorf("%d rows under the deep link's filter, want 1", n)
	}
	tb.waitText(testSel("whoami"), "owner")

	tb.click(testSel("signout"))
	tb.waitPage("signin")
	tb.click(testSel("nav-databases"))
	tb.waitPage("signin")
}

// A database and a collection made in the console, signed in: each page
// leads to the next, and the databases page lists both.
func testCreateDatabaseAndCollection(t *testing.T, c *console) {
	tb := newTab(t, c)
	tb.open("/console/", "databases")
	db := fmt.Sprintf("made_%d", dbSeq.Add(1))
	tb.fill(testSel("db-create-name"), db)
	tb.click(testSel("db-create-submit"))
	tb.waitPage("database")
	if loc := tb.location(); loc != "/console/db/"+db {
		t.Errorf("after creating database %s the console is at %s", db, loc)
	}

	tb.fill(testSel("coll-create-name"), "books")
	// The schema's template follows the name typed.
	tb.waitJS("the template titled books", fmt.Sprintf(`document.querySelector(%s).value.includes('"title": "books"')`, jsString(testSel("coll-create-schema"))))
	tb.fill(testSel("coll-create-schema"), `{"title": "books", "properties": {"id": {"type": "integer"}, "title": {"type": "string"}, "pages": {"type": "integer"}}, "primary_key": ["id"]}`)
	tb.click(testSel("coll-create-submit"))
	tb.waitPage("collection")
	if loc := tb.location(); loc != "/console/db/"+db+"/c/books" {
		t.Errorf("after creating collection books the console is at %s", loc)
	}
	tb.waitFor(testSel("schema-field", attr("data-field", "pages")))

	tb.click(testSel("nav-databases"))
	tb.waitPage("databases")
	tb.waitFor(testSel("db-row", attr("data-db", db)))
	tb.waitFor(testSel("coll-row", attr("data-db", db), attr("data-coll", "books")))
	d := c.call(t, "POST", "/v1/databases/"+db+"/describe", nil)
	colls, _ := d["collections"].([]any)
	if len(colls) != 1 {
		t.Errorf("the API describes %s with collections %v, want books", db, d["collections"])
	}
}

// A document inserted on the documents page, opened from its row, edited
// and saved: the API reads the edit, and the page opened afresh shows it.
func testInsertAndEditDocument(t *testing.T, c *console) {
	db := newItems(t, c, "edit")
	tb := newTab(t, c)
	tb.open(docsPath(db, "items"), "documents")
	tb.fill(testSel("insert-editor"), `{"id": 7, "name": "Ada", "kind": "a", "n": 7}`)
	tb.click(testSel("insert-submit"))
	row := testSel("doc-row", attr("data-key", `{"id":7}`))
	tb.waitFor(row)
	tb.waitText(testSel("notice"), "Inserted 1 document")
	if got := c.readAll(t, db, "items", map[string]any{"id": 7}); len(got) != 1 || got[0]["name"] != "Ada" {
		t.Fatalf("the API reads %v after the insert", got)
	}

	tb.click(row + " " + testSel("doc-link"))
	tb.waitPage("document")
	if loc, want := tb.location(), docPath(db, "items", `{"id":7}`); loc != want {
		t.Errorf("the document's page is at %s, want %s", loc, want)
	}
	tb.waitText(testSel("doc-view"), `"Ada"`)
	tb.fill(testSel("doc-editor"), `{"id": 7, "name": "Ada Lovelace", "kind": "a", "n": 1815}`)
	tb.click(testSel("doc-save"))
	tb.waitText(testSel("doc-result")+" "+testSel("notice"), "Saved")
	got := c.readAll(t, db, "items", map[string]any{"id": 7})
	if len(got) != 1 || got[0]["name"] != "Ada Lovelace" || got[0]["n"] != float64(1815) {
		t.Fatalf("the API reads %v after the edit", got)
	}
	tb.open(docPath(db, "items", `{"id":7}`), "document")
	tb.waitText(testSel("doc-view"), `"Ada Lovelace"`)
}

// waitKeys waits until the rows the selector finds are the documents
// of these ids, in this order.
func (tb *tab) waitKeys(sel string, ids ...int) {
	tb.t.Helper()
	want := make([]string, len(ids))
	for i, id := range ids {
		want[i] = jsString(fmt.Sprintf(`{"id":%d}`, id))
	}
	tb.waitJS(fmt.Sprintf("rows %v", ids), fmt.Sprintf(`JSON.stringify(Array.from(document.querySelectorAll(%s), (el) => el.dataset.key)) === JSON.stringify([%s])`,
		jsString(sel), strings.Join(want, ",")))
}

// The documents page's filter, page size, next page and sort: each view
// has its address, and the address opened directly shows the same view.
func testFilterAndPage(t *testing.T, c *console) {
	var docs []map[string]any
	for i := 1; i <= 25; i++ {
		kind := "odd"
		if i%2 == 0 {
			kind = "even"
		}
		docs = append(docs, map[string]any{"id": i, "name": fmt.Sprintf("item %d", i), "kind": kind, "n": 100 - i})
	}
	db := newItems(t, c, "pages", docs...)
	tb := newTab(t, c)
	tb.open(docsPath(db, "items"), "documents")
	tb.waitFor(testSel("doc-row"))
	if n := tb.count(testSel("doc-row")); n != 25 {
		t.Errorf("%d rows unfiltered, want 25", n)
	}

	tb.fill(testSel("filter"), `{"kind": "even"}`)
	tb.fill(testSel("limit"), "5")
	tb.click(testSel("apply"))
	rows := pageSel("documents", true) + " " + testSel("doc-row")
	tb.waitKeys(rows, 2, 4, 6, 8, 10)
	tb.waitText(testSel("count"), "12 documents match")
	first := tb.location()
	if !strings.Contains(first, "filter=") || !strings.Contains(first, "limit=5") {
		t.Errorf("the filtered view's address %s does not carry its filter and page size", first)
	}

	tb.click(testSel("next-page"))
	tb.waitKeys(rows, 12, 14, 16, 18, 20)
	second := tb.location()
	if !strings.Contains(second, "page=") {
		t.Errorf("the second page's address %s carries no position", second)
	}
	tb.click(testSel("next-page"))
	tb.waitKeys(rows, 22, 24)
	if tb.count(testSel("next-page")) != 0 {
		t.Error("a next page after the last")
	}

	// The second page's address, opened as a bookmark.
	tb.open(second, "documents")
	tb.waitKeys(rows, 12, 14, 16, 18, 20)
	tb.click(testSel("first-page"))
	tb.waitKeys(rows, 2, 4, 6, 8, 10)

	// Sorted (n falls as id rises), then paged by skipping.
	tb.fill(testSel("sort"), "n")
	tb.click(testSel("apply"))
	tb.waitKeys(rows, 24, 22, 20, 18, 16)
	tb.click(testSel("next-page"))
	tb.waitKeys(rows, 14, 12, 10, 8, 6)
}

// A search with a facet: the facet's counts among the hits, as the
// search call answers them, and a count's link narrows the search.
func testSearchWithFacet(t *testing.T, c *console) {
	db := c.newDatabase(t, "search")
	c.newCollection(t, db, "products", map[string]any{
		"id": map[string]any{"type": "integer"}, "name": map[string]any{"type": "string"},
		"brand": map[string]any{"type": "string"}, "price": map[string]any{"type": "number"},
	})
	c.insert(t, db, "products",
		map[string]any{"id": 1, "name": "red running shoe", "brand": "acme", "price": 50},
		map[string]any{"id": 2, "name": "blue running shoe", "brand": "acme", "price": 60},
		map[string]any{"id": 3, "name": "walking shoe", "brand": "globex", "price": 70},
		map[string]any{"id": 4, "name": "rain coat", "brand": "acme", "price": 80},
		map[string]any{"id": 5, "name": "tennis shoe", "brand": "initech", "price": 90},
		map[string]any{"id": 6, "name": "wool hat", "brand": "globex", "price": 20},
	)
	tb := newTab(t, c)
	tb.open("/console/db/"+db+"/c/products/search", "search")
	tb.fill(testSel("search-q"), "shoe")
	tb.check(testSel("facet-choice", attr("value", "brand")), true)
	tb.click(testSel("search-submit"))
	facet := testSel("facet", attr("data-field", "brand"))
	tb.waitFor(pageSel("search", true) + " " + facet)
	tb.waitJS("four hits", fmt.Sprintf(`document.querySelectorAll(%s).length === 4`, jsString(pageSel("search", true)+" "+testSel("hit"))))
	for brand, want := range map[string]string{"acme": "2", "globex": "1", "initech": "1"} {
		got := tb.text(facet + " " + testSel("facet-value", attr("data-value", brand)) + " " + testSel("facet-count"))
		if got != want {
			t.Errorf("facet brand=%s shows %q, want %s", brand, got, want)
		}
	}
	if loc := tb.location(); !strings.Contains(loc, "q=shoe") || !strings.Contains(loc, "facets=brand") {
		t.Errorf("the search's address %s does not carry its words and facet", loc)
	}

	tb.click(facet + " " + testSel("facet-value", attr("data-value", "acme")) + " " + testSel("facet-filter"))
	tb.waitJS("acme's two hits", fmt.Sprintf(`Array.from(document.querySelectorAll(%s), (el) => el.dataset.key).sort().join(" ") === '{"id":1} {"id":2}'`,
		jsString(pageSel("search", true)+" "+testSel("hit"))))
}

// The live page shows a write made through the API while it is open.
func testLiveEvent(t *testing.T, c *console) {
	db := newItems(t, c, "live", map[string]any{"id": 1, "name": "before"})
	tb := newTab(t, c)
	tb.open("/console/db/"+db+"/c/items/live", "live")
	// Ready means the stream is open: this write must reach the page.
	c.insert(t, db, "items", map[string]any{"id": 42, "name": "written while watching", "kind": "live", "n": 1})
	ev := testSel("live-event", attr("data-op", "insert"))
	tb.waitText(ev, "written while watching")
	c.call(t, "PUT", "/v1/databases/"+db+"/collections/items/documents/update",
		map[string]any{"filter": map[string]any{"id": 42}, "fields": map[string]any{"$set": map[string]any{"name": "changed while watching"}}})
	tb.waitText(testSel("live-events"), "changed while watching")
	if n := tb.count(testSel("live-event")); n != 2 {
		t.Errorf("%d events shown, want the insert and the update", n)
	}
	if got := tb.text(testSel("live-event") + " " + testSel("event-op")); !strings.Contains(got, "update") {
		t.Errorf("the newest event shows op %q, want update first", got)
	}
	// Paused, the stream is closed; resumed, it opens after the last
	// position seen, so a change made in between arrives then.
	tb.click(testSel("live-toggle"))
	tb.waitJS("paused", `document.querySelector('[data-test="live-state"]').dataset.state === "paused"`)
	if got := tb.location(); !strings.Contains(got, "from=") {
		t.Errorf("the paused page's address %s does not keep its position", got)
	}
	c.insert(t, db, "items", map[string]any{"id": 43, "name": "written while paused", "kind": "live", "n": 2})
	tb.click(testSel("live-toggle"))
	tb.waitText(testSel("live-events"), "written while paused")
	if n := tb.count(testSel("live-event")); n != 3 {
		t.Errorf("%d events shown after resuming, want 3", n)
	}
}

// A document the schema refuses: the server's message shown beside the
// field it names, on the document's page and under the insert editor.
func testValidationError(t *testing.T, c *console) {
	db := newItems(t, c, "valid", map[string]any{"id": 1, "name": "Ann", "kind": "a", "n": 30})
	bad := map[string]any{"id": 1, "name": "Ann", "kind": "a", "n": "thirty"}
	status, body := c.send(t, "PUT", "/v1/databases/"+db+"/collections/items/documents/replace", map[string]any{"documents": []any{bad}})
	if status != http.StatusBadRequest {
		t.Fatalf("the API took a string for an integer: %d %s", status, body)
	}
	code, message := apiError(t, body)

	tb := newTab(t, c)
	tb.open(docPath(db, "items", `{"id":1}`), "document")
	tb.fill(testSel("doc-editor"), `{"id": 1, "name": "Ann", "kind": "a", "n": "thirty"}`)
	tb.click(testSel("doc-save"))
	fe := testSel("field-error", attr("data-field", "n"))
	tb.waitFor(fe)
	if shown := tb.text(fe); !strings.Contains(shown, message) || !strings.Contains(shown, code) {
		t.Errorf("the field's error shows %q, want the server's %s: %s", shown, code, message)
	}
	// Beside the field: on the field's own line of the document.
	if !eval[bool](tb, fmt.Sprintf(`document.querySelector(%s).closest('[data-field="n"]:not([data-test])') !== null`, jsString(fe))) {
		t.Error("the field's error is not on the field's line of the document")
	}
	if got := c.readAll(t, db, "items", map[string]any{"id": 1}); len(got) != 1 || got[0]["n"] != float64(30) {
		t.Errorf("the refused edit changed the document: %v", got)
	}

	tb.open(docsPath(db, "items"), "documents")
	tb.fill(testSel("insert-editor"), `{"id": 2, "name": "Bob", "n": "forty"}`)
	tb.click(testSel("insert-submit"))
	fe = testSel("insert-result") + " " + testSel("field-error", attr("data-field", "n"))
	tb.waitFor(fe)
	if shown := tb.text(fe); !strings.Contains(shown, code) {
		t.Errorf("the insert's field error shows %q, want the server's %s", shown, code)
	}
}

// A reader signs in, reads, and tries to write: the page shows the
// server's refusal, code and message, as the server said it.
func testReaderRefusedWrite(t *testing.T, c *console) {
	db := newItems(t, c, "reader", map[string]any{"id": 1, "name": "kept", "kind": "a", "n": 1})
	id, secret := c.newApplication(t, "reader-"+db, "reader")
	readerToken := c.accessToken(t, id, secret)
	status, body := c.sendAs(t, readerToken, "POST", "/v1/databases/"+db+"/collections/items/documents/insert",
		map[string]any{"documents": []any{map[string]any{"id": 2, "name": "refused"}}})
	if status != http.StatusForbidden {
		t.Fatalf("a reader's insert through the API: %d %s", status, body)
	}
	code, message := apiError(t, body)

	tb := newTab(t, c).as(id, secret)
	tb.open(docsPath(db, "items"), "documents")
	tb.waitText(testSel("whoami"), "reader")
	tb.waitFor(testSel("doc-row", attr("data-key", `{"id":1}`)))
	tb.fill(testSel("insert-editor"), `{"id": 2, "name": "refused", "kind": "b", "n": 2}`)
	tb.click(testSel("insert-submit"))
	errSel := testSel("insert-result") + " " + testSel("error")
	tb.waitFor(errSel)
	if got := tb.text(errSel + " " + testSel("error-code")); got != code {
		t.Errorf("the refusal's code shown: %q, want %q", got, code)
	}
	if got := tb.text(errSel + " " + testSel("error-message")); got != message {
		t.Errorf("the refusal's message shown: %q, want the server's %q", got, message)
	}
	if got := c.readAll(t, db, "items", map[string]any{"id": 2}); len(got) != 0 {
		t.Errorf("the reader's insert was written: %v", got)
	}
}

// xss is what documents hold in the test of escaping: markup that would
// run a script (or load an image that does) if it were ever parsed.
const (
	xssScript = `<script>alert(1)</script>`
	xssImage  = `<img src=x onerror="alert(2)">`
)

// A document holding markup shows it as text, on the documents page and
// the document's: no dialog opens, and the page holds no element from the
// data (its only scripts are the console's own modules).
func testScriptInDataIsText(t *testing.T, c *console) {
	db := newItems(t, c, "xss", map[string]any{"id": 1, "name": xssScript, "kind": xssImage, "n": 1})
	tb := newTab(t, c)
	tb.open(docsPath(db, "items"), "documents")
	row := testSel("doc-row", attr("data-key", `{"id":1}`))
	tb.waitFor(row)
	cells := tb.texts(row + " td")
	if !slices.Contains(cells, xssScript) || !slices.Contains(cells, xssImage) {
		t.Errorf("the row's cells show %q, want the markup as text: %q and %q", cells, xssScript, xssImage)
	}
	checkNoElementsFromData(tb)

	tb.click(row + " " + testSel("doc-link"))
	tb.waitPage("document")
	tb.waitText(testSel("doc-view"), `"`+xssScript+`"`)
	if got := eval[string](tb, fmt.Sprintf(`document.querySelector(%s).value`, jsString(testSel("doc-editor")))); !strings.Contains(got, xssScript) {
		t.Errorf("the editor holds %q, want the markup as text", got)
	}
	checkNoElementsFromData(tb)
	if d := tb.Dialogs(); len(d) != 0 {
		t.Errorf("the page opened dialogs: %q", d)
	}

	// The watch on dialogs sees one when there is one: an alert the test
	// opens itself is seen.
	tb.allow("the test's own")
	eval[chromedpVoid](tb, `alert("the test's own")`)
	if d := tb.Dialogs(); !slices.Contains(d, "alert: the test's own") {
		t.Fatalf("an alert went unseen: dialogs %q", d)
	}
}

// checkNoElementsFromData fails unless every script of the page is one
// of the console's modules and no element the data holds (an image, a
// script) exists.
func checkNoElementsFromData(tb *tab) {
	tb.t.Helper()
	scripts := eval[[]string](tb, `Array.from(document.scripts, (s) => s.src ? new URL(s.src).pathname : "inline: " + s.text)`)
	for _, s := range scripts {
		if !strings.HasPrefix(s, "/console/assets/") {
			tb.t.Errorf("a script that is not the console's: %q", s)
		}
	}
	if n := tb.count(`img`); n != 0 {
		tb.t.Errorf("%d images on a page of text", n)
	}
}

// The console's answers carry the content security policy, and no page
// breaks it: a tour of every page reports no violation, while the watch
// on violations does see one when a script makes it.
func testContentSecurityPolicy(t *testing.T, c *console) {
	const policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
	for _, path := range []string{"/console/", "/console/db/x/c/y/docs?filter=%7B%7D", "/console/assets/console.css", "/console/assets/js/app.js"} {
		res, err := http.Get(c.url(path))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %s", path, res.Status)
		}
		for name, want := range map[string]string{"Content-Security-Policy": policy, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"} {
			if got := res.Header.Get(name); got != want {
				t.Errorf("GET %s: %s %q, want %q", path, name, got, want)
			}
		}
	}

	db := newItems(t, c, "csp", map[string]any{"id": 1, "name": "one", "kind": "a", "n": 1})
	c.newCollection(t, db, "notes", map[string]any{"id": map[string]any{"type": "integer"}, "text": map[string]any{"type": "string"}})
	base := "/console/db/" + db
	tb := newTab(t, c)
	for _, p := range []struct{ path, page string }{
		{"/console/", "databases"},
		{base, "database"},
		{base + "/c/items", "collection"},
		{base + "/c/items/docs", "documents"},
		{docPath(db, "items", `{"id":1}`), "document"},
		{base + "/c/items/search?q=one&facets=kind", "search"},
		{base + "/c/items/live", "live"},
		{"/console/ops", "operations"},
		{"/console/admin", "admin"},
	} {
		tb.open(p.path, p.page)
	}
	if p := tb.problemsSoFar(); len(p) != 0 {
		t.Errorf("the tour of the pages: %q", p)
	}

	// An inline style, set by a script in a tab of its own, is refused,
	// and the refusal seen.
	control := newTab(t, c)
	control.open("/console/", "databases")
	control.allow("CSP violation", "Content Security Policy")
	eval[chromedpVoid](control, `document.body.setAttribute("style", "color: red")`)
	control.waitJS("the violation's report", `window.__folioCSP.length > 0`)
	waitUntil(t, "the violation reaches the test", func() bool {
		return slices.ContainsFunc(control.problemsSoFar(), func(p string) bool { return strings.Contains(p, "CSP violation") })
	})
}

// waitUntil waits, up to waitTimeout, until cond holds: for what happens
// in the browser and reaches the test as events.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", waitTimeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A messages collection: a message published from the page arrives in its
// subscription; with a filter applied, only the messages it matches
// arrive, from the console's form and from another client alike.
func testMessages(t *testing.T, c *console) {
	db := c.newDatabase(t, "msgs")
	c.call(t, "POST", "/v1/databases/"+db+"/collections/chat/createOrUpdate", map[string]any{"schema": map[string]any{
		"title": "chat", "collection_type": "messages",
		"properties": map[string]any{"text": map[string]any{"type": "string"}, "room": map[string]any{"type": "string"}}}})
	tb := newTab(t, c)
	tb.open("/console/db/"+db+"/c/chat/messages", "messages")
	tb.fill(testSel("publish-editor"), `{"text": "first", "room": "a"}`)
	tb.click(testSel("publish-submit"))
	tb.waitFor(testSel("publish-result"))
	tb.waitText(testSel("sub-messages"), "first")

	tb.fill(testSel("sub-filter"), `{"room": "b"}`)
	tb.click(testSel("sub-apply"))
	tb.waitJS("the filtered subscription open", `document.querySelector('[data-test="sub-state"]').dataset.state === "live"`)
	publish := func(room, text string) {
		c.call(t, "POST", "/v1/databases/"+db+"/collections/chat/messages/publish",
			map[string]any{"messages": []any{map[string]any{"text": text, "room": room}}})
	}
	publish("a", "not for this view")
	publish("b", "for this view")
	tb.waitText(testSel("sub-messages"), "for this view")
	if got := tb.texts(testSel("message-body")); len(got) != 1 || strings.Contains(strings.Join(got, " "), "not for this view") {
		t.Errorf("the filtered subscription shows %q, want only the message of room b", got)
	}
	if got := tb.location(); !strings.Contains(got, "filter=") {
		t.Errorf("the address %s does not keep the filter", got)
	}
}

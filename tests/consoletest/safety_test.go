package consoletest

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The console's guards against what an address, a form or the data may
// hold: each test here would fail with its guard taken out.

// docCount is the number of documents of db.coll, as the API counts them.
func (c *console) docCount(tb testing.TB, db, coll string) float64 {
	tb.Helper()
	out := c.call(tb, "POST", "/v1/projects/"+db+"/database/collections/"+coll+"/documents/count", map[string]any{"filter": map[string]any{}})
	n, ok := out["count"].(float64)
	if !ok {
		tb.Fatalf("count of %s.%s: %v", db, coll, out)
	}
	return n
}

// A document's page takes its address's key as the filter of its read and
// of its delete, so the key must be exactly one document's primary key:
// {} (which matches every document), a part of a composite key, a field
// outside the key, an operator or a value other than a scalar each get an
// error saying why, and no Save or Delete; the collection keeps all its
// documents. The right key still gets both.
func testDocumentKeyMustBeThePrimaryKey(t *testing.T, c *console) {
	db := newItems(t, c, "dockey",
		map[string]any{"id": 1, "name": "one", "kind": "a", "n": 1},
		map[string]any{"id": 2, "name": "two", "kind": "a", "n": 2},
		map[string]any{"id": 3, "name": "three", "kind": "b", "n": 3})
	c.newCollection(t, db, "pairs", map[string]any{
		"a": map[string]any{"type": "integer"}, "b": map[string]any{"type": "integer"}, "name": map[string]any{"type": "string"},
	}, "a", "b")
	c.insert(t, db, "pairs", map[string]any{"a": 1, "b": 1, "name": "one one"}, map[string]any{"a": 1, "b": 2, "name": "one two"})

	tb := newTab(t, c)
	for _, k := range []struct{ coll, key, why string }{
		{"items", `{}`, "lacks id"},
		{"items", `{"name":"one"}`, "not part of it"},
		{"items", `{"id":1,"name":"one"}`, "not part of it"},
		{"items", `{"id":{"$gte":0}}`, "must be a string, a number or a boolean"},
		{"items", `{"id":{"$eq":1}}`, "must be a string, a number or a boolean"},
		{"items", `{"id":null}`, "must be a string, a number or a boolean"},
		{"items", `{"id":[1]}`, "must be a string, a number or a boolean"},
		{"items", `{"$or":[{"id":1},{"id":2}]}`, "not part of it"},
		{"pairs", `{"a":1}`, "lacks b"},
		// The server's answer to a string for an integer key is its own; no
		// document of another key may be offered for deleting whatever it is.
		{"items", `{"id":"1"}`, ""},
	} {
		before := c.docCount(t, db, k.coll)
		tb.open(docPath(db, k.coll, k.key), "document")
		root := pageSel("document", true)
		if k.why != "" {
			tb.waitText(root+" "+testSel("error"), k.why)
		} else {
			tb.waitFor(root + " " + testSel("error") + ", " + root + " " + testSel("not-found"))
		}
		for _, control := range []string{"doc-delete", "doc-save", "doc-editor"} {
			if n := tb.count(root + " " + testSel(control)); n != 0 {
				t.Errorf("the key %s of %s: the page offers %s", k.key, k.coll, control)
			}
		}
		if after := c.docCount(t, db, k.coll); after != before {
			t.Errorf("the key %s of %s: %v documents before, %v after", k.key, k.coll, before, after)
		}
	}

	// The keys that are whole: the page offers Save and Delete.
	for _, k := range []struct{ coll, key string }{{"items", `{"id":2}`}, {"pairs", `{"a":1,"b":2}`}, {"pairs", `{"b":1,"a":1}`}} {
		tb.open(docPath(db, k.coll, k.key), "document")
		tb.waitFor(pageSel("document", true) + " " + testSel("doc-delete"))
		if n := tb.count(pageSel("document", true) + " " + testSel("error")); n != 0 {
			t.Errorf("the whole key %s of %s: an error: %s", k.key, k.coll, tb.text(testSel("error")))
		}
	}
	tb.click(testSel("doc-delete"))
	tb.click(testSel("doc-delete-yes"))
	tb.waitPage("documents")
	if got := c.readAll(t, db, "pairs", nil); len(got) != 1 || got[0]["b"] != float64(2) {
		t.Errorf("deleting {a:1, b:1} left %v, want {a:1, b:2} alone", got)
	}
}

// "." and ".." typed as a database's, a collection's or a branch's name
// would become steps of the API's path in the browser, and the call would
// reach another route: the console refuses them before calling, and
// nothing is made.
func testDotNamesRefused(t *testing.T, c *console) {
	db := c.newDatabase(t, "dots")
	projects := func() []string {
		out := c.call(t, "GET", "/v1/projects", nil)
		var names []string
		ps, _ := out["projects"].([]any)
		for _, p := range ps {
			m, _ := p.(map[string]any)
			names = append(names, fmt.Sprint(m["project"]))
		}
		slices.Sort(names)
		return names
	}
	before := projects()

	tb := newTab(t, c)
	tb.open("/console/", "databases")
	for _, name := range []string{".", ".."} {
		tb.fill(testSel("db-create-name"), name)
		tb.click(testSel("db-create-submit"))
		tb.waitText(pageSel("databases", true)+" "+testSel("error-message"), `"`+name+`" cannot be a database's name`)
		if loc := tb.location(); loc != "/console/" {
			t.Errorf("the database %q: the console went on to %s", name, loc)
		}
	}

	tb.open("/console/db/"+db, "database")
	for _, name := range []string{".", ".."} {
		tb.fill(testSel("coll-create-name"), name)
		tb.click(testSel("coll-create-submit"))
		tb.waitText(testSel("coll-create")+" "+testSel("error-message"), `"`+name+`" cannot be a collection's name`)
		tb.fill(testSel("branch-create-name"), name)
		tb.click(testSel("branch-create-submit"))
		branchForm := `div:has(> form ` + testSel("branch-create-name") + `)`
		tb.waitText(branchForm+" "+testSel("error-message"), `"`+name+`" cannot be a branch's name`)
		if loc := tb.location(); loc != "/console/db/"+db {
			t.Errorf("the name %q: the console went on to %s", name, loc)
		}
	}

	if after := projects(); !slices.Equal(after, before) {
		t.Errorf("databases before %v, after %v", before, after)
	}
	d := c.call(t, "POST", "/v1/projects/"+db+"/database/describe", map[string]any{})
	if colls, _ := d["collections"].([]any); len(colls) != 0 {
		t.Errorf("%s has collections %v, want none", db, colls)
	}
	if branches, _ := d["branches"].([]any); len(branches) > 1 {
		t.Errorf("%s has branches %v, want main only", db, branches)
	}
}

// recordFetches makes the page note every request it makes from now on,
// with its signal, in window.__calls (api.js calls the global fetch).
const recordFetches = `(() => {
	window.__calls = [];
	const f = window.fetch;
	window.fetch = (u, init) => { window.__calls.push({ url: String(u), signal: init && init.signal }); return f(u, init); };
	return true;
})()`

// Leaving the search page cancels its calls: the describe, the "more like
// this" read of the document and the search each carry the page's signal,
// aborted once another page is shown.
func testSearchCallsEndWithThePage(t *testing.T, c *console) {
	db := c.newDatabase(t, "searchabort")
	c.newCollection(t, db, "things", map[string]any{
		"id": map[string]any{"type": "integer"}, "name": map[string]any{"type": "string"},
		"v": map[string]any{"type": "array", "format": "vector", "dimensions": 2},
	})
	c.insert(t, db, "things",
		map[string]any{"id": 1, "name": "one", "v": []any{1, 0}},
		map[string]any{"id": 2, "name": "two", "v": []any{0, 1}})

	tb := newTab(t, c)
	tb.open("/console/db/"+db+"/c/things", "collection")
	eval[bool](tb, recordFetches)
	for _, q := range []string{"q=one", "like=" + url.QueryEscape(`{"id":1}`) + "&vector=v"} {
		eval[bool](tb, `window.__calls = []; true`)
		// The router's own navigation (no load: the recorder stays).
		href := "/console/db/" + db + "/c/things/search?" + q
		eval[bool](tb, fmt.Sprintf(`window.dispatchEvent(new CustomEvent("console:go", {detail: {href: %s}})); true`, jsString(href)))
		tb.waitPage("search")
		calls := eval[[]string](tb, `window.__calls.map((c) => new URL(c.url, location.href).pathname.replace(/^.*\//, ""))`)
		want := []string{"describe", "search"}
		if strings.HasPrefix(q, "like=") {
			want = []string{"describe", "read", "search"}
		}
		if !slices.Equal(calls, want) {
			t.Fatalf("search?%s made the calls %q, want %q", q, calls, want)
		}
		eval[bool](tb, `window.__searchCalls = window.__calls.slice(); true`)
		tb.click(testSel("tab-collection"))
		tb.waitPage("collection")
		open := eval[[]string](tb, `window.__searchCalls.filter((c) => !(c.signal && c.signal.aborted)).map((c) => c.url)`)
		if len(open) != 0 {
			t.Errorf("search?%s: after leaving the page, calls without the page's aborted signal: %q", q, open)
		}
	}
}

// After signing in, the console goes on to next only if it is a page of
// the console on this origin: another site, a protocol-relative address,
// a javascript: URL and a path that climbs out of /console/ all lead to
// the databases page, with no dialog.
func testSignInNextStaysInConsole(t *testing.T, c *console) {
	tb := newTab(t, c)
	for _, next := range []string{"https://evil.example", "//evil.example", "javascript:alert(1)", "/console/..//evil.example",
		`/console/..\evil.example`, "/console/assets/js/app.js"} {
		tb.do("open the sign-in page with next="+next, navigate(tb, "/console/signin?next="+url.QueryEscape(next)))
		tb.waitPage("signin")
		tb.signIn()
		tb.waitJS("a page after signing in", `document.querySelector('[data-page][data-ready="1"]:not([data-page="signin"])') !== null`)
		origin := eval[string](tb, `location.origin`)
		path := eval[string](tb, `location.pathname`)
		if origin != c.base || !strings.HasPrefix(path, "/console/") || strings.HasPrefix(path, "/console/assets/") {
			t.Errorf("next=%s led to %s%s, want a page of the console on %s", next, origin, path, c.base)
		}
		if shown := eval[string](tb, `document.querySelector('[data-page][data-ready="1"]').dataset.page`); shown != "databases" {
			t.Errorf("next=%s led to the page %q, want databases", next, shown)
		}
	}
	if d := tb.Dialogs(); len(d) != 0 {
		t.Errorf("dialogs: %q", d)
	}

	// A next inside the console is still followed.
	next := "/console/ops?every=60"
	tb.do("open the sign-in page with next="+next, navigate(tb, "/console/signin?next="+url.QueryEscape(next)))
	tb.waitPage("signin")
	tb.signIn()
	tb.waitPage("operations")
	if loc := tb.location(); loc != next {
		t.Errorf("next=%s led to %s", next, loc)
	}
}

// The token lives in the page's memory only: nothing is stored, and
// reloading the page asks to sign in again.
func testTokenInMemoryOnly(t *testing.T, c *console) {
	tb := newTab(t, c)
	tb.open("/console/", "databases")
	tb.waitText(testSel("whoami"), "owner")
	if stored := eval[string](tb, `JSON.stringify([localStorage.length, sessionStorage.length, document.cookie])`); stored != `[0,0,""]` {
		t.Errorf("the signed-in page stored [localStorage, sessionStorage, cookie] = %s", stored)
	}
	tb.do("reload", chromedp.Reload())
	tb.waitPage("signin")
	if loc := tb.location(); !strings.HasPrefix(loc, "/console/signin?next=") {
		t.Errorf("after a reload the console is at %s, want the sign-in page", loc)
	}
	if n := tb.count(testSel("signout")); n != 0 {
		t.Error("after a reload the header still offers to sign out")
	}
}

// Markup in the data a search shows, in a hit and in a facet's value, and
// in the server's error message, is shown as text: no dialog, no element
// from the data.
func testMarkupInSearchIsText(t *testing.T, c *console) {
	const script, image = `<script>alert(1)</script>`, `<img src=x onerror=alert(1)>`
	db := c.newDatabase(t, "searchxss")
	c.newCollection(t, db, "products", map[string]any{
		"id": map[string]any{"type": "integer"}, "name": map[string]any{"type": "string"}, "brand": map[string]any{"type": "string"},
	})
	c.insert(t, db, "products",
		map[string]any{"id": 1, "name": script, "brand": image},
		map[string]any{"id": 2, "name": image, "brand": script})

	tb := newTab(t, c)
	base := "/console/db/" + db + "/c/products/search"
	tb.open(base+"?facets=brand", "search")
	hits := pageSel("search", true) + " " + testSel("hit")
	tb.waitJS("two hits", fmt.Sprintf(`document.querySelectorAll(%s).length === 2`, jsString(hits)))
	cells := tb.texts(hits + " td")
	if !slices.Contains(cells, script) || !slices.Contains(cells, image) {
		t.Errorf("the hits' cells show %q, want the markup as text: %q and %q", cells, script, image)
	}
	for _, v := range []string{script, image} {
		value := testSel("facet", attr("data-field", "brand")) + " " + testSel("facet-value", attr("data-value", v))
		if got := tb.text(value + " " + testSel("facet-filter")); got != v {
			t.Errorf("the facet's value shows %q, want %q", got, v)
		}
	}
	checkNoElementsFromData(tb)

	// The server's error names the operator it does not know: the markup.
	filter := `{"name":{"$` + script + `":1}}`
	status, body := c.send(t, "POST", "/v1/projects/"+db+"/database/collections/products/documents/search",
		map[string]any{"q": "", "filter": map[string]any{"name": map[string]any{"$" + script: 1}}, "page": 1, "page_size": 20})
	if status != http.StatusBadRequest {
		t.Fatalf("a search with the operator $%s: %d %s", script, status, body)
	}
	_, message := apiError(t, body)
	if !strings.Contains(message, script) {
		t.Fatalf("the server's message %q does not repeat the markup: the test needs another error", message)
	}
	tb.open(base+"?filter="+url.QueryEscape(filter), "search")
	msg := pageSel("search", true) + " " + testSel("error") + " " + testSel("error-message")
	tb.waitFor(msg)
	if got := tb.text(msg); got != message {
		t.Errorf("the error shows %q, want the server's message as text, %q", got, message)
	}
	checkNoElementsFromData(tb)
	if d := tb.Dialogs(); len(d) != 0 {
		t.Errorf("the page opened dialogs: %q", d)
	}
}

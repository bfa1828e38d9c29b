package console

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func get(t *testing.T, h http.Handler, method, target string, header ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The security headers are on every answer of the console: the shell, an
// asset, a redirect, a 404 and a 405 alike.
func TestSecurityHeadersOnEveryAnswer(t *testing.T) {
	h := Handler()
	for _, c := range []struct{ method, target string }{
		{"GET", "/"}, {"GET", "/console"}, {"GET", "/console/"}, {"GET", "/console/db/shop/c/users/docs?filter=%7B%7D"},
		{"GET", "/console/assets/js/app.js"}, {"GET", "/console/assets/console.css"}, {"HEAD", "/console/"},
		{"GET", "/console/assets/nothing.js"}, {"POST", "/console/"}, {"DELETE", "/console/assets/js/app.js"},
	} {
		res := get(t, h, c.method, c.target)
		for name, want := range map[string]string{
			"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
			"X-Content-Type-Options":  "nosniff",
			"Referrer-Policy":         "no-referrer",
		} {
			if got := res.Header.Get(name); got != want {
				t.Errorf("%s %s: %s %q, want %q", c.method, c.target, name, got, want)
			}
		}
	}
}

func TestRootAndBarePrefixRedirectToTheConsole(t *testing.T) {
	h := Handler()
	for _, target := range []string{"/", "/console"} {
		res := get(t, h, "GET", target)
		if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/console/" {
			t.Errorf("GET %s: %d Location %q, want 302 to /console/", target, res.StatusCode, res.Header.Get("Location"))
		}
	}
}

// Every page's address outside /console/assets/ is answered with the shell,
// which the client routes: deep links open directly.
func TestEveryPageAddressServesTheShell(t *testing.T) {
	h := Handler()
	for _, target := range []string{"/console/", "/console/signin?next=%2Fconsole%2Fops", "/console/db/shop",
		"/console/db/shop/c/users/docs?filter=%7B%22a%22%3A1%7D&page=abc", "/console/db/shop/c/users/doc/%7B%22id%22%3A1%7D",
		"/console/no/such/page"} {
		res := get(t, h, "GET", target)
		b := body(t, res)
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/html; charset=utf-8" || !strings.Contains(b, `<main id="view"`) {
			t.Errorf("GET %s: %d %s, want the shell", target, res.StatusCode, res.Header.Get("Content-Type"))
		}
		if cc := res.Header.Get("Cache-Control"); cc != "no-cache" {
			t.Errorf("GET %s: Cache-Control %q, want no-cache: the shell names the current versions", target, cc)
		}
	}
}

func TestAssetsHaveTheirTypes(t *testing.T) {
	h := Handler()
	want := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".html": "text/html; charset=utf-8"}
	n := 0
	fs.WalkDir(assets, "assets", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		target := "/console/" + name
		res := get(t, h, "GET", target)
		if res.StatusCode != 200 {
			t.Errorf("GET %s: %d", target, res.StatusCode)
		}
		if w, ok := want[path.Ext(name)]; ok && res.Header.Get("Content-Type") != w {
			t.Errorf("GET %s: Content-Type %q, want %q", target, res.Header.Get("Content-Type"), w)
		}
		if b, _ := fs.ReadFile(assets, name); body(t, res) != string(b) {
			t.Errorf("GET %s: not the file's content", target)
		}
		return nil
	})
	if n < 10 {
		t.Fatalf("%d assets embedded: the shell, the style sheet and the modules are missing", n)
	}
}

// A plain name is revalidated every time (no-cache, with an ETag that gets
// a 304 while the file is unchanged); the versioned name the shell uses
// is kept for good; a version that is not the content's is no file.
func TestCachingByName(t *testing.T) {
	h := Handler()
	res := get(t, h, "GET", "/console/assets/js/dom.js")
	etag := res.Header.Get("ETag")
	if res.Header.Get("Cache-Control") != "no-cache" || etag == "" {
		t.Fatalf("plain name: Cache-Control %q ETag %q, want no-cache with an ETag", res.Header.Get("Cache-Control"), etag)
	}
	if res := get(t, h, "GET", "/console/assets/js/dom.js", "If-None-Match", etag); res.StatusCode != http.StatusNotModified {
		t.Errorf("revalidation with the current ETag: %d, want 304", res.StatusCode)
	}
	if res := get(t, h, "GET", "/console/assets/js/dom.js", "If-None-Match", `"other"`); res.StatusCode != 200 {
		t.Errorf("revalidation with another ETag: %d, want 200", res.StatusCode)
	}

	shell := body(t, get(t, h, "GET", "/console/"))
	m := regexp.MustCompile(`/console/assets/js/app\.([0-9a-f]{12})\.js`).FindStringSubmatch(shell)
	if m == nil {
		t.Fatalf("the shell does not load the entry module by its versioned name:\n%s", shell)
	}
	if !regexp.MustCompile(`/console/assets/console\.[0-9a-f]{12}\.css`).MatchString(shell) {
		t.Errorf("the shell does not load the style sheet by its versioned name")
	}
	res = get(t, h, "GET", m[0])
	if res.StatusCode != 200 || res.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
		t.Errorf("GET %s: %d Cache-Control %q, want 200 immutable", m[0], res.StatusCode, res.Header.Get("Cache-Control"))
	}
	if plain := body(t, get(t, h, "GET", "/console/assets/js/app.js")); body(t, res) != plain {
		t.Errorf("the versioned entry is not app.js")
	}
	if res := get(t, h, "GET", "/console/assets/js/app.000000000000.js"); res.StatusCode != http.StatusNotFound {
		t.Errorf("a stale version: %d, want 404", res.StatusCode)
	}
}

// A missing file under assets/ is a 404, not the shell: a module answered
// with HTML would fail in the browser with a MIME error hiding the cause.
func TestMissingAssetIsNotFound(t *testing.T) {
	res := get(t, Handler(), "GET", "/console/assets/js/pages/nothing.js")
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("missing asset: %d, want 404", res.StatusCode)
	}
}

func TestOnlyGetAndHead(t *testing.T) {
	h := Handler()
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		res := get(t, h, m, "/console/")
		if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s /console/: %d Allow %q, want 405 GET, HEAD", m, res.StatusCode, res.Header.Get("Allow"))
		}
	}
	res := get(t, h, "HEAD", "/console/assets/js/app.js")
	if res.StatusCode != 200 || body(t, res) != "" || res.Header.Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Errorf("HEAD: %d %q, want 200 with the headers and no body", res.StatusCode, res.Header.Get("Content-Type"))
	}
}

func TestServes(t *testing.T) {
	for path, want := range map[string]bool{"/": true, "/console": true, "/console/": true, "/console/x": true,
		"/v1/health": false, "/metrics": false, "/consoles": false, "/v1/console/": false} {
		if Serves(path) != want {
			t.Errorf("Serves(%q) = %v", path, !want)
		}
	}
}

// The shell runs under the policy only if it has no inline script or
// style: every script is an external module of the console's own, every
// style sheet too, no element has an event handler or style attribute,
// and nothing is loaded from another origin.
func TestTheShellHasNothingInline(t *testing.T) {
	b, err := fs.ReadFile(assets, "assets/index.html")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	scripts := 0
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			attrs := map[string]string{}
			for _, a := range n.Attr {
				attrs[a.Key] = a.Val
				if strings.HasPrefix(a.Key, "on") || a.Key == "style" {
					t.Errorf("<%s %s=…>: inline code or style, which the policy blocks", n.Data, a.Key)
				}
				if (a.Key == "src" || a.Key == "href") && !strings.HasPrefix(a.Val, "/console/") && !strings.HasPrefix(a.Val, "data:") {
					t.Errorf("<%s %s=%q>: outside the console (no network at run time)", n.Data, a.Key, a.Val)
				}
			}
			switch n.Data {
			case "script":
				scripts++
				if attrs["src"] == "" || attrs["type"] != "module" || n.FirstChild != nil {
					t.Errorf("a <script> that is not an external module: %v", attrs)
				}
			case "style":
				t.Errorf("a <style> element: the policy allows only the style sheet")
			case "link":
				if attrs["rel"] == "stylesheet" && !strings.HasPrefix(attrs["href"], "/console/assets/") {
					t.Errorf("a style sheet from elsewhere: %q", attrs["href"])
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if scripts != 1 {
		t.Errorf("%d scripts in the shell, want the one entry module", scripts)
	}
}

// The modules build the page from text nodes only: none parses HTML or
// runs text as code, and none reaches another origin or keeps the token
// where it outlives the page.
func TestModulesNeitherParseHTMLNorCallOut(t *testing.T) {
	banned := bannedInModules
	fs.WalkDir(assets, "assets", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (path.Ext(name) != ".js" && path.Ext(name) != ".css") {
			return err
		}
		b, _ := fs.ReadFile(assets, name)
		for i, line := range strings.Split(string(b), "\n") {
			if trimmed := strings.TrimSpace(line); strings.HasPrefix(trimmed, "//") || strings.HasPrefix(trimmed, "/*") || strings.HasPrefix(trimmed, "*") {
				continue // comments may name what is not done
			}
			// The SVG namespace is a name that createElementNS takes, not an
			// address anything is fetched from.
			line = strings.ReplaceAll(line, `"http://www.w3.org/2000/svg"`, `""`)
			if m := banned.FindString(line); m != "" {
				t.Errorf("%s:%d: %s", name, i+1, m)
			}
		}
		return nil
	})
}

// bannedInModules is what no module of the console may hold outside a
// comment: every way of turning text into markup or code (the HTML
// parsers, by property, by bracket or by method, and an iframe's srcdoc),
// the storages that outlive the page, and another origin's address.
var bannedInModules = regexp.MustCompile(`\.innerHTML|\.outerHTML|\[\s*["'\x60](?:inner|outer)HTML["'\x60]\s*\]|insertAdjacentHTML|` +
	`document\.write|\bDOMParser\b|createContextualFragment|setHTMLUnsafe|parseHTMLUnsafe|\bsrcdoc\b|` +
	`\beval\(|new Function\(|localStorage|sessionStorage|document\.cookie|https?://`)

// The ban list catches each way in, however it is spelled, and not the
// console's ordinary code.
func TestTheBanListCatchesEveryParser(t *testing.T) {
	for _, line := range []string{
		`el.innerHTML = text;`, `el.outerHTML = text;`, `el["innerHTML"] = text;`, `el[ 'outerHTML' ] = text;`, "el[`innerHTML`] = text;",
		`el.insertAdjacentHTML("beforeend", text);`, `document.write(text);`,
		`const doc = new DOMParser().parseFromString(text, "text/html");`, `document.createRange().createContextualFragment(text);`,
		`el.setHTMLUnsafe(text);`, `Document.parseHTMLUnsafe(text);`, `h("iframe", { srcdoc: text });`, `frame.srcdoc = text;`,
		`eval(text);`, `new Function(text)();`, `localStorage.setItem("t", token);`, `sessionStorage.t = token;`, `document.cookie = token;`,
		`fetch("https://elsewhere.example/");`,
	} {
		if !bannedInModules.MatchString(line) {
			t.Errorf("the ban list lets through %s", line)
		}
	}
	for _, line := range []string{
		`el.appendChild(document.createTextNode(String(c)));`, `box.replaceChildren(jsonView(next, { open: 3 }));`,
		`el.textContent = text;`, `h("p", { "data-test": "innerhtml-free" }, "HTML is shown as text");`,
	} {
		if m := bannedInModules.FindString(line); m != "" {
			t.Errorf("the ban list refuses ordinary code %s (%s)", line, m)
		}
	}
}

// Every import of every module names a module that is embedded: there is
// no build step to catch a typo, and a page that fails to load is a blank
// page.
func TestEveryImportResolves(t *testing.T) {
	imports := regexp.MustCompile(`(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)"(\.{1,2}/[^"]+)"`)
	n := 0
	fs.WalkDir(assets, "assets", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(name) != ".js" {
			return err
		}
		b, _ := fs.ReadFile(assets, name)
		for _, m := range imports.FindAllStringSubmatch(string(b), -1) {
			n++
			target := path.Join(path.Dir(name), m[1])
			if _, err := fs.Stat(assets, target); err != nil {
				t.Errorf("%s imports %s: no such module", name, m[1])
			}
			if path.Base(target) == "app.js" {
				t.Errorf("%s imports app.js: the shell loads it by a versioned name, so that would be a second instance; use go() of dom.js", name)
			}
		}
		return nil
	})
	if n < 15 {
		t.Fatalf("%d imports found: the pattern is out of date", n)
	}
}

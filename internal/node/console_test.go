package node_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
)

// startWith starts a node on a free port with set applied to its default
// configuration, and returns its base URL.
func startWith(t *testing.T, set func(*node.Config)) string {
	t.Helper()
	n, err := node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
		nc.Store = backendtest.OpenPebble(t)
		nc.Addr = "127.0.0.1:0"
		set(nc)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return "http://" + n.Addr().String()
}

type answer struct {
	status     int
	proto      int
	body       string
	location   string
	csp, ctype string
}

func fetch(t *testing.T, c *http.Client, method, url string) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return answer{res.StatusCode, res.ProtoMajor, string(b), res.Header.Get("Location"), res.Header.Get("Content-Security-Policy"), res.Header.Get("Content-Type")}
}

// clients: HTTP/1.1, and HTTP/2 without TLS (prior knowledge), neither
// following redirects.
func clients() map[string]*http.Client {
	noFollow := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	h2c := new(http.Protocols)
	h2c.SetUnencryptedHTTP2(true)
	return map[string]*http.Client{
		"HTTP/1.1": {Transport: &http.Transport{}, CheckRedirect: noFollow},
		"h2c":      {Transport: &http.Transport{Protocols: h2c}, CheckRedirect: noFollow},
	}
}

// The console is served beside the API on both HTTP/1.1 servers and over
// HTTP/2, and the API answers as before.
func TestConsoleServedOnEveryHTTPServer(t *testing.T) {
	for _, server := range []string{node.HTTP1FastHTTP, node.HTTP1NetHTTP} {
		t.Run(server, func(t *testing.T) {
			base := startWith(t, func(nc *node.Config) { nc.HTTP1Server = server })
			for name, c := range clients() {
				wantProto := 1
				if name == "h2c" {
					wantProto = 2
				}
				a := fetch(t, c, "GET", base+"/console/db/shop/c/users/docs?filter=%7B%7D")
				if a.status != 200 || a.proto != wantProto || !strings.Contains(a.body, `<main id="view"`) || a.csp == "" {
					t.Errorf("%s: a page's address: %d HTTP/%d %q CSP %q, want the shell", name, a.status, a.proto, a.ctype, a.csp)
				}
				if a := fetch(t, c, "HEAD", base+"/console/assets/js/app.js"); a.status != 200 || a.body != "" || a.ctype != "text/javascript; charset=utf-8" {
					t.Errorf("%s: HEAD of a module: %d %q %d bytes", name, a.status, a.ctype, len(a.body))
				}
				if a := fetch(t, c, "GET", base+"/"); a.status != http.StatusFound || a.location != "/console/" {
					t.Errorf("%s: GET /: %d to %q, want 302 to /console/", name, a.status, a.location)
				}
				if a := fetch(t, c, "GET", base+"/v1/health"); a.status != 200 || a.body != `{"response":"OK"}` {
					t.Errorf("%s: the API's health: %d %s", name, a.status, a.body)
				}
				if a := fetch(t, c, "GET", base+"/v1/console/"); a.status != 404 || !strings.Contains(a.body, `"NOT_FOUND"`) {
					t.Errorf("%s: an unknown API path: %d %s, want the API's 404", name, a.status, a.body)
				}
			}
		})
	}
}

// --console=false: the console's paths are the API's 404s, as before the
// console was built.
func TestConsoleOff(t *testing.T) {
	base := startWith(t, func(nc *node.Config) { nc.Console = false })
	for name, c := range clients() {
		for _, path := range []string{"/", "/console/", "/console/assets/js/app.js"} {
			if a := fetch(t, c, "GET", base+path); a.status != 404 || !strings.Contains(a.body, `"NOT_FOUND"`) || a.csp != "" {
				t.Errorf("%s: GET %s with the console off: %d %s", name, path, a.status, a.body)
			}
		}
	}
}

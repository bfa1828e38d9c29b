package node_test

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv/backendtest"
	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/internal/tlstest"
)

// With a certificate, the API's port speaks TLS only: HTTPS over HTTP/1.1
// and HTTP/2 (ALPN) answer, a plain request does not get through, and
// a node with authentication on listening beyond loopback does not warn
// that it has none.
func TestTLS(t *testing.T) {
	certFile, keyFile, roots := tlstest.SelfSigned(t)
	logs := &logBuffer{}
	n, err := node.Start(context.Background(), node.Config{Store: backendtest.OpenPebble(t), Addr: "0.0.0.0:0", ShutdownTimeout: 5 * time.Second,
		TLSCert: certFile, TLSKey: keyFile, Auth: true, OwnerFile: filepath.Join(t.TempDir(), "owner.json"),
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	_, port, _ := net.SplitHostPort(n.Addr().String())
	base := "https://127.0.0.1:" + port
	for _, h2 := range []bool{false, true} {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: h2}
		res, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get(base + "/v1/health")
		if err != nil {
			t.Fatalf("HTTPS (h2 %v): %v", h2, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || string(body) != `{"response":"OK"}` || (res.ProtoMajor == 2) != h2 {
			t.Fatalf("HTTPS (h2 %v): %s %s %s", h2, res.Proto, res.Status, body)
		}
	}
	// Over TLS the server's own origin is https://: a page it served may
	// post (here to the token endpoint, which refuses the credentials);
	// http:// on the same port is another origin, refused.
	for origin, want := range map[string]int{base: 401, "http://127.0.0.1:" + port: 403} {
		req, _ := http.NewRequest("POST", base+"/v1/auth/token", strings.NewReader("grant_type=client_credentials&client_id=x&client_secret=y"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", origin)
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}
		res, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("a POST over HTTPS from origin %s: %d, want %d", origin, res.StatusCode, want)
		}
	}
	if res, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://127.0.0.1:" + port + "/v1/health"); err == nil {
		res.Body.Close()
		if res.StatusCode == 200 {
			t.Fatal("a plain HTTP request was answered on the TLS port")
		}
	}
	for _, m := range logs.messages() {
		if strings.Contains(m, "without authentication") {
			t.Errorf("a node with authentication on warns: %q", m)
		}
	}
	// A certificate without its key is refused at start.
	_, err = node.Start(context.Background(), node.Config{Store: backendtest.OpenPebble(t), Addr: "127.0.0.1:0", TLSCert: certFile})
	if err == nil || !strings.Contains(err.Error(), "needs both a certificate") {
		t.Fatalf("a certificate without a key: %v", err)
	}
}

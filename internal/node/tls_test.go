package node_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"

	"github.com/foliodb/folio/internal/node"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
	"github.com/foliodb/folio/tests/backendtest"
	"github.com/foliodb/folio/tests/tlstest"
)

// With a certificate, the API's port speaks TLS only: HTTPS over HTTP/1.1
// and HTTP/2 (ALPN) answer, a plain request does not get through, and
// a node with authentication on listening beyond loopback does not warn
// that it has none.
func TestTLS(t *testing.T) {
	certFile, keyFile, roots := tlstest.SelfSigned(t)
	logs := &logBuffer{}
	n, err := node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
		nc.Store = backendtest.OpenPebble(t)
		nc.Addr = "0.0.0.0:0"
		nc.ShutdownTimeout = 5 * time.Second
		nc.TLSCert = certFile
		nc.TLSKey = keyFile
		nc.Auth = true
		nc.OwnerFile = filepath.Join(t.TempDir(), "owner.json")
		nc.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}))
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
	_, err = node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
		nc.Store = backendtest.OpenPebble(t)
		nc.Addr = "127.0.0.1:0"
		nc.TLSCert = certFile
	}))
	if err == nil || !strings.Contains(err.Error(), "needs both a certificate") {
		t.Fatalf("a certificate without a key: %v", err)
	}
}

// Nodes on one PostgreSQL that serve TLS relay a transaction's requests to
// each other over TLS: begun on node-a, it continues on node-b, over HTTPS
// and over gRPC, and commits there. (A relay that always spoke plain HTTP
// answered 503 "cannot be reached", and no test ran two TLS nodes.)
func TestForwardingBetweenTLSNodes(t *testing.T) {
	var data backendtest.Durable
	for _, b := range backendtest.All {
		if b.Name == "postgres" {
			data = b.Durable(t)
		}
	}
	certFile, keyFile, roots := tlstest.SelfSigned(t)
	clientTLS := &tls.Config{RootCAs: roots}
	startTLS := func(id string) string {
		n, err := node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
			nc.Store = data.Open()
			nc.Addr = "127.0.0.1:0"
			nc.ShutdownTimeout = 5 * time.Second
			nc.TLSCert = certFile
			nc.TLSKey = keyFile
			nc.Sessions.Origin = id
			nc.Cluster.Lease = 500 * time.Millisecond
		}))
		if err != nil {
			t.Fatalf("start %s: %v", id, err)
		}
		t.Cleanup(func() { n.Close() })
		return n.Addr().String()
	}
	a, b := startTLS("node-a"), startTLS("node-b")
	https := &http.Client{Transport: &http.Transport{TLSClientConfig: clientTLS}, Timeout: 30 * time.Second}
	call := func(t *testing.T, addr, path, body string, header ...string) string {
		t.Helper()
		code, res := postWith(t, https, "https://"+addr, path, body, header...)
		if code != http.StatusOK {
			t.Fatalf("%s on %s: %d %s", path, addr, code, res)
		}
		return res
	}
	const coll = "/v1/databases/db1/collections/users"
	call(t, a, "/v1/databases/db1/create", "")
	call(t, a, coll+"/createOrUpdate", `{"schema":{"title":"users","primary_key":["id"],"properties":{"id":{"type":"integer"},"name":{"type":"string"}}}}`)

	t.Run("https", func(t *testing.T) {
		var begin struct {
			TxCtx struct{ ID, Origin string } `json:"tx_ctx"`
		}
		if err := json.Unmarshal([]byte(call(t, a, "/v1/databases/db1/transactions/begin", "")), &begin); err != nil || begin.TxCtx.Origin != "node-a" {
			t.Fatalf("begin on node-a: %+v %v", begin, err)
		}
		tx := []string{"Tigris-Tx-Id", begin.TxCtx.ID, "Tigris-Tx-Origin", begin.TxCtx.Origin}
		call(t, b, coll+"/documents/insert", `{"documents":[{"id":1,"name":"ann"}]}`, tx...)
		if got := call(t, b, coll+"/documents/read", `{"filter":{"id":1}}`, tx...); !strings.Contains(got, `"name":"ann"`) {
			t.Fatalf("a read in the transaction on node-b: %s", got)
		}
		call(t, b, "/v1/databases/db1/transactions/commit", "", tx...)
		if got := call(t, a, coll+"/documents/read", `{"filter":{"id":1}}`); !strings.Contains(got, `"name":"ann"`) {
			t.Fatalf("after the commit on node-b, node-a reads %s", got)
		}
	})

	t.Run("grpc", func(t *testing.T) {
		rpc := func(addr string) api.TigrisClient {
			conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(clientTLS)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			return api.NewTigrisClient(conn)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		onA, onB := rpc(a), rpc(b)
		begin, err := onA.BeginTransaction(ctx, &api.BeginTransactionRequest{Project: "db1"})
		if err != nil || begin.TxCtx.Origin != "node-a" {
			t.Fatalf("begin on node-a: %v %v", begin, err)
		}
		inTx := metadata.AppendToOutgoingContext(ctx, "tigris-tx-id", begin.TxCtx.Id, "tigris-tx-origin", begin.TxCtx.Origin)
		if _, err := onB.Insert(inTx, &api.InsertRequest{Project: "db1", Collection: "users", Documents: [][]byte{[]byte(`{"id":2,"name":"bob"}`)}}); err != nil {
			t.Fatalf("insert on node-b: %v", err)
		}
		if _, err := onB.CommitTransaction(inTx, &api.CommitTransactionRequest{Project: "db1"}); err != nil {
			t.Fatalf("commit on node-b: %v", err)
		}
		if got := call(t, a, coll+"/documents/read", `{"filter":{"id":2}}`); !strings.Contains(got, `"name":"bob"`) {
			t.Fatalf("after the commit on node-b, node-a reads %s", got)
		}
	})
}

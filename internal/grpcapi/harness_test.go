package grpcapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/node"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
	"github.com/foliodb/folio/tests/backendtest"
)

func TestMain(m *testing.M) { os.Exit(backendtest.Main(m)) }

// server is a node on a real loopback port, with a client of each kind.
type server struct {
	n    *node.Node
	base string // http://host:port
	// rpc is a gRPC client of the shared port; http1 speaks HTTP/1.1 to
	// it, h2c HTTP/2 with prior knowledge.
	rpc        api.TigrisClient
	conn       *grpc.ClientConn
	http1, h2c *http.Client
}

// start runs a node over store on a free loopback port until the end of
// the test.
func start(t testing.TB, store kv.Store, cfg node.Config) *server {
	t.Helper()
	cfg.Store = store
	cfg.Addr = "127.0.0.1:0"
	if cfg.ShutdownTimeout == 0 {
		cfg.ShutdownTimeout = 10 * time.Second
	}
	n, err := node.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("start a node: %v", err)
	}
	t.Cleanup(func() { n.Close() })
	s := &server{n: n, base: "http://" + n.Addr().String()}
	s.conn = dial(t, n.Addr().String())
	s.rpc = api.NewTigrisClient(s.conn)
	s.http1 = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{}}
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	s.h2c = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{Protocols: &p}}
	return s
}

func dial(t testing.TB, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// httpDo sends a request with a JSON body ("" sends none) and returns the
// status, the body and the protocol's major version.
func httpDo(t testing.TB, c *http.Client, method, url, body string, header ...string) (int, string, int) {
	t.Helper()
	code, b, proto, err := httpTry(c, method, url, body, header...)
	if err != nil {
		t.Fatal(err)
	}
	return code, b, proto
}

// httpTry is httpDo for goroutines other than the test's: it returns the
// error.
func httpTry(c *http.Client, method, url, body string, header ...string) (int, string, int, error) {
	var rd io.Reader = http.NoBody
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, "", 0, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, "", 0, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, "", 0, fmt.Errorf("%s %s: reading the response: %w", method, url, err)
	}
	return res.StatusCode, string(b), res.ProtoMajor, nil
}

// httpError decodes an HTTP API error body.
func httpError(t testing.TB, body string) (code, message string) {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Code == "" {
		t.Fatalf("not an API error: %s", body)
	}
	return e.Error.Code, e.Error.Message
}

// rpcError returns a gRPC error's code, message and the API code its
// ErrorInfo names.
func rpcError(t testing.TB, err error) (codes.Code, string, string) {
	t.Helper()
	if err == nil {
		t.Fatal("the call succeeded; want an error")
	}
	st, ok := grpcstatus.FromError(err)
	if !ok {
		t.Fatalf("not a gRPC status: %v", err)
	}
	reason := ""
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			reason = info.Reason
		}
	}
	return st.Code(), st.Message(), reason
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// withUsers creates database db1 with a users collection over gRPC.
func withUsers(t testing.TB, s *server) {
	t.Helper()
	if _, err := s.rpc.CreateDatabase(ctx(t), &api.CreateDatabaseRequest{Db: "db1"}); err != nil {
		t.Fatal(err)
	}
	_, err := s.rpc.CreateOrUpdateCollection(ctx(t), &api.CreateOrUpdateCollectionRequest{Project: "db1", Collection: "users",
		Schema: []byte(`{"title":"users","primary_key":["id"],"properties":{"id":{"type":"integer"},"name":{"type":"string"}}}`)})
	if err != nil {
		t.Fatal(err)
	}
}

// readAll reads a gRPC read of db1's users to its end.
func readAll(t testing.TB, s *server, md context.Context, filter string) []string {
	t.Helper()
	return readFrom(t, s, md, "users", filter)
}

// readFrom reads a gRPC read of a collection of db1 to its end.
func readFrom(t testing.TB, s *server, md context.Context, coll, filter string) []string {
	t.Helper()
	st, err := s.rpc.Read(md, &api.ReadRequest{Project: "db1", Collection: coll, Filter: []byte(filter)})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for {
		r, err := st.Recv()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		out = append(out, string(r.Data))
	}
}

// describeDatabase2022 calls DescribeDatabase as 2022's clients do: the
// database's name alone, answered with DescribeDatabaseResponse2022 (the
// generated client would decode 2023's DescribeDatabaseResponse).
func describeDatabase2022(c context.Context, conn *grpc.ClientConn, db string, opts ...grpc.CallOption) (*api.DescribeDatabaseResponse2022, error) {
	out := new(api.DescribeDatabaseResponse2022)
	if err := conn.Invoke(c, api.Tigris_DescribeDatabase_FullMethodName, &api.DescribeDatabaseRequest{Project: db}, out, opts...); err != nil {
		return nil, err
	}
	return out, nil
}

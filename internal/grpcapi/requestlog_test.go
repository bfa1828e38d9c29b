package grpcapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/node"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
	"github.com/foliodb/folio/tests/backendtest"
)

// A gRPC call is logged as an HTTP request is (the operations write both
// lines): a failed one at info level with its API code, its caller and its
// request id, which the client may choose and the answer's header carries.
func TestRequestLogOverGRPC(t *testing.T) {
	logs := &syncBuffer{}
	ownerFile := filepath.Join(t.TempDir(), "owner.json")
	s := start(t, backendtest.OpenPebble(t), node.DefaultConfigWith(func(nc *node.Config) {
		nc.Auth = true
		nc.OwnerFile = ownerFile
		nc.Tokens.HashCost = bcrypt.MinCost
		nc.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	}))
	var owner auth.OwnerCredentials
	if raw, err := os.ReadFile(ownerFile); err != nil || json.Unmarshal(raw, &owner) != nil {
		t.Fatalf("the owner file: %v", err)
	}
	tok, err := api.NewAuthClient(s.conn).GetAccessToken(ctx(t), &api.GetAccessTokenRequest{GrantType: api.GrantType_CLIENT_CREDENTIALS, ClientId: owner.ClientID, ClientSecret: owner.ClientSecret})
	if err != nil {
		t.Fatal(err)
	}
	call := metadata.AppendToOutgoingContext(ctx(t), "authorization", "Bearer "+tok.AccessToken, "x-request-id", "grpc-call-1")

	// A unary call.
	var header metadata.MD
	if _, err := describeDatabase2022(call, s.conn, "nope", grpc.Header(&header)); err == nil {
		t.Fatal("described a missing database")
	}
	if got := header.Get("x-request-id"); len(got) != 1 || got[0] != "grpc-call-1" {
		t.Errorf("answer's x-request-id %v, want the client's", got)
	}
	l := waitLogLine(t, logs, "grpc-call-1")
	for k, want := range map[string]any{"level": "INFO", "transport": "grpc", "method": "/tigrisdata.v1.Tigris/DescribeDatabase",
		"code": "NOT_FOUND", "caller": auth.DefaultNamespaceName + "/" + owner.ClientID} {
		if l[k] != want {
			t.Errorf("log field %s = %v, want %v; line %v", k, l[k], want, l)
		}
	}

	// A streaming call, without an id of its own: it gets one.
	stream, err := s.rpc.Read(metadata.AppendToOutgoingContext(ctx(t), "authorization", "Bearer "+tok.AccessToken), &api.ReadRequest{Project: "nope", Collection: "items", Filter: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = stream.Recv()
	if err == nil || err == io.EOF {
		t.Fatalf("read of a missing database: %v", err)
	}
	h, err := stream.Header()
	if err != nil || len(h.Get("x-request-id")) != 1 {
		t.Fatalf("a stream's header %v (%v), want an x-request-id", h, err)
	}
	l = waitLogLine(t, logs, h.Get("x-request-id")[0])
	if l["method"] != "/tigrisdata.v1.Tigris/Read" || l["code"] != "NOT_FOUND" || l["level"] != "INFO" {
		t.Errorf("the stream's line %v", l)
	}
}

// syncBuffer collects a node's log lines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitLogLine waits for the request log's line of a request id.
func waitLogLine(t *testing.T, logs *syncBuffer, id string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		sc := bufio.NewScanner(strings.NewReader(logs.String()))
		for sc.Scan() {
			var l map[string]any
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatalf("a log line that is not JSON: %s", sc.Text())
			}
			if l["msg"] == "request" && l["request_id"] == id {
				return l
			}
		}
	}
	t.Fatalf("no log line for request %s in:\n%s", id, logs.String())
	return nil
}

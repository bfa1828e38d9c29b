package grpcapi_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/foliodb/folio/internal/node"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
	"github.com/foliodb/folio/tests/backendtest"
)

// HTTP/1.1, HTTP/2 with prior knowledge and gRPC clients use one port at
// once, each answered in its own protocol, and see each other's writes.
func TestOnePort(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfig())
		withUsers(t, s)
		coll := s.base + "/v1/databases/db1/collections/users/documents"
		const each = 20
		var wg sync.WaitGroup
		errs := make(chan error, 3*each)
		wg.Add(3)
		go func() { // HTTP/1.1
			defer wg.Done()
			for i := range each {
				code, body, proto, err := httpTry(s.http1, "POST", coll+"/insert", fmt.Sprintf(`{"documents":[{"id":%d,"name":"h1"}]}`, i))
				if err != nil || code != 200 || proto != 1 {
					errs <- fmt.Errorf("HTTP/1.1 insert: %d %s over HTTP/%d: %v", code, body, proto, err)
				}
			}
		}()
		go func() { // h2c
			defer wg.Done()
			for i := range each {
				code, body, proto, err := httpTry(s.h2c, "POST", coll+"/insert", fmt.Sprintf(`{"documents":[{"id":%d,"name":"h2c"}]}`, 1000+i))
				if err != nil || code != 200 || proto != 2 {
					errs <- fmt.Errorf("h2c insert: %d %s over HTTP/%d: %v", code, body, proto, err)
				}
			}
		}()
		go func() { // gRPC
			defer wg.Done()
			for i := range each {
				_, err := s.rpc.Insert(context.Background(), &api.InsertRequest{Project: "db1", Collection: "users",
					Documents: [][]byte{fmt.Appendf(nil, `{"id":%d,"name":"grpc"}`, 2000+i)}})
				if err != nil {
					errs <- fmt.Errorf("gRPC insert: %v", err)
				}
			}
		}()
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if got := readAll(t, s, ctx(t), `{}`); len(got) != 3*each {
			t.Errorf("gRPC read %d documents, want %d", len(got), 3*each)
		}
		for _, c := range []*http.Client{s.http1, s.h2c} {
			code, body, _ := httpDo(t, c, "POST", coll+"/read", `{"filter":{"name":"grpc"}}`)
			if code != 200 || strings.Count(body, "\n") != each {
				t.Errorf("HTTP read of the gRPC inserts: %d, %d lines", code, strings.Count(body, "\n"))
			}
		}
	})
}

// A stream (gRPC events, and an HTTP/2 events stream) idle for longer
// than the write and body timeouts stays open: HTTP/2 resets a stream whose write
// deadline passes even with no write waiting, so the deadline must only
// cover writes.
func TestIdleStreamsOutliveTheWriteTimeout(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		// The body timeout, which bounds a call's request message, must not
		// end a stream that has long had it.
		s := start(t, b.Open(t), node.DefaultConfigWith(func(nc *node.Config) {
			nc.WriteTimeout = 200 * time.Millisecond
			nc.BodyTimeout = 200 * time.Millisecond
		}))
		withUsers(t, s)
		events, err := s.rpc.Events(ctx(t), &api.EventsRequest{Db: "db1", Collection: "users"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := events.Header(); err != nil { // the stream is open
			t.Fatal(err)
		}
		req, _ := http.NewRequestWithContext(ctx(t), "POST", s.base+"/v1/databases/db1/collections/users/events", strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		res, err := s.h2c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.ProtoMajor != 2 {
			t.Fatalf("events over HTTP/%d", res.ProtoMajor)
		}
		// Items first, then idle past the timeout, then more.
		insert := func(id int) {
			if _, err := s.rpc.Insert(ctx(t), &api.InsertRequest{Project: "db1", Collection: "users", Documents: [][]byte{fmt.Appendf(nil, `{"id":%d}`, id)}}); err != nil {
				t.Fatal(err)
			}
		}
		lines := bufio.NewReader(res.Body)
		for _, id := range []int{1, 2} {
			insert(id)
			ev, err := events.Recv()
			if err != nil {
				t.Fatalf("gRPC events after %d: %v", id, err)
			}
			if want := fmt.Sprintf(`{"id":%d}`, id); string(ev.Event.Data) != want || ev.Event.Op != "insert" || !ev.Event.Last {
				t.Errorf("gRPC event %+v, want an insert of %s", ev.Event, want)
			}
			line, err := lines.ReadString('\n')
			if err != nil || !strings.Contains(line, fmt.Sprintf(`"data":{"id":%d}`, id)) {
				t.Fatalf("h2c events after %d: %q %v", id, line, err)
			}
			time.Sleep(600 * time.Millisecond)
		}
	})
}

// Every error is the HTTP API's: the same code (as gRPC's, and by name in
// ErrorInfo) and the same message.
func TestErrorsAsOverHTTP(t *testing.T) {
	s := start(t, backendtest.OpenPebble(t), node.DefaultConfig())
	withUsers(t, s)
	db := s.base + "/v1/databases"
	txMD := func(id, origin string) context.Context {
		return metadata.AppendToOutgoingContext(ctx(t), "tigris-tx-id", id, "tigris-tx-origin", origin)
	}
	cases := []struct {
		name        string
		method, url string
		body        string
		header      []string
		rpc         func(context.Context) error
		ctx         context.Context
		wantCode    codes.Code
	}{
		{name: "database exists", method: "POST", url: db + "/db1/create",
			rpc: func(c context.Context) error {
				_, err := s.rpc.CreateDatabase(c, &api.CreateDatabaseRequest{Db: "db1"})
				return err
			}, wantCode: codes.AlreadyExists},
		{name: "bad database name", method: "POST", url: db + "/1x/create",
			rpc: func(c context.Context) error {
				_, err := s.rpc.CreateDatabase(c, &api.CreateDatabaseRequest{Db: "1x"})
				return err
			}, wantCode: codes.InvalidArgument},
		{name: "no database", method: "POST", url: db + "/nope/collections/users/documents/insert", body: `{"documents":[{"id":1}]}`,
			rpc: func(c context.Context) error {
				_, err := s.rpc.Insert(c, &api.InsertRequest{Project: "nope", Collection: "users", Documents: [][]byte{[]byte(`{"id":1}`)}})
				return err
			}, wantCode: codes.NotFound},
		{name: "no documents", method: "POST", url: db + "/db1/collections/users/documents/insert", body: `{"documents":[]}`,
			rpc: func(c context.Context) error {
				_, err := s.rpc.Insert(c, &api.InsertRequest{Project: "db1", Collection: "users"})
				return err
			}, wantCode: codes.InvalidArgument},
		{name: "schema validation", method: "POST", url: db + "/db1/collections/users/documents/insert", body: `{"documents":[{"id":"x"}]}`,
			rpc: func(c context.Context) error {
				_, err := s.rpc.Insert(c, &api.InsertRequest{Project: "db1", Collection: "users", Documents: [][]byte{[]byte(`{"id":"x"}`)}})
				return err
			}, wantCode: codes.InvalidArgument},
		{name: "no filter", method: "PUT", url: db + "/db1/collections/users/documents/update", body: `{"fields":{"$set":{"name":"x"}}}`,
			rpc: func(c context.Context) error {
				_, err := s.rpc.Update(c, &api.UpdateRequest{Project: "db1", Collection: "users", Fields: []byte(`{"$set":{"name":"x"}}`)})
				return err
			}, wantCode: codes.InvalidArgument},
		{name: "read of a missing collection", method: "POST", url: db + "/db1/collections/nope/documents/read", body: `{"filter":{}}`,
			rpc: func(c context.Context) error {
				st, err := s.rpc.Read(c, &api.ReadRequest{Project: "db1", Collection: "nope", Filter: []byte(`{}`)})
				if err == nil {
					_, err = st.Recv()
				}
				return err
			}, wantCode: codes.NotFound},
		{name: "drop of a missing collection", method: "DELETE", url: db + "/db1/collections/nope/drop",
			rpc: func(c context.Context) error {
				_, err := s.rpc.DropCollection(c, &api.DropCollectionRequest{Project: "db1", Collection: "nope"})
				return err
			}, wantCode: codes.NotFound},
		{name: "commit of an unknown transaction", method: "POST", url: db + "/db1/transactions/commit", header: []string{"Tigris-Tx-Id", "nope", "Tigris-Tx-Origin", ""},
			rpc: func(c context.Context) error {
				_, err := s.rpc.CommitTransaction(c, &api.CommitTransactionRequest{Project: "db1"})
				return err
			}, ctx: metadata.AppendToOutgoingContext(context.Background(), "tigris-tx-id", "nope"), wantCode: codes.NotFound},
		{name: "transaction of another node", method: "POST", url: db + "/db1/collections/users/documents/insert", body: `{"documents":[{"id":1}]}`,
			header: []string{"Tigris-Tx-Id", "x", "Tigris-Tx-Origin", "elsewhere"},
			rpc: func(c context.Context) error {
				_, err := s.rpc.Insert(c, &api.InsertRequest{Project: "db1", Collection: "users", Documents: [][]byte{[]byte(`{"id":1}`)}})
				return err
			}, ctx: txMD("x", "elsewhere"), wantCode: codes.FailedPrecondition},
		{name: "events on a messages-less collection missing", method: "POST", url: db + "/db1/collections/nope/events", body: `{}`,
			rpc: func(c context.Context) error {
				st, err := s.rpc.Events(c, &api.EventsRequest{Db: "db1", Collection: "nope"})
				if err == nil {
					_, err = st.Recv()
				}
				return err
			}, wantCode: codes.NotFound},
		{name: "search with both field lists", method: "POST", url: db + "/db1/collections/users/documents/search", body: `{"include_fields":["a"],"exclude_fields":["b"]}`,
			rpc: func(c context.Context) error {
				st, err := s.rpc.Search(c, &api.SearchRequest{Project: "db1", Collection: "users", IncludeFields: []string{"a"}, ExcludeFields: []string{"b"}})
				if err == nil {
					_, err = st.Recv()
				}
				return err
			}, wantCode: codes.InvalidArgument},
		{name: "search with a bad facet", method: "POST", url: db + "/db1/collections/users/documents/search", body: `{"facet":{"name":3}}`,
			rpc: func(c context.Context) error {
				st, err := s.rpc.Search(c, &api.SearchRequest{Project: "db1", Collection: "users", Facet: []byte(`{"name":3}`)})
				if err == nil {
					_, err = st.Recv()
				}
				return err
			}, wantCode: codes.InvalidArgument},
		{name: "search on a missing collection", method: "POST", url: db + "/db1/collections/nope/documents/search", body: `{}`,
			rpc: func(c context.Context) error {
				st, err := s.rpc.Search(c, &api.SearchRequest{Project: "db1", Collection: "nope"})
				if err == nil {
					_, err = st.Recv()
				}
				return err
			}, wantCode: codes.NotFound},
		{name: "token without its refresh token", method: "POST", url: s.base + "/v1/auth/token", body: `grant_type=refresh_token`,
			header: []string{"Content-Type", "application/x-www-form-urlencoded"},
			rpc: func(c context.Context) error {
				_, err := api.NewAuthClient(s.conn).GetAccessToken(c, &api.GetAccessTokenRequest{GrantType: api.GrantType_REFRESH_TOKEN})
				return err
			}, wantCode: codes.InvalidArgument},
		{name: "token with a wrong secret", method: "POST", url: s.base + "/v1/auth/token", body: `grant_type=client_credentials&client_id=x&client_secret=y`,
			header: []string{"Content-Type", "application/x-www-form-urlencoded"},
			rpc: func(c context.Context) error {
				_, err := api.NewAuthClient(s.conn).GetAccessToken(c, &api.GetAccessTokenRequest{GrantType: api.GrantType_CLIENT_CREDENTIALS, ClientId: "x", ClientSecret: "y"})
				return err
			}, wantCode: codes.Unauthenticated},
		{name: "namespace with a bad name", method: "POST", url: s.base + "/v1/admin/namespaces/9lives/create", body: `{}`,
			rpc: func(c context.Context) error {
				_, err := api.NewAdminClient(s.conn).CreateNamespace(c, &api.CreateNamespaceRequest2022{Name: "9lives"})
				return err
			}, wantCode: codes.InvalidArgument},
		{name: "rotating a missing application", method: "POST", url: s.base + "/v1/users/applications/rotate", body: `{"id":"nope"}`,
			rpc: func(c context.Context) error {
				_, err := api.NewUserClient(s.conn).RotateApplicationSecret(c, &api.RotateApplicationSecretRequest{Id: "nope"})
				return err
			}, wantCode: codes.NotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, body, _ := httpDo(t, s.http1, tc.method, tc.url, tc.body, tc.header...)
			httpCode, httpMessage := httpError(t, body)
			c := tc.ctx
			if c == nil {
				c = ctx(t)
			}
			code, message, reason := rpcError(t, tc.rpc(c))
			if code != tc.wantCode || reason != httpCode || message != httpMessage {
				t.Errorf("gRPC: %v %q (ErrorInfo %s); HTTP: %s %q; want gRPC code %v and HTTP's code and message", code, message, reason, httpCode, httpMessage, tc.wantCode)
			}
		})
	}
}

// A request message larger than the body limit is refused with
// RESOURCE_EXHAUSTED (gRPC's own answer, before any operation runs); a
// call past the request timeout ends with DEADLINE_EXCEEDED, as over HTTP.
func TestLimits(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfigWith(func(nc *node.Config) {
			nc.MaxBodyBytes = 64 << 10
		}))
		withUsers(t, s)
		big := fmt.Appendf(nil, `{"id":1,"name":"%s"}`, strings.Repeat("x", 100<<10))
		_, err := s.rpc.Insert(ctx(t), &api.InsertRequest{Project: "db1", Collection: "users", Documents: [][]byte{big}})
		if code, msg, _ := rpcError(t, err); code != codes.ResourceExhausted {
			t.Errorf("a message over the limit: %v %q, want ResourceExhausted", code, msg)
		}
		// Within the limit all is well.
		if _, err := s.rpc.Insert(ctx(t), &api.InsertRequest{Project: "db1", Collection: "users", Documents: [][]byte{big[:30<<10]}}); err == nil {
			t.Log("(a cut document is invalid JSON, and refused as such)")
		} else if code, _, _ := rpcError(t, err); code == codes.ResourceExhausted {
			t.Errorf("a message within the limit refused as too large: %v", err)
		}

		slow := start(t, b.Open(t), node.DefaultConfigWith(func(nc *node.Config) {
			nc.Ops.RequestTimeout = time.Nanosecond
		}))
		_, err = slow.rpc.CreateDatabase(ctx(t), &api.CreateDatabaseRequest{Db: "db1"})
		if code, msg, reason := rpcError(t, err); code != codes.DeadlineExceeded || msg != "context deadline exceeded" || reason != "DEADLINE_EXCEEDED" {
			t.Errorf("past the request timeout: %v %q %s", code, msg, reason)
		}
		// The client's own deadline bounds a call too.
		short, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		time.Sleep(2 * time.Millisecond)
		_, err = s.rpc.ListDatabases(short, &api.ListDatabasesRequest{})
		if code, _, _ := rpcError(t, err); code != codes.DeadlineExceeded {
			t.Errorf("past the client's deadline: %v", err)
		}
	})
}

// The documents of an insert or replace, and the messages of a publish,
// are bounded per request (MaxDocumentsPerRequest): one over is
// INVALID_ARGUMENT and writes nothing, as over HTTP; the limit itself
// passes.
func TestItemsPerRequestLimit(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		const limit = 5
		s := start(t, b.Open(t), node.DefaultConfigWith(func(nc *node.Config) {
			nc.Ops.MaxDocumentsPerRequest = limit
		}))
		withUsers(t, s)
		_, err := s.rpc.CreateOrUpdateCollection(ctx(t), &api.CreateOrUpdateCollectionRequest{Project: "db1", Collection: "orders",
			Schema: []byte(`{"title":"orders","collection_type":"messages","properties":{"n":{"type":"integer"}}}`)})
		if err != nil {
			t.Fatal(err)
		}
		items := func(n int, format string) [][]byte {
			out := make([][]byte, n)
			for i := range out {
				out[i] = fmt.Appendf(nil, format, i+1)
			}
			return out
		}
		_, err = s.rpc.Insert(ctx(t), &api.InsertRequest{Project: "db1", Collection: "users", Documents: items(limit+1, `{"id":%d}`)})
		if code, msg, _ := rpcError(t, err); code != codes.InvalidArgument || msg != "6 documents in one request, the limit is 5" {
			t.Errorf("an insert over the limit: %v %q", code, msg)
		}
		_, err = s.rpc.Publish(ctx(t), &api.PublishRequest{Db: "db1", Collection: "orders", Messages: items(limit+1, `{"n":%d}`)})
		if code, msg, _ := rpcError(t, err); code != codes.InvalidArgument || msg != "6 messages in one request, the limit is 5" {
			t.Errorf("a publish over the limit: %v %q", code, msg)
		}
		if got := readAll(t, s, ctx(t), `{}`); len(got) != 0 {
			t.Errorf("a refused insert wrote %v", got)
		}
		if got := readFrom(t, s, ctx(t), "orders", `{}`); len(got) != 0 {
			t.Errorf("a refused publish wrote %v", got)
		}
		if _, err := s.rpc.Insert(ctx(t), &api.InsertRequest{Project: "db1", Collection: "users", Documents: items(limit, `{"id":%d}`)}); err != nil {
			t.Errorf("an insert at the limit: %v", err)
		}
		if _, err := s.rpc.Publish(ctx(t), &api.PublishRequest{Db: "db1", Collection: "orders", Messages: items(limit, `{"n":%d}`)}); err != nil {
			t.Errorf("a publish at the limit: %v", err)
		}
	})
}

// The transaction travels in metadata, as the Go client sends it: writes
// in it are seen inside and not outside until commit; rollback discards
// them; begin sends the cookie load balancers stick on.
func TestTransactionMetadata(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfig())
		withUsers(t, s)
		for _, commit := range []bool{true, false} {
			var header metadata.MD
			res, err := s.rpc.BeginTransaction(ctx(t), &api.BeginTransactionRequest{Project: "db1"}, grpc.Header(&header))
			if err != nil {
				t.Fatal(err)
			}
			tx := res.GetTxCtx()
			if tx.GetId() == "" || tx.GetOrigin() == "" {
				t.Fatalf("begin: %+v", res)
			}
			if c := header.Get("set-cookie"); len(c) != 1 || !strings.HasPrefix(c[0], "Tigris-Tx-Id="+tx.Id+";") {
				t.Errorf("begin's set-cookie: %q", c)
			}
			inTx := metadata.AppendToOutgoingContext(ctx(t), "tigris-tx-id", tx.Id, "tigris-tx-origin", tx.Origin)
			id := map[bool]string{true: "1", false: "2"}[commit]
			doc := `{"id":` + id + `,"name":"tx"}`
			if _, err := s.rpc.Insert(inTx, &api.InsertRequest{Project: "db1", Collection: "users", Documents: [][]byte{[]byte(doc)}}); err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, s, inTx, `{"id":`+id+`}`); len(got) != 1 {
				t.Errorf("inside the transaction: %q", got)
			}
			if got := readAll(t, s, ctx(t), `{"id":`+id+`}`); len(got) != 0 {
				t.Errorf("outside before the end: %q", got)
			}
			if commit {
				_, err = s.rpc.CommitTransaction(inTx, &api.CommitTransactionRequest{Project: "db1"})
			} else {
				_, err = s.rpc.RollbackTransaction(inTx, &api.RollbackTransactionRequest{Project: "db1"})
			}
			if err != nil {
				t.Fatal(err)
			}
			want := map[bool]int{true: 1, false: 0}[commit]
			if got := readAll(t, s, ctx(t), `{"id":`+id+`}`); len(got) != want {
				t.Errorf("after commit=%v: %q", commit, got)
			}
			// The transaction is gone.
			_, err = s.rpc.Insert(inTx, &api.InsertRequest{Project: "db1", Collection: "users", Documents: [][]byte{[]byte(`{"id":9}`)}})
			if code, msg, _ := rpcError(t, err); code != codes.Internal || msg != "session is gone" {
				t.Errorf("a call in an ended transaction: %v %q", code, msg)
			}
		}
	})
}

// Publish and subscribe over gRPC: a subscriber gets what is published
// after it subscribed, in order.
func TestPublishSubscribe(t *testing.T) {
	s := start(t, backendtest.OpenPebble(t), node.DefaultConfig())
	if _, err := s.rpc.CreateDatabase(ctx(t), &api.CreateDatabaseRequest{Db: "db1"}); err != nil {
		t.Fatal(err)
	}
	_, err := s.rpc.CreateOrUpdateCollection(ctx(t), &api.CreateOrUpdateCollectionRequest{Project: "db1", Collection: "orders",
		Schema: []byte(`{"title":"orders","collection_type":"messages","properties":{"n":{"type":"integer"}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := s.rpc.Subscribe(ctx(t), &api.SubscribeRequest{Db: "db1", Collection: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sub.Header(); err != nil {
		t.Fatal(err)
	}
	res, err := s.rpc.Publish(ctx(t), &api.PublishRequest{Db: "db1", Collection: "orders", Messages: [][]byte{[]byte(`{"n":1}`), []byte(`{"n":2}`)}})
	if err != nil {
		t.Fatal(err)
	}
	// No keys: the clients would parse them as JSON (Publish).
	if res.Status != "published" || len(res.Keys) != 0 || res.GetMetadata().GetCreatedAt() == nil {
		t.Errorf("publish: %+v", res)
	}
	for _, want := range []string{`{"n":1}`, `{"n":2}`} {
		m, err := sub.Recv()
		if err != nil || string(m.Message) != want {
			t.Fatalf("subscribe: %v %s, want %s", err, m.GetMessage(), want)
		}
	}
	_, err = s.rpc.Publish(ctx(t), &api.PublishRequest{Db: "db1", Collection: "orders", Messages: [][]byte{[]byte(`{"n":1}`)}, Options: &api.PublishRequestOptions{Partition: 3}})
	if code, _, reason := rpcError(t, err); code != codes.InvalidArgument || reason != "INVALID_ARGUMENT" {
		t.Errorf("a bad partition: %v", err)
	}
}

// A shutdown ends the gRPC streams, on the shared port and on the listener
// of its own, with UNAVAILABLE and the message that says to resume, and
// does not wait for them until its timeout.
func TestShutdownEndsStreams(t *testing.T) {
	s := start(t, backendtest.OpenPebble(t), node.DefaultConfigWith(func(nc *node.Config) {
		nc.GRPCAddr = "127.0.0.1:0"
		nc.ShutdownTimeout = time.Minute
	}))
	withUsers(t, s)
	native := api.NewTigrisClient(dial(t, s.n.GRPCAddr().String()))
	var streams []api.Tigris_EventsClient
	for _, c := range []api.TigrisClient{s.rpc, native} {
		st, err := c.Events(ctx(t), &api.EventsRequest{Db: "db1", Collection: "users"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Header(); err != nil {
			t.Fatal(err)
		}
		streams = append(streams, st)
	}
	// The listener of its own serves the same API.
	if _, err := native.Insert(ctx(t), &api.InsertRequest{Project: "db1", Collection: "users", Documents: [][]byte{[]byte(`{"id":1}`)}}); err != nil {
		t.Fatal(err)
	}
	for i, st := range streams {
		if ev, err := st.Recv(); err != nil || string(ev.Event.Data) != `{"id":1}` {
			t.Fatalf("stream %d: %v %v", i, ev, err)
		}
	}
	begun := time.Now()
	if err := s.n.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(begun); took > 20*time.Second {
		t.Errorf("shutdown took %v", took)
	}
	for i, st := range streams {
		_, err := st.Recv()
		if code, msg, _ := rpcError(t, err); code != codes.Unavailable || !strings.Contains(msg, "resume") {
			t.Errorf("stream %d ended with %v %q, want UNAVAILABLE asking to resume", i, code, msg)
		}
	}
}

// A gRPC client that stops reading a stream is cut off after the write
// timeout, and its subscription released, as an HTTP one is: the HTTP/2
// server resets the stream whose write waited too long for flow control.
func TestStalledStreamIsCutOff(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfigWith(func(nc *node.Config) {
			nc.WriteTimeout = 300 * time.Millisecond
		}))
		withUsers(t, s)
		// A client window of 64 KiB (gRPC's least), never read from.
		conn, err := grpc.NewClient(s.n.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		stalled, err := api.NewTigrisClient(conn).Events(ctx(t), &api.EventsRequest{Db: "db1", Collection: "users"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stalled.Header(); err != nil {
			t.Fatal(err)
		}
		if open := s.n.Stats().Streams.Open; open != 1 {
			t.Fatalf("%d streams open, want 1", open)
		}
		// Far more than the window and the server's buffers.
		name := strings.Repeat("x", 4000)
		for i := range 200 {
			if _, err := s.rpc.Insert(ctx(t), &api.InsertRequest{Project: "db1", Collection: "users", Documents: [][]byte{fmt.Appendf(nil, `{"id":%d,"name":"%s"}`, i, name)}}); err != nil {
				t.Fatal(err)
			}
		}
		deadline := time.Now().Add(10 * time.Second)
		for s.n.Stats().Streams.Open != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("the stalled stream is still open 10s on: %+v", s.n.Stats())
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

// How the port tells protocols apart, at its edges: an HTTP/1.1 request
// that arrives a byte at a time; an HTTP/2 client of the HTTP API; a gRPC
// client that connects and makes its first call only after the time the
// port waits for a first request (it is taken for gRPC, having asked
// nothing).
func TestPortSniffing(t *testing.T) {
	s := start(t, backendtest.OpenPebble(t), node.DefaultConfig())
	t.Run("HTTP/1.1 byte by byte", func(t *testing.T) {
		c, err := net.Dial("tcp", s.n.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for _, b := range []byte("GET /v1/health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n") {
			if _, err := c.Write([]byte{b}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond)
		}
		res, err := io.ReadAll(c)
		if err != nil || !strings.HasPrefix(string(res), "HTTP/1.1 200 OK") || !strings.Contains(string(res), `{"response":"OK"}`) {
			t.Errorf("got %q %v", res, err)
		}
	})
	t.Run("gRPC connecting ahead of its calls", func(t *testing.T) {
		conn := dial(t, s.n.Addr().String())
		conn.Connect()
		time.Sleep(2500 * time.Millisecond)
		if _, err := api.NewHealthAPIClient(conn).Health(ctx(t), &api.HealthCheckInput{}); err != nil {
			t.Errorf("health over gRPC after an idle start: %v", err)
		}
	})
	t.Run("h2c", func(t *testing.T) {
		code, body, proto := httpDo(t, s.h2c, "GET", s.base+"/v1/health", "")
		if code != 200 || proto != 2 || body != `{"response":"OK"}` {
			t.Errorf("got %d %q over HTTP/%d", code, body, proto)
		}
	})
}

// Info under both of its names (Tigris.GetInfo of alpha.32, Observability.
// GetInfo of the later clients), and health.
func TestInfoAndHealth(t *testing.T) {
	s := start(t, backendtest.OpenPebble(t), node.DefaultConfigWith(func(nc *node.Config) {
		nc.Version = "v-test"
	}))
	info, err := s.rpc.GetInfo(ctx(t), &api.GetInfoRequest{})
	if err != nil || info.ServerVersion != "v-test" {
		t.Errorf("Tigris.GetInfo: %v %v", info, err)
	}
	var later api.GetInfoResponse
	if err := s.conn.Invoke(ctx(t), "/tigrisdata.observability.v1.Observability/GetInfo", &api.GetInfoRequest{}, &later); err != nil || later.ServerVersion != "v-test" {
		t.Errorf("Observability.GetInfo: %v %v", later.ServerVersion, err)
	}
	_, err = api.NewObservabilityClient(s.conn).QueryTimeSeriesMetrics(ctx(t), &api.QueryTimeSeriesMetricsRequest{})
	if code, msg, _ := rpcError(t, err); code != codes.Unimplemented || msg != "metrics queries is not implemented by this server yet" {
		t.Errorf("metrics: %v %q", code, msg)
	}
	h, err := api.NewHealthAPIClient(s.conn).Health(ctx(t), &api.HealthCheckInput{})
	if err != nil || h.Response != "OK" {
		t.Errorf("health: %v %v", h, err)
	}
}

// The connection cap counts every connection of the port, whatever its
// protocol: with a cap of one, an open gRPC connection keeps an HTTP client
// waiting until it closes.
func TestConnectionCapCountsGRPC(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfigWith(func(nc *node.Config) {
			nc.MaxConnections = 1
		}))
		s.conn.Close() // the harness's client: this test opens its own
		conn, err := grpc.NewClient(s.n.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := api.NewHealthAPIClient(conn).Health(ctx(t), &api.HealthCheckInput{}); err != nil {
			t.Fatal(err)
		}
		waiting := &http.Client{Timeout: 500 * time.Millisecond, Transport: &http.Transport{}}
		if _, err := waiting.Get(s.base + "/v1/health"); err == nil {
			t.Fatal("an HTTP request was served beyond the connection cap while a gRPC connection was open")
		}
		conn.Close()
		deadline := time.Now().Add(10 * time.Second)
		for {
			res, err := (&http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{}}).Get(s.base + "/v1/health")
			if err == nil {
				res.Body.Close()
				if res.StatusCode != 200 {
					t.Fatalf("health: %d", res.StatusCode)
				}
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the HTTP client is still not served after the gRPC connection closed: %v", err)
			}
		}
	})
}

// A call whose request message does not arrive within the body timeout is
// cancelled and its stream reset, as an HTTP request whose body is too
// slow is cut off: a raw HTTP/2 client sends a call's headers and half a
// message, then nothing.
func TestSlowRequestMessageIsCutOff(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfigWith(func(nc *node.Config) {
			nc.BodyTimeout = 300 * time.Millisecond
		}))
		c, err := net.Dial("tcp", s.n.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte(http2.ClientPreface)); err != nil {
			t.Fatal(err)
		}
		fr := http2.NewFramer(c, c)
		fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
		if err := fr.WriteSettings(); err != nil {
			t.Fatal(err)
		}
		var block bytes.Buffer
		enc := hpack.NewEncoder(&block)
		for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", "/tigrisdata.v1.Tigris/CreateDatabase"},
			{":authority", "folio"}, {"content-type", "application/grpc"}, {"te", "trailers"}} {
			enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block.Bytes(), EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
		// A message announced as 10 bytes, of which 2 are sent.
		if err := fr.WriteData(1, false, []byte{0, 0, 0, 0, 10, 0x0a, 0x08}); err != nil {
			t.Fatal(err)
		}
		begun := time.Now()
		c.SetReadDeadline(begun.Add(10 * time.Second))
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				t.Fatalf("the call was not ended within 10s: %v", err)
			}
			switch f := f.(type) {
			case *http2.SettingsFrame:
				if !f.IsAck() {
					fr.WriteSettingsAck()
				}
				continue
			case *http2.PingFrame:
				if !f.IsAck() {
					fr.WritePing(true, f.Data)
				}
				continue
			case *http2.RSTStreamFrame:
			case *http2.MetaHeadersFrame:
				if !f.StreamEnded() {
					continue // response headers; the trailers end the call
				}
				if got := f.PseudoValue("status"); got != "" && got != "200" {
					t.Errorf("HTTP status %s", got)
				}
				fields := map[string]string{}
				for _, hf := range f.RegularFields() {
					fields[hf.Name] = hf.Value
				}
				if code := fields["grpc-status"]; code != fmt.Sprint(int(codes.Canceled)) {
					t.Errorf("grpc-status %s (%s), want CANCELLED", code, fields["grpc-message"])
				}
			default:
				continue
			}
			if took := time.Since(begun); took < 250*time.Millisecond {
				t.Errorf("the call ended after %v, before the body timeout", took)
			}
			t.Logf("%T after %v", f, time.Since(begun))
			break
		}
		// Nothing was created.
		if dbs, err := s.rpc.ListDatabases(ctx(t), &api.ListDatabasesRequest{}); err != nil || len(dbs.Databases) != 0 {
			t.Errorf("databases: %v %v", dbs, err)
		}
	})
}

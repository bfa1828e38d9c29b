package loadgen_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/foliodb/folio/internal/loadgen"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

// newFolioGRPC returns a gRPC driver that the test closes.
func newFolioGRPC(t *testing.T, opts loadgen.FolioOptions) *loadgen.FolioGRPCDriver {
	t.Helper()
	d, err := loadgen.NewFolioGRPC(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// Every workload against a real Folio server over gRPC, on the port that
// serves HTTP too.
func TestFolioGRPCEndToEnd(t *testing.T) {
	t.Parallel()
	d := newFolioGRPC(t, loadgen.FolioOptions{URL: folioServer(t), Clients: 4})
	if d.Name() != "folio-grpc" {
		t.Errorf("name %q, want folio-grpc", d.Name())
	}
	runAll(t, d, 150*time.Millisecond)
}

// fakeTigris records the calls the driver makes and answers as the test
// says.
type fakeTigris struct {
	api.UnimplementedTigrisServer
	mu    sync.Mutex
	calls []string // method, request and transaction of each call
	// hang makes every read wait until its call ends.
	hang bool
}

func (f *fakeTigris) note(ctx context.Context, method string, req fmt.Stringer) {
	md, _ := metadata.FromIncomingContext(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("%s %s tx=%v/%v", method, req, md.Get("tigris-tx-id"), md.Get("tigris-tx-origin")))
}

func (f *fakeTigris) BeginTransaction(ctx context.Context, req *api.BeginTransactionRequest) (*api.BeginTransactionResponse, error) {
	f.note(ctx, "Begin", req)
	return &api.BeginTransactionResponse{TxCtx: &api.TransactionCtx{Id: "tx1", Origin: "o1"}}, nil
}

func (f *fakeTigris) Read(req *api.ReadRequest, stream grpc.ServerStreamingServer[api.ReadResponse]) error {
	f.note(stream.Context(), "Read", req)
	if f.hang {
		<-stream.Context().Done()
		return stream.Context().Err()
	}
	return stream.Send(&api.ReadResponse{Data: []byte(`{"id":1}`)})
}

func (f *fakeTigris) Update(ctx context.Context, req *api.UpdateRequest) (*api.UpdateResponse, error) {
	f.note(ctx, "Update", req)
	st, _ := grpcstatus.New(codes.Aborted, "conflict").WithDetails(&errdetails.ErrorInfo{Reason: "ABORTED"})
	return nil, st.Err()
}

func (f *fakeTigris) CommitTransaction(ctx context.Context, req *api.CommitTransactionRequest) (*api.CommitTransactionResponse, error) {
	f.note(ctx, "Commit", req)
	return nil, grpcstatus.Error(codes.InvalidArgument, "no such transaction")
}

func (f *fakeTigris) Insert(ctx context.Context, req *api.InsertRequest) (*api.InsertResponse, error) {
	f.note(ctx, "Insert", req)
	return &api.InsertResponse{Keys: [][]byte{[]byte(`{"id":7}`)}}, nil
}

// serveFake serves f over gRPC on a loopback port until the test ends and
// returns its base URL, as a Folio server's.
func serveFake(t *testing.T, f *fakeTigris) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	api.RegisterTigrisServer(g, f)
	go g.Serve(ln)
	t.Cleanup(g.Stop)
	return "http://" + ln.Addr().String()
}

// What the gRPC driver sends, and how it reads the answers and errors.
func TestFolioGRPCSendsAndReads(t *testing.T) {
	t.Parallel()
	f := &fakeTigris{}
	d := newFolioGRPC(t, loadgen.FolioOptions{URL: serveFake(t, f), Clients: 2})
	ctx := context.Background()

	tx, err := d.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Read(ctx, 1); err != nil {
		t.Fatalf("read in a transaction: %v", err)
	}
	if err := tx.Update(ctx, 1, "field0", "x"); !errors.Is(err, loadgen.ErrAborted) {
		t.Errorf("update answered ABORTED: got %v, want ErrAborted", err)
	}
	if err := tx.Commit(ctx); err == nil || errors.Is(err, loadgen.ErrAborted) || grpcstatus.Code(err) != codes.InvalidArgument {
		t.Errorf("commit answered INVALID_ARGUMENT: got %v", err)
	}
	if n, err := d.Scan(ctx, 5, 10); err != nil || n != 1 {
		t.Errorf("scan: %d documents, %v; want 1", n, err)
	}
	if n, err := d.FindGroup(ctx, "g3", 10); err != nil || n != 1 {
		t.Errorf("find group: %d documents, %v; want 1", n, err)
	}
	if err := d.Read2023(ctx, 2); err != nil {
		t.Errorf("read over 2023: %v", err)
	}
	doc := loadgen.Dataset{Docs: 8, Seed: 1}.Document(7)
	if err := d.Insert(ctx, loadgen.Document{ID: 7, JSON: doc}); err != nil {
		t.Errorf("insert: %v", err)
	}
	if err := d.InsertBatch(ctx, []loadgen.Document{{ID: 7, JSON: doc}, {ID: 8, JSON: doc}}); err == nil {
		t.Errorf("an insert of two documents answered with one key succeeded")
	}
	if err := d.Read(ctx, 1); err != nil {
		t.Errorf("read outside the transaction: %v", err)
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	want := []string{
		`Begin project:"bench" tx=[]/[]`,
		`Read project:"bench" collection:"usertable" filter:"{\"id\":1}" tx=[tx1]/[o1]`,
		`Update project:"bench" collection:"usertable" fields:"{\"$set\":{\"field0\":\"x\"}}" filter:"{\"id\":1}" tx=[tx1]/[o1]`,
		`Commit project:"bench" tx=[tx1]/[o1]`,
		`Read project:"bench" collection:"usertable" filter:"{\"id\":{\"$gte\":5}}" options:{limit:10} tx=[]/[]`,
		`Read project:"bench" collection:"usertable" filter:"{\"group\":\"g3\"}" options:{limit:10} tx=[]/[]`,
		`Read project:"bench" collection:"usertable" filter:"{\"id\":2}" branch:"main" tx=[]/[]`,
		`Insert project:"bench" collection:"usertable" documents:` + fmt.Sprintf("%q", doc) + ` tx=[]/[]`,
		"", // the batch of two, whose text is long
		`Read project:"bench" collection:"usertable" filter:"{\"id\":1}" tx=[]/[]`,
	}
	if len(f.calls) != len(want) {
		t.Fatalf("server saw %d calls, want %d:\n%s", len(f.calls), len(want), strings.Join(f.calls, "\n"))
	}
	for i, w := range want {
		// The text form of a message may put two spaces where one is:
		// protobuf varies it on purpose.
		got := strings.Join(strings.Fields(f.calls[i]), " ")
		if w != "" && got != w {
			t.Errorf("call %d:\n got %s\nwant %s", i, got, w)
		}
	}
}

// A read ends by its context's deadline against a server that never
// answers.
func TestFolioGRPCKeepsTheDeadline(t *testing.T) {
	t.Parallel()
	d := newFolioGRPC(t, loadgen.FolioOptions{URL: serveFake(t, &fakeTigris{hang: true}), Clients: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- d.Read(ctx, 1) }()
	select {
	case err := <-done:
		if grpcstatus.Code(err) != codes.DeadlineExceeded {
			t.Fatalf("a read the server never answered: %v, want DEADLINE_EXCEEDED", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the read outlived its 200ms deadline by 5s")
	}
}

func TestFolioGRPCRefusesTLS(t *testing.T) {
	if _, err := loadgen.NewFolioGRPC(loadgen.FolioOptions{URL: "https://127.0.0.1:1"}); err == nil {
		t.Fatal("an https URL was accepted by a driver that speaks plain gRPC only")
	}
}

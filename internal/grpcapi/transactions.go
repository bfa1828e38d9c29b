package grpcapi

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/foliodb/folio/internal/ops"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

// The metadata keys that carry a client's transaction: the HTTP headers'
// names (reference §2), which gRPC sends in lower case. The official Go
// client sends them on every call made in a transaction; grpc-gateway
// prefixed them with "grpc-gateway-" when it forwarded HTTP requests, and
// the original accepted both.
const (
	mdTxID          = "tigris-tx-id"
	mdTxOrigin      = "tigris-tx-origin"
	gatewayMDPrefix = "grpc-gateway-"
)

// txRef reads the transaction a call names, if any.
func txRef(ctx context.Context) ops.TxRef {
	st := stateOf(ctx)
	return ops.TxRef{ID: mdValue(ctx, st, mdTxID, gatewayMDPrefix+mdTxID), Origin: mdValue(ctx, st, mdTxOrigin, gatewayMDPrefix+mdTxOrigin)}
}

// mdValue is the first value of the call's metadata entry key (lower
// case), or else of gatewayKey, the entry grpc-gateway's prefix names so
// (a constant: made here, a key that long would be allocated). st is the
// call's state, if it has one.
func mdValue(ctx context.Context, st *callState, key, gatewayKey string) string {
	if v, ok := mdLookup(ctx, st, key); ok && v != "" {
		return v
	}
	v, _ := mdLookup(ctx, st, gatewayKey)
	return v
}

// mdFirst is the first value of the call's metadata entry key (lower
// case), if it has one.
func mdFirst(ctx context.Context, key string) (string, bool) {
	return mdLookup(ctx, stateOf(ctx), key)
}

// mdLookup is mdFirst with the call's state found. It reads the entry in
// the state's metadata, which costs nothing; without a state, it looks up
// the one entry (metadata.FromIncomingContext copies them all, and a call
// reads several: its caller's token, its request id, its transaction,
// whether it was relayed).
func mdLookup(ctx context.Context, st *callState, key string) (string, bool) {
	var v []string
	if st != nil {
		v = st.md[key]
	} else {
		v = metadata.ValueFromIncomingContext(ctx, key)
	}
	if len(v) > 0 {
		return v[0], true
	}
	return "", false
}

func (s *Server) BeginTransaction(ctx context.Context, req *api.BeginTransactionRequest) (*api.BeginTransactionResponse, error) {
	// The branch binds the transaction: every call made in it must be on
	// that branch.
	res, err := s.ops.BeginTransaction(ctx, callerOn(ctx, req.GetBranch()), ops.DatabaseRequest{DB: req.GetProject(), Branch: req.GetBranch()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	// As over HTTP, a cookie names the transaction for load balancers that
	// keep a client on one node; the Go client echoes it back as a
	// "cookie" entry of its later calls' metadata.
	grpc.SetHeader(ctx, metadata.Pairs("set-cookie", txCookie(res)))
	return &api.BeginTransactionResponse{TxCtx: &api.TransactionCtx{Id: res.Tx.ID, Origin: res.Tx.Origin}}, nil
}

// txCookie is the Set-Cookie value of a new transaction, as the HTTP API
// sends it.
func txCookie(res *ops.BeginResult) string {
	return "Tigris-Tx-Id=" + res.Tx.ID + "; Path=/; Expires=" + res.Expires.UTC().Format(time.RFC1123[:len(time.RFC1123)-3]+"GMT")
}

func (s *Server) CommitTransaction(ctx context.Context, req *api.CommitTransactionRequest) (*api.CommitTransactionResponse, error) {
	if err := s.ops.CommitTransaction(ctx, callerOn(ctx, req.GetBranch()), ops.DatabaseRequest{DB: req.GetProject(), Branch: req.GetBranch(), Tx: txRef(ctx)}); err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.CommitTransactionResponse{Status: "committed"}, nil
}

func (s *Server) RollbackTransaction(ctx context.Context, req *api.RollbackTransactionRequest) (*api.RollbackTransactionResponse, error) {
	if err := s.ops.RollbackTransaction(ctx, callerOn(ctx, req.GetBranch()), ops.DatabaseRequest{DB: req.GetProject(), Branch: req.GetBranch(), Tx: txRef(ctx)}); err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.RollbackTransactionResponse{Status: "rolled back"}, nil
}

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
	md, _ := metadata.FromIncomingContext(ctx)
	return ops.TxRef{ID: mdValue(md, mdTxID), Origin: mdValue(md, mdTxOrigin)}
}

func mdValue(md metadata.MD, key string) string {
	if v := md.Get(key); len(v) > 0 && v[0] != "" {
		return v[0]
	}
	if v := md.Get(gatewayMDPrefix + key); len(v) > 0 {
		return v[0]
	}
	return ""
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

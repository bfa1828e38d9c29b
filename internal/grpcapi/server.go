// Package grpcapi serves the Tigris v1 gRPC API: the services of Folio's
// definitions (internal/wire/tigrisv1, generated from api/proto), which
// are those the official clients of both API generations call, by the
// same wire names and field numbers. It is a second codec over the same
// operations as internal/httpapi: each method decodes the protobuf request
// into the operation's typed request, calls the one method of internal/ops
// that HTTP calls too, and encodes the result or maps the error's code to
// a gRPC status. Documents travel as bytes holding JSON, passed through.
//
// It knows gRPC and protobuf; the operations below it know neither.
package grpcapi

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/foliodb/folio/internal/ops"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

// Config configures the API.
type Config struct {
	// Ops runs every call.
	Ops    *ops.Ops
	Logger *slog.Logger
	// WriteTimeout bounds how long each message of a stream (read, events,
	// subscribe) may wait for the client to read; past it the stream ends
	// with DEADLINE_EXCEEDED. BodyTimeout bounds how long a call's request
	// message may take to arrive; past it the call is cancelled. Default
	// 30s each, as the HTTP API's.
	WriteTimeout, BodyTimeout time.Duration
	// Forwarder relays the calls of transactions that other nodes hold;
	// nil serves every call here.
	Forwarder *Forwarder
}

// Defaults of Config.
const (
	DefaultWriteTimeout = 30 * time.Second
	DefaultBodyTimeout  = 30 * time.Second
)

// Server implements the services of the Tigris v1 API over the
// operations. It embeds the generated UnsafeTigrisServer, not an
// Unimplemented server, which would answer for a method left out: with
// it, the compiler checks that every method of the service is a method
// here, answered or, for a call not built yet, in unbuilt.go.
type Server struct {
	api.UnsafeTigrisServer

	ops                       *ops.Ops
	log                       *slog.Logger
	writeTimeout, bodyTimeout time.Duration
	forwarder                 *Forwarder
}

var _ api.TigrisServer = (*Server)(nil)

// New returns the API over cfg.Ops.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = DefaultBodyTimeout
	}
	return &Server{ops: cfg.Ops, log: cfg.Logger, writeTimeout: cfg.WriteTimeout, bodyTimeout: cfg.BodyTimeout, forwarder: cfg.Forwarder}
}

// Register registers every service of the API on g: Tigris, HealthAPI,
// Auth, User and Admin, Folio's own (Folio), and the services not built (unbuilt.go), which
// answer UNIMPLEMENTED so that a client can tell "not built" from "no such
// service". Two methods are registered by hand beside the generated
// handlers: DescribeDatabase, which answers each API generation in its
// own message (catalog.go), and Auth's 2022 name getAccessToken (auth.go).
func (s *Server) Register(g grpc.ServiceRegistrar) {
	g.RegisterService(withMethods(&api.Tigris_ServiceDesc,
		grpc.MethodDesc{MethodName: "DescribeDatabase", Handler: s.describeDatabaseHandler}), s)
	api.RegisterHealthAPIServer(g, health{s: s})
	a := authService{s: s}
	g.RegisterService(withMethods(&api.Auth_ServiceDesc, grpc.MethodDesc{MethodName: "getAccessToken", Handler: a.getAccessTokenHandler}), a)
	api.RegisterUserServer(g, userService{s: s})
	api.RegisterAdminServer(g, adminService{s: s})
	api.RegisterManagementServer(g, managementService{s: s})
	api.RegisterSearchServer(g, searchService{s: s})
	api.RegisterCacheServer(g, cacheService{s: s})
	api.RegisterFolioServer(g, folioService{s: s})
	s.registerUnbuiltServices(g)
}

// withMethods is a copy of desc whose unary methods include methods,
// each in place of desc's of the same name or beside them.
func withMethods(desc *grpc.ServiceDesc, methods ...grpc.MethodDesc) *grpc.ServiceDesc {
	d := *desc
	d.Methods = append([]grpc.MethodDesc(nil), methods...)
	for _, m := range desc.Methods {
		if !slices.ContainsFunc(methods, func(n grpc.MethodDesc) bool { return n.MethodName == m.MethodName }) {
			d.Methods = append(d.Methods, m)
		}
	}
	return &d
}

// ServerOptions are the options a gRPC server serving the API needs: the
// tap that makes each call's state (guard.go, call.go), and one
// interceptor for unary calls and one for streams that run, in this
// order, the body timeout's end (guard.go), the caller (auth.go), the
// request log, as the HTTP API logs every request, and the relay of calls
// to the node that holds their transaction (forward.go). One interceptor
// that calls each step, rather than a chain of one per step: gRPC's chain
// allocates a closure per link in every call.
func (s *Server) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.InTapHandle(s.tap),
		grpc.UnaryInterceptor(s.interceptUnary),
		grpc.StreamInterceptor(s.interceptStream),
	}
}

// requestIDKey is the metadata key of a call's request id, both ways: a
// client may send one, and the answer's header has the one logged.
const requestIDKey = "x-request-id"

func (s *Server) interceptUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	// A unary call's message has been read whole before its interceptor
	// runs.
	received(ctx)
	ctx = s.withCaller(ctx)
	start := time.Now()
	ctx, id := s.ops.StartRequest(ctx, incomingRequestID(ctx))
	grpc.SetHeader(ctx, metadata.Pairs(requestIDKey, id))
	res, err := s.forwardUnary(ctx, req, info, handler)
	s.logCall(ctx, info.FullMethod, err, start, false)
	return res, err
}

func (s *Server) interceptStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx := s.withCaller(ss.Context())
	start := time.Now()
	ctx, id := s.ops.StartRequest(ctx, incomingRequestID(ctx))
	ss.SetHeader(metadata.Pairs(requestIDKey, id))
	// A server-streaming call's handler reads its message first: the
	// stream ends the body timeout when it has (guard.go).
	err := s.forwardStream(srv, &guardedStream{ServerStream: ss, ctx: ctx}, info, handler)
	s.logCall(ctx, info.FullMethod, err, start, true)
	return err
}

func incomingRequestID(ctx context.Context) string {
	id, _ := mdFirst(ctx, requestIDKey)
	return id
}

// logCall has a call's line written. A call that failed outside the
// operations (gRPC's own errors: a message that does not decode, a call
// cancelled) has had no API code noted: its gRPC code stands in.
func (s *Server) logCall(ctx context.Context, method string, err error, start time.Time, stream bool) {
	if err != nil {
		s.ops.NoteFailure(ctx, apiCodeOf(grpcstatus.Convert(err)))
	}
	s.ops.LogRequest(ctx, ops.RequestRecord{Transport: "grpc", Caller: caller(ctx), Method: method, Duration: time.Since(start), Stream: stream})
}

// GetInfo reports the server's version.
func (s *Server) GetInfo(ctx context.Context, req *api.GetInfoRequest) (*api.GetInfoResponse, error) {
	info, err := s.ops.Info(ctx, caller(ctx))
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.GetInfoResponse{ServerVersion: info.ServerVersion, Engine: info.Engine, Auth: info.Auth}, nil
}

// health serves HealthAPI.
type health struct {
	api.UnsafeHealthAPIServer
	s *Server
}

func (h health) Health(ctx context.Context, _ *api.HealthCheckInput) (*api.HealthCheckResponse, error) {
	if err := h.s.ops.Health(ctx, caller(ctx)); err != nil {
		return nil, h.s.fail(ctx, err)
	}
	return &api.HealthCheckResponse{Response: "OK"}, nil
}

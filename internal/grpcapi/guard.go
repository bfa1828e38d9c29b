package grpcapi

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/tap"
)

// The body timeout, for gRPC: a call's request message must arrive within
// it, as an HTTP request's body must. gRPC's transport waits for a request
// message as long as the client likes, and a connection may hold 250 calls
// waiting so: without a bound, a client could hold goroutines by the
// thousand for nothing. When a call's headers arrive (the tap handle, run
// before the call's stream is set up), its context gets a timer that
// cancels it; the interceptors stop the timer once the message is in. A
// call cancelled so fails with CANCELLED, and gRPC resets its stream.

// tap arms the call's timer in its state (call.go). The context it
// returns becomes the call's stream's, which the transport watches while
// it waits for the message.
func (s *Server) tap(ctx context.Context, info *tap.Info) (context.Context, error) {
	ctx, cancel := context.WithCancel(ctx)
	return &callState{Context: ctx, timer: time.AfterFunc(s.bodyTimeout, cancel), md: info.Header}, nil
}

// received disarms the timer of the call whose request message is in.
func received(ctx context.Context) {
	if c := stateOf(ctx); c != nil {
		c.timer.Stop()
	}
}

// A unary call's message has been read whole before its interceptors run.
func guardUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	received(ctx)
	return handler(ctx, req)
}

// A server-streaming call's handler reads its message first.
func guardStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	return handler(srv, &guardedStream{ServerStream: ss})
}

type guardedStream struct{ grpc.ServerStream }

func (g *guardedStream) RecvMsg(m any) error {
	err := g.ServerStream.RecvMsg(m)
	if err == nil {
		received(g.Context())
	}
	return err
}

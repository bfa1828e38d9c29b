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
// cancels it; the interceptor stops the timer once the message is in. A
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

// guardedStream is a streaming call's stream under its context (its
// caller, its request id): it ends the call's body timeout once the
// request message is in.
type guardedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (g *guardedStream) Context() context.Context { return g.ctx }

func (g *guardedStream) RecvMsg(m any) error {
	err := g.ServerStream.RecvMsg(m)
	if err == nil {
		received(g.ctx)
	}
	return err
}

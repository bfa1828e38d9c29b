package grpcapi

import (
	"context"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/foliodb/folio/internal/ops"
)

// callState is what Folio keeps of a call from when its headers arrive
// (the tap, guard.go) to its end: its body timer, its metadata as the
// transport read it, and its caller once authenticated (auth.go). It is a
// context too, the stream's with the body timer's cancel: one allocation
// per call where a context value each for the timer and the caller, and a
// copy of every metadata entry read, cost several.
type callState struct {
	context.Context
	timer *time.Timer
	// md is the call's incoming metadata, the map gRPC's transport made
	// of the headers (lower-case keys, as HTTP/2 has them): read, never
	// changed. metadata.ValueFromIncomingContext would copy each entry.
	md            metadata.MD
	caller        ops.Caller
	authenticated bool
}

type callStateKey struct{}

// Value answers for the call's state, and asks the stream's context for
// anything else.
func (c *callState) Value(key any) any {
	if key == (callStateKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// stateOf is the call's state; nil for a context the tap did not make
// (a test's, calling a method directly).
func stateOf(ctx context.Context) *callState {
	c, _ := ctx.Value(callStateKey{}).(*callState)
	return c
}

package grpcapi

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/foliodb/folio/internal/apierror"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

// blockingStream is a stream whose SendMsg blocks, as gRPC's does once the
// stream's write quota is spent, when the test says.
type blockingStream struct {
	grpc.ServerStream
	block   bool
	release chan struct{}
	sent    int
}

func (b *blockingStream) SendMsg(m any) error {
	b.sent++
	if b.block {
		<-b.release
		return errors.New("stream ended")
	}
	return nil
}

func (b *blockingStream) Context() context.Context { return context.Background() }

// Messages within directBudget go out from the call's goroutine; past it
// they go through the timed goroutine, and a send that blocks past the
// write timeout ends the call with DEADLINE_EXCEEDED.
func TestTimedSenderSendsDirectlyWithinTheBudget(t *testing.T) {
	st := &blockingStream{release: make(chan struct{})}
	sender := newTimedSender(st, 100*time.Millisecond)
	defer sender.close()
	doc := &api.ReadResponse{Data: make([]byte, 1000)}
	size := proto.Size(doc) + 5
	fit := directBudget / size
	for range fit {
		if err := sender.send(doc); err != nil {
			t.Fatal(err)
		}
	}
	if sender.async != nil || st.sent != fit {
		t.Fatalf("after %d messages of %d bytes (budget %d): %d sent, goroutine started %v", fit, size, directBudget, st.sent, sender.async != nil)
	}
	// The next one passes the budget: the goroutine sends it, and every
	// later one.
	st.block = true
	start := time.Now()
	err := sender.send(doc)
	if e, ok := err.(*apierror.Error); !ok || e.Code != apierror.DeadlineExceeded {
		t.Fatalf("a send blocked past the write timeout: %v, want DEADLINE_EXCEEDED", err)
	}
	if took := time.Since(start); took < 100*time.Millisecond || took > 5*time.Second {
		t.Errorf("the blocked send returned after %v, want the write timeout", took)
	}
	if sender.async == nil {
		t.Fatal("the send past the budget did not start the goroutine")
	}
	close(st.release)
}

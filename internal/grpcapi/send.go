package grpcapi

import (
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/foliodb/folio/internal/apierror"
)

// timedSender sends a stream's messages, each within the write timeout.
// gRPC's transport has no write deadline: a send waits, for as long as the
// client likes, for the flow-control window that a client which stops
// reading never reopens, and a call blocked in it would hold its
// subscription (or read) for good. So messages are sent from a goroutine of
// their own while the call waits at most the timeout for each; past it the
// call returns, which makes gRPC end the stream, and that in turn lets the
// blocked send return.
//
// The first directBudget bytes of a stream are sent from the call's own
// goroutine, without the goroutine or the timer: a send waits only once
// the stream's write quota (64 KiB in gRPC's transport, given back as the
// connection writes the data out) is spent, so sends that stay within half
// of it cannot block, whatever the client does. A point read, most reads,
// never start the goroutine.
type timedSender struct {
	stream  grpc.ServerStream
	timeout time.Duration
	sent    int         // bytes sent from the call's goroutine
	async   *asyncSends // once sent would pass directBudget
}

// directBudget is what a stream's messages may add up to, framing
// included, and still be sent from the call's goroutine: half of gRPC's
// per-stream write quota (defaultWriteQuota, internal/transport), for the
// margin.
const directBudget = 32 << 10

// asyncSends is the goroutine that sends, and what the call waits on.
type asyncSends struct {
	msgs  chan any
	errs  chan error // one slot: a send that outlives its call must not block
	timer *time.Timer
}

func newTimedSender(stream grpc.ServerStream, timeout time.Duration) timedSender {
	return timedSender{stream: stream, timeout: timeout}
}

// send sends m, and returns once it has gone out (gRPC has encoded it and
// handed it to the connection) or the timeout has passed. The sender's
// goroutine, if it runs, is idle whenever send is called: the last send's
// outcome has been taken, or the call is over.
func (t *timedSender) send(m proto.Message) error {
	if t.async == nil {
		// A message's frame has a 5-byte header.
		if n := proto.Size(m) + 5; t.sent+n <= directBudget {
			t.sent += n
			return t.stream.SendMsg(m)
		}
		t.async = startSends(t.stream, t.timeout)
	}
	a := t.async
	a.msgs <- m
	a.timer.Reset(t.timeout)
	select {
	case err := <-a.errs:
		a.timer.Stop()
		return err
	case <-a.timer.C:
		return apierror.Errorf(apierror.DeadlineExceeded, "the client did not read the stream within the server's write timeout (%v): the stream is ended", t.timeout)
	}
}

func startSends(stream grpc.ServerStream, timeout time.Duration) *asyncSends {
	a := &asyncSends{msgs: make(chan any), errs: make(chan error, 1), timer: time.NewTimer(timeout)}
	a.timer.Stop()
	go func() {
		for m := range a.msgs {
			a.errs <- stream.SendMsg(m)
		}
	}()
	return a
}

// close ends the goroutine, if one was started, once its send, if one is
// blocked, returns.
func (t *timedSender) close() {
	if t.async != nil {
		close(t.async.msgs)
	}
}

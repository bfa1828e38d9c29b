package grpcapi

import (
	"time"

	"google.golang.org/grpc"

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
type timedSender struct {
	stream  grpc.ServerStream
	timeout time.Duration
	msgs    chan any
	errs    chan error // one slot: a send that outlives its call must not block
	timer   *time.Timer
}

func newTimedSender(stream grpc.ServerStream, timeout time.Duration) *timedSender {
	t := &timedSender{stream: stream, timeout: timeout, msgs: make(chan any), errs: make(chan error, 1),
		timer: time.NewTimer(timeout)}
	t.timer.Stop()
	go func() {
		for m := range t.msgs {
			t.errs <- stream.SendMsg(m)
		}
	}()
	return t
}

// send sends m, and returns once it has gone out (gRPC has encoded it and
// handed it to the connection) or the timeout has passed. The sender's
// goroutine is idle whenever send is called: the last send's outcome has
// been taken, or the call is over.
func (t *timedSender) send(m any) error {
	t.msgs <- m
	t.timer.Reset(t.timeout)
	select {
	case err := <-t.errs:
		t.timer.Stop()
		return err
	case <-t.timer.C:
		return apierror.Errorf(apierror.DeadlineExceeded, "the client did not read the stream within the server's write timeout (%v): the stream is ended", t.timeout)
	}
}

// close ends the goroutine once its send, if one is blocked, returns.
func (t *timedSender) close() { close(t.msgs) }

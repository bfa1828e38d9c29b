package grpcapi

import (
	"io"
	"net/http"
	"time"

	"google.golang.org/grpc"
)

// HTTPHandler serves g's gRPC calls through an HTTP/2 server's handler
// (grpc.Server.ServeHTTP), so that gRPC shares the HTTP API's port,
// connections, connection cap and shutdown (see docs/architecture.md for
// why this way). It gives gRPC the HTTP API's timeouts, which the HTTP/2
// server applies per stream: the request message must arrive within
// bodyTimeout, and each write to the client (a response, or a stream's
// message) may wait at most writeTimeout for the client to read, after
// which the stream is reset and its call ends.
func HTTPHandler(g *grpc.Server, bodyTimeout, writeTimeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		rc.SetReadDeadline(time.Now().Add(bodyTimeout))
		r.Body = &bodyWithDeadline{ReadCloser: r.Body, rc: rc}
		g.ServeHTTP(&deadlineWriter{ResponseWriter: w, rc: rc, timeout: writeTimeout}, r)
	})
}

// deadlineWriter gives each write and flush a deadline, and lifts it once
// a flush has gone out: an HTTP/2 stream's write deadline resets the stream
// when it passes, even with no write waiting, and a stream (events,
// subscribe) may rightly stay idle for longer than the timeout.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

// Unwrap lets http.ResponseController reach the server's writer.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *deadlineWriter) Write(b []byte) (int, error) {
	w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
	return w.ResponseWriter.Write(b)
}

func (w *deadlineWriter) Flush() {
	w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
	if err := w.rc.Flush(); err == nil {
		w.rc.SetWriteDeadline(time.Time{})
	}
}

// bodyWithDeadline lifts the read deadline once the request has been read
// whole (a unary or server-streaming call's one message and its end): past
// that, reading is gRPC watching for the client going away.
type bodyWithDeadline struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *bodyWithDeadline) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

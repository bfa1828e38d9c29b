// Package http1 serves HTTP/1.x connections with fasthttp, a server built
// for cost per request, running a net/http Handler for each request: the
// API's handlers, limits, logs and error bodies stay the ones net/http
// serves, and only the connection's work (parsing, buffers, framing) is
// fasthttp's. Measured on the API's point read, net/http's own work per
// request was about as much as PostgreSQL's whole point read
// (docs/benchmarks.md, issue 44).
//
// An answer is gathered whole and handed to fasthttp to write after the
// handler returns, which is what almost every answer is. One that the
// handler flushes (a stream: events, subscribe, a read larger than its
// batch) goes out on the connection at once from then on, chunked; the
// connection is then handed back to the server to serve its next request.
// fasthttp holds no answer unsent when a handler starts (every answer sets
// a write deadline, after which fasthttp flushes it), so that a stream's
// bytes cannot overtake an earlier answer on the same connection.
package http1

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Config configures a Server.
type Config struct {
	// Handler answers every request.
	Handler http.Handler
	Logger  *slog.Logger
	// MaxBodyBytes: a body up to this size is read before the handler
	// runs; a larger one is streamed to it, for the handler's own limit to
	// refuse with its own error.
	MaxBodyBytes int64
	// HeaderTimeout bounds a request's headers; BodyTimeout its body;
	// WriteTimeout each write of an answer (the handler may set its own
	// deadlines through http.ResponseController); IdleTimeout how long a
	// connection may wait for its next request.
	HeaderTimeout, BodyTimeout, WriteTimeout, IdleTimeout time.Duration
	// LongLived reports whether the answer to a request on path may stay
	// open as long as its client wants (events, subscribe). Such a request
	// has a context cancelled when its client goes away, as net/http's
	// are, and its connection is closed after it.
	LongLived func(path string) bool
	// SlowBody answers a request whose body did not arrive within
	// BodyTimeout, as the handler answers a body read that times out;
	// nil: net/http's plain 400.
	SlowBody func(w http.ResponseWriter)
	// Refuse answers a request the server refuses before any handler
	// (malformed, headers too large, an unknown HTTP version) with status;
	// why says what was wrong. nil: net/http's plain text.
	Refuse func(w http.ResponseWriter, status int, why string)
}

// maxHeaderBytes bounds a request's line and headers: fasthttp's read
// buffer, which every open connection holds (16 MiB at 1,024 of them).
const maxHeaderBytes = 16 << 10

// Server serves HTTP/1.x connections.
type Server struct {
	cfg Config
	fs  *fasthttp.Server
	log *slog.Logger
	// base is every request's context; cancelled by Close.
	base   context.Context
	cancel context.CancelFunc
	// closing: Shutdown or Close has begun; every answer from then on
	// closes its connection.
	closing atomic.Bool
	conns   connSet
	// resuming counts the connections being handed back after a stream.
	resuming sync.WaitGroup
}

// New returns a server for cfg.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.LongLived == nil {
		cfg.LongLived = func(string) bool { return false }
	}
	s := &Server{cfg: cfg, log: cfg.Logger}
	s.base, s.cancel = context.WithCancel(context.Background())
	s.fs = &fasthttp.Server{
		Handler:      s.serve,
		ErrorHandler: s.refuse,
		// The body's own deadline once its headers are in.
		HeaderReceived: func(*fasthttp.RequestHeader) fasthttp.RequestConfig {
			return fasthttp.RequestConfig{ReadTimeout: cfg.BodyTimeout}
		},
		ReadTimeout:        cfg.HeaderTimeout,
		WriteTimeout:       cfg.WriteTimeout,
		IdleTimeout:        cfg.IdleTimeout,
		MaxRequestBodySize: int(min(cfg.MaxBodyBytes, 1<<31-1)),
		// The request line and headers must fit in the read buffer:
		// 16 KiB (net/http's bound is 1 MiB), room for long tokens.
		ReadBufferSize:    maxHeaderBytes,
		StreamRequestBody: true,
		// A stream hands its connection back to the server (resume).
		KeepHijackedConns: true,
		// As net/http: no Server header, no Content-Type the handler did
		// not set (header names are canonicalized by both).
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		// A multipart body is the handler's to read, as it is on net/http.
		DisablePreParseMultipartForm: true,
		CloseOnShutdown:              true,
		// Its errors quote no request bytes (headers carry tokens).
		SecureErrorLogMessage: true,
		Logger:                fasthttpLogger{cfg.Logger},
	}
	return s
}

// Serve serves the connections ln accepts until Shutdown or Close.
func (s *Server) Serve(ln net.Listener) error {
	err := s.fs.Serve(listener{ln, s})
	if err == nil || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting and waits for the requests in flight until ctx
// is done; from then on no connection serves another request.
func (s *Server) Shutdown(ctx context.Context) error {
	s.closing.Store(true)
	s.conns.close(false)
	err := s.fs.ShutdownWithContext(ctx)
	resumed := make(chan struct{})
	go func() {
		s.resuming.Wait()
		close(resumed)
	}()
	select {
	case <-resumed:
	case <-ctx.Done():
		if err == nil {
			err = ctx.Err()
		}
	}
	return err
}

// Close closes every connection and cancels the long-lived requests'
// context, as net/http's Close does: the handlers still running end.
func (s *Server) Close() {
	s.closing.Store(true)
	s.cancel()
	s.conns.close(true)
}

// serve answers one request.
func (s *Server) serve(ctx *fasthttp.RequestCtx) {
	if s.closing.Load() {
		// fasthttp's own flag is lifted once its Shutdown returns.
		ctx.SetConnectionClose()
	}
	x := newExchange(s, ctx)
	defer func() {
		if p := recover(); p != nil {
			// As net/http: the panic is logged (unless it is the panic that
			// means "abort", as the reverse proxy's) and the connection
			// dropped; the server goes on.
			if p != http.ErrAbortHandler {
				s.log.Error("http: panic serving request", "remote", x.r.RemoteAddr, "path", x.r.URL.Path, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			}
			x.stopWatching()
			x.w.abort()
		}
	}()
	switch {
	case x.refusal != 0:
		x.stopWatching()
		s.refuseWith(ctx, x.refusal)
		return
	case x.r.Method == http.MethodOptions && x.r.RequestURI == "*":
		// net/http answers "OPTIONS *" itself, with nothing.
		x.stopWatching()
		x.w.finish()
		return
	}
	s.cfg.Handler.ServeHTTP(&x.w, x.req)
	x.stopWatching()
	x.w.finish()
}

// refuse answers a request fasthttp could not read, as net/http's server
// does: a body that did not arrive within the body timeout (fasthttp
// reads a short body before the handler runs, and has forgotten the
// request by then) with SlowBody's answer, which net/http's handler gives;
// a connection that ended before a request or failed (timed out, reset)
// in the headers with no answer; a request line or headers too long with
// 431; anything else (a request cut short among them) with 400, through
// Refuse. The connection closes.
func (s *Server) refuse(ctx *fasthttp.RequestCtx, err error) {
	ctx.Response.Reset()
	ctx.SetConnectionClose()
	// fasthttp gives a connection that sent nothing before the header
	// timeout the same bare timeout as a body that stopped arriving; the
	// connection knows whether anything came.
	if ne, ok := err.(net.Error); ok && ne.Timeout() && heardFrom(ctx.Conn()) && s.cfg.SlowBody != nil {
		s.log.Warn("http: a request body did not arrive within the body timeout", "remote", ctx.RemoteAddr().String(), "timeout", s.cfg.BodyTimeout)
		answerUnread(s, ctx, s.cfg.SlowBody)
		return
	}
	var nothing fasthttp.ErrNothingRead
	var netErr net.Error
	if err == io.EOF || errors.As(err, &nothing) || errors.As(err, &netErr) {
		ctx.Conn().Close() // what fasthttp then writes goes nowhere
		return
	}
	status := http.StatusBadRequest
	if _, ok := err.(*fasthttp.ErrSmallBuffer); ok {
		status = http.StatusRequestHeaderFieldsTooLarge
	}
	s.refuseWith(ctx, status)
}

// refuseWith answers with Refuse, or net/http's own plain refusal, and
// closes.
func (s *Server) refuseWith(ctx *fasthttp.RequestCtx, status int) {
	ctx.Response.Reset()
	ctx.SetConnectionClose()
	why := map[int]string{
		http.StatusBadRequest:                  "malformed HTTP request",
		http.StatusRequestHeaderFieldsTooLarge: fmt.Sprintf("the request line and headers are larger than %d bytes", maxHeaderBytes),
		http.StatusHTTPVersionNotSupported:     "unsupported HTTP version",
	}[status]
	if s.cfg.Refuse != nil {
		answerUnread(s, ctx, func(w http.ResponseWriter) { s.cfg.Refuse(w, status, why) })
		return
	}
	ctx.SetStatusCode(status)
	ctx.Response.Header.SetContentType("text/plain; charset=utf-8")
	ctx.Response.SetBodyString(fmt.Sprintf("%d %s: %s", status, http.StatusText(status), why))
}

// fasthttpLogger sends fasthttp's own messages (connections it could not
// serve, mostly malformed requests, which net/http does not log) to the
// node's log at debug level: a client must not be able to fill the log.
type fasthttpLogger struct{ log *slog.Logger }

func (l fasthttpLogger) Printf(format string, args ...any) {
	l.log.Debug("http: " + fmt.Sprintf(format, args...))
}

// answerUnread has answer write the answer to a request that was not read
// (fasthttp forgot it, or refused it), through the same writer as every
// answer.
func answerUnread(s *Server, ctx *fasthttp.RequestCtx, answer func(w http.ResponseWriter)) {
	x := &exchange{s: s, ctx: ctx}
	x.r.ProtoMinor = 1
	x.w.x = x
	answer(&x.w)
	x.w.finish()
}

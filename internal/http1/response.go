package http1

import (
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// responseWriter is the http.ResponseWriter of an exchange. Until the
// handler flushes, the answer is gathered in fasthttp's response body, for
// fasthttp to write when the handler returns (chunked if the handler set
// Transfer-Encoding: chunked, as the API's streams do). Once flushed it is
// live: written on the connection as the handler writes.
type responseWriter struct {
	x      *exchange
	header http.Header
	status int
	// chunked: the handler asked for a chunked answer.
	chunked bool
	// live: the status line and headers are on the connection; the body
	// goes there too, chunked unless its length was given (liveChunked).
	live, liveChunked bool
	// deadline is the write deadline the handler asked for, applied once
	// the answer is live.
	deadline time.Time
	// failed: a write on the connection failed; the connection is done.
	failed error
	// liveLength is the length a live answer declared (-1: none);
	// liveWritten what it has written of it.
	liveLength, liveWritten int64
}

func (w *responseWriter) Header() http.Header {
	if w.header == nil {
		w.header = make(http.Header, 4)
	}
	return w.header
}

func (w *responseWriter) WriteHeader(code int) {
	if w.status != 0 || code < 200 {
		// A second status is ignored, as net/http ignores it; 1xx ones
		// are not an answer (fasthttp sends 100 Continue itself).
		return
	}
	w.status = code
	w.chunked = slices.Contains(w.header["Transfer-Encoding"], "chunked")
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	if w.live {
		return w.writeLive(p)
	}
	w.x.ctx.Response.AppendBody(p)
	return len(p), nil
}

// Flush puts what is gathered on the connection, and makes the answer
// live.
func (w *responseWriter) Flush() { w.FlushError() }

// FlushError is Flush with its error, for http.ResponseController.
func (w *responseWriter) FlushError() error {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !w.live {
		w.goLive()
	}
	return w.failed
}

// SetWriteDeadline applies to the writes on the connection, once live;
// until then the answer is written after the handler returns, within the
// server's write timeout.
func (w *responseWriter) SetWriteDeadline(t time.Time) error {
	w.deadline = t
	if w.live {
		return w.x.ctx.Conn().SetWriteDeadline(t)
	}
	return nil
}

// SetReadDeadline does nothing: the body was read (or is streamed) within
// the server's body timeout.
func (w *responseWriter) SetReadDeadline(time.Time) error { return nil }

// goLive writes the status line, the headers and what is gathered on the
// connection, as net/http would.
func (w *responseWriter) goLive() {
	ctx := w.x.ctx
	buf := scratch.Get().(*[]byte)
	defer putScratch(buf)
	b := append((*buf)[:0], "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(w.status), 10)
	b = append(b, ' ')
	if text := http.StatusText(w.status); text != "" {
		b = append(b, text...)
	} else {
		b = append(b, "status code "...)
		b = strconv.AppendInt(b, int64(w.status), 10)
	}
	b = append(b, "\r\n"...)
	h := w.Header()
	delete(h, "Transfer-Encoding")
	w.liveLength = -1
	if cl := h.Get("Content-Length"); cl != "" {
		if n, err := strconv.ParseInt(cl, 10, 64); err == nil && n >= 0 {
			w.liveLength = n
		} else {
			delete(h, "Content-Length")
		}
	}
	w.liveChunked = bodyAllowed(w.status) && w.liveLength < 0 && w.x.r.ProtoMinor == 1 && !w.isHead()
	if h.Get("Date") == "" {
		h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	}
	if w.liveChunked {
		h.Set("Transfer-Encoding", "chunked")
	}
	if w.closesConnection() {
		h.Set("Connection", "close")
	}
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			b = append(b, k...)
			b = append(b, ": "...)
			b = append(b, strings.Map(newlineToSpace, strings.TrimSpace(v))...)
			b = append(b, "\r\n"...)
		}
	}
	b = append(b, "\r\n"...)
	*buf = b
	w.live = true
	if w.deadline.IsZero() && w.x.s.cfg.WriteTimeout > 0 {
		w.deadline = time.Now().Add(w.x.s.cfg.WriteTimeout)
	}
	if err := ctx.Conn().SetWriteDeadline(w.deadline); err != nil {
		w.failed = err
		return
	}
	if _, err := ctx.Conn().Write(b); err != nil {
		w.failed = err
		return
	}
	if body := ctx.Response.Body(); len(body) > 0 {
		w.writeLive(body)
	}
	ctx.Response.ResetBody()
}

// newlineToSpace keeps a header value on its line, as net/http does.
func newlineToSpace(r rune) rune {
	if r == '\r' || r == '\n' {
		return ' '
	}
	return r
}

// writeLive writes p on the connection, as a chunk of a chunked answer.
func (w *responseWriter) writeLive(p []byte) (int, error) {
	if w.failed != nil {
		return 0, w.failed
	}
	if len(p) == 0 {
		return 0, nil
	}
	if w.isHead() {
		return len(p), nil // as net/http: a HEAD's answer has no body
	}
	conn := w.x.ctx.Conn()
	if !w.liveChunked {
		if w.liveLength >= 0 && w.liveWritten+int64(len(p)) > w.liveLength {
			return 0, http.ErrContentLength
		}
		n, err := conn.Write(p)
		w.liveWritten += int64(n)
		w.failed = err
		return n, err
	}
	buf := scratch.Get().(*[]byte)
	defer putScratch(buf)
	b := strconv.AppendInt((*buf)[:0], int64(len(p)), 16)
	b = append(b, "\r\n"...)
	b = append(b, p...)
	b = append(b, "\r\n"...)
	*buf = b
	if _, err := conn.Write(b); err != nil {
		w.failed = err
		return 0, err
	}
	return len(p), nil
}

// isHead reports whether the answer is to a HEAD request.
func (w *responseWriter) isHead() bool { return w.x.r.Method == http.MethodHead }

// closesConnection reports whether the connection ends with this answer.
func (w *responseWriter) closesConnection() bool {
	r := &w.x.r
	return w.x.longLived || r.Close || r.ProtoMinor == 0 || w.x.s.closing.Load() ||
		strings.EqualFold(w.header.Get("Connection"), "close")
}

// finish hands the answer to fasthttp to write, or ends a live one and
// hands the connection back to the server.
func (w *responseWriter) finish() {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	ctx := w.x.ctx
	if w.live {
		if w.liveChunked && w.failed == nil {
			if w.x.s.cfg.WriteTimeout > 0 {
				// The stream may have lifted its deadline (an idle one).
				ctx.Conn().SetWriteDeadline(time.Now().Add(w.x.s.cfg.WriteTimeout))
			}
			_, w.failed = ctx.Conn().Write([]byte("0\r\n\r\n"))
		}
		// A declared length not all written leaves the client waiting
		// for the rest: the connection ends.
		short := w.liveLength >= 0 && w.liveWritten != w.liveLength && !w.isHead()
		keep := w.failed == nil && !short && !w.closesConnection() && w.x.drainBody()
		s := w.x.s
		s.resuming.Add(1)
		ctx.HijackSetNoResponse(true)
		ctx.Hijack(func(c net.Conn) {
			if keep {
				s.resume(c)
			} else {
				s.resuming.Done()
				c.Close()
			}
		})
		return
	}
	// A deadline set by the handler makes fasthttp write the answer out
	// before it reads the next request (see the package's comment); with
	// no write timeout, a zero one does that alone.
	var deadline time.Time
	if w.x.s.cfg.WriteTimeout > 0 {
		deadline = time.Now().Add(w.x.s.cfg.WriteTimeout)
	}
	ctx.SetWriteDeadline(deadline)
	ctx.SetStatusCode(w.status)
	rh := &ctx.Response.Header
	for k, vs := range w.header {
		switch k {
		case "Content-Length", "Transfer-Encoding":
			continue // fasthttp frames the body
		}
		for _, v := range vs {
			rh.Add(k, v)
		}
	}
	if w.x.longLived {
		ctx.SetConnectionClose()
	}
	if w.chunked && bodyAllowed(w.status) && w.x.r.ProtoMinor == 1 {
		// fasthttp writes a body stream chunk by chunk, flushing each: a
		// point read would take two writes to the socket where net/http
		// takes one. A body with a trailer it writes chunked and whole,
		// so the answer announces one (and sends it empty).
		rh.SetTrailer(streamTrailer)
	}
}

// streamTrailer is the trailer a gathered chunked answer announces (see
// finish).
const streamTrailer = "X-Folio-End"

// abort drops the connection without an answer (a handler panicked).
func (w *responseWriter) abort() {
	ctx := w.x.ctx
	ctx.HijackSetNoResponse(true)
	ctx.Hijack(func(c net.Conn) { c.Close() })
}

// bodyAllowed reports whether an answer with this status may have a body
// (RFC 9110: not 1xx, 204 or 304).
func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// scratch holds the bytes of a live write: a chunk's framing with its data.
var scratch = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// maxPooledScratch: a buffer grown past this by one large chunk (a search
// page of big documents) is left to the garbage collector, not kept.
const maxPooledScratch = 64 << 10

func putScratch(b *[]byte) {
	if cap(*b) <= maxPooledScratch {
		scratch.Put(b)
	}
}

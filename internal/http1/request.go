package http1

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/net/http/httpguts"
)

// exchange is one request and its answer, in the form net/http gives a
// handler, allocated together: they live as long as the request.
type exchange struct {
	s    *Server
	ctx  *fasthttp.RequestCtx
	r    http.Request
	req  *http.Request // r, or a copy of it with a context of its own
	url  url.URL
	body body
	w    responseWriter
	// longLived: the request's context is cancelled when its client goes
	// away, which watcher finds out.
	longLived bool
	cancel    context.CancelFunc
	watcher   chan struct{} // closed when the watcher has stopped
	// refusal is the status net/http's server answers this request with
	// before any handler (a malformed target, header or version); 0 for
	// none.
	refusal int
}

func newExchange(s *Server, ctx *fasthttp.RequestCtx) *exchange {
	x := &exchange{s: s, ctx: ctx}
	h := &ctx.Request.Header
	r := &x.r
	r.Method = method(h.Method())
	uri := h.RequestURI()
	r.RequestURI = string(uri)
	r.URL = &x.url
	if plainPath(uri) {
		x.url.Path = r.RequestURI
	} else if u, err := url.ParseRequestURI(r.RequestURI); err == nil {
		x.url = *u
	} else {
		x.refusal = http.StatusBadRequest
	}
	switch string(h.Protocol()) {
	case "HTTP/1.1":
		r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.1", 1, 1
	case "HTTP/1.0":
		r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.0", 1, 0
	default:
		x.refusal = http.StatusHTTPVersionNotSupported
	}
	r.Header = make(http.Header, 8)
	for k, v := range h.All() {
		name, value := headerName(k), string(v)
		// net/http refuses what fasthttp lets through here: names that
		// are not tokens, values with control bytes.
		if !httpguts.ValidHeaderFieldName(name) || !httpguts.ValidHeaderFieldValue(value) {
			x.refusal = http.StatusBadRequest
		}
		switch name {
		case "Host", "Transfer-Encoding":
			// net/http takes these out of the map: r.Host and the body's
			// framing say them.
		default:
			r.Header[name] = append(r.Header[name], value)
		}
	}
	r.Host = string(h.Host())
	if x.url.Host != "" {
		r.Host = x.url.Host // the absolute form's authority wins (RFC 9112, 3.2.2)
	}
	r.Close = h.ConnectionClose()
	r.RemoteAddr = remoteAddr(ctx)
	switch cl := h.ContentLength(); {
	case cl > 0:
		r.ContentLength = int64(cl)
	case cl == -1: // chunked
		r.ContentLength = -1
	}
	if ctx.Request.IsBodyStream() {
		x.body.stream = ctx.RequestBodyStream()
	} else {
		x.body.b = ctx.Request.Body()
	}
	if r.ContentLength == 0 {
		// No length and no chunks: no body (fasthttp may still give an
		// empty stream).
		r.Body = http.NoBody
	} else {
		r.Body = &x.body
	}
	x.req = r
	// An ordinary request's context is the background: the operations
	// bound its time themselves, and its handler returns before its
	// connection is read again. A long-lived one's ends with its client,
	// or with Close.
	if x.longLived = s.cfg.LongLived(x.url.Path); x.longLived {
		var ctx context.Context
		ctx, x.cancel = context.WithCancel(s.base)
		x.req = r.WithContext(ctx)
		// Watched once the body is in (as net/http's background read
		// starts): a read of the connection before would take body bytes.
		if r.Body == http.NoBody {
			x.watch()
		} else {
			x.body.atEOF = x.watch
		}
	}
	x.w.x = x
	return x
}

// plainPath reports whether a request target is a path that parses to
// itself: no escapes, no query, no control bytes. Anything else goes
// through url.ParseRequestURI, as net/http does with every request.
func plainPath(uri []byte) bool {
	if len(uri) == 0 || uri[0] != '/' {
		return false
	}
	for _, c := range uri {
		if c == '%' || c == '?' || c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// method is a request's method, without an allocation for the usual ones.
func method(m []byte) string {
	switch string(m) {
	case http.MethodGet:
		return http.MethodGet
	case http.MethodPost:
		return http.MethodPost
	case http.MethodPut:
		return http.MethodPut
	case http.MethodDelete:
		return http.MethodDelete
	case http.MethodOptions:
		return http.MethodOptions
	case http.MethodHead:
		return http.MethodHead
	}
	return string(m)
}

// headerName is a header's (canonical) name, without an allocation for
// the ones clients of the API send.
func headerName(k []byte) string {
	switch string(k) {
	case "Host":
		return "Host"
	case "Content-Type":
		return "Content-Type"
	case "Content-Length":
		return "Content-Length"
	case "User-Agent":
		return "User-Agent"
	case "Accept":
		return "Accept"
	case "Accept-Encoding":
		return "Accept-Encoding"
	case "Authorization":
		return "Authorization"
	case "Connection":
		return "Connection"
	case "Origin":
		return "Origin"
	case "X-Request-Id":
		return "X-Request-Id"
	case "Transfer-Encoding":
		return "Transfer-Encoding"
	}
	return string(k)
}

// body is a request's body: read before the handler ran (b), streamed to
// it (stream: one larger than the server reads ahead), or failing (err:
// one that did not arrive in time).
type body struct {
	b      []byte
	off    int
	stream io.Reader
	err    error
	// atEOF, if set, runs once the body has been read to its end.
	atEOF func()
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.read(p)
	if err == io.EOF && b.atEOF != nil {
		f := b.atEOF
		b.atEOF = nil
		f()
	}
	return n, err
}

func (b *body) read(p []byte) (int, error) {
	switch {
	case b.err != nil:
		return 0, b.err
	case b.stream != nil:
		return b.stream.Read(p)
	case b.off >= len(b.b):
		return 0, io.EOF
	}
	n := copy(p, b.b[b.off:])
	b.off += n
	return n, nil
}

func (b *body) Close() error { return nil }

// watch cancels the request's context when its client goes away, as
// net/http's background read does: a stream that waits for changes
// writes nothing for as long as there are none, and would not otherwise
// notice. Bytes arriving instead (a request sent behind this one) end the
// watch without a cancel, as they do in net/http; the connection closes
// after a long-lived request, so they are not served.
func (x *exchange) watch() {
	x.watcher = make(chan struct{})
	c := x.ctx.Conn()
	c.SetReadDeadline(time.Time{})
	go func() {
		defer close(x.watcher)
		var b [1]byte
		_, err := c.Read(b[:])
		if err != nil && !isTimeout(err) {
			x.cancel()
		}
	}()
}

// stopWatching ends the watch: a read deadline in the past ends the read.
func (x *exchange) stopWatching() {
	x.body.atEOF = nil
	if x.watcher == nil {
		if x.cancel != nil {
			x.cancel()
		}
		return
	}
	x.ctx.Conn().SetReadDeadline(time.Unix(1, 0))
	<-x.watcher
	x.watcher = nil
	x.cancel()
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// maxDrain is how much of a body its handler left unread is read and
// dropped after a live answer, for the connection to serve its next
// request; past it the connection closes (fasthttp's own bound for the
// answers it writes).
const maxDrain = 256 << 10

// drainBody reads what the handler left of the body after a live answer
// (fasthttp drains it only for the answers it writes itself), and reports
// whether the connection can serve another request: whatever is left
// would otherwise be read as one.
func (x *exchange) drainBody() bool {
	if x.body.err != nil {
		return false
	}
	if x.body.stream == nil {
		return true
	}
	n, err := io.CopyN(io.Discard, x.body.stream, maxDrain+1)
	return err == io.EOF && n <= maxDrain
}

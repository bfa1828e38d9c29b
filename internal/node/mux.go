package node

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// protocolMux splits one listener's connections by protocol, so that gRPC
// (with gRPC's native transport) and HTTP (HTTP/1.1, and HTTP/2 without
// TLS) share a port: the official clients expect gRPC where HTTP is.
//
// A connection that does not open with the HTTP/2 preface is HTTP/1.1 and
// goes to the HTTP server. One that does is read up to its first request's
// headers: a request whose content type is application/grpc makes it a gRPC
// connection, any other an HTTP/2 one for the HTTP server. gRPC clients do
// not send a request before the server's SETTINGS frame has arrived, so the
// mux sends one (empty: the defaults) right after the preface, as the
// original's matcher did; the HTTP/2 server that then takes the connection
// sends its own. The client acknowledges both: the gRPC server ignores an
// acknowledgement it did not ask for, Go's HTTP/2 server treats one as a
// protocol error, so an HTTP/2 connection's first acknowledgement is taken
// out of its stream (ackFilterConn). A connection that sends the preface
// and no request within grpcIdleGuess is a gRPC client connecting ahead of
// its calls (HTTP/2 clients of the HTTP API send their request at once), and
// goes to gRPC.
type protocolMux struct {
	root       net.Listener
	http, grpc *chanListener
	// http1 takes the HTTP/1.x connections: http itself, unless they have
	// a server of their own (see Config.HTTP1Server).
	http1 *chanListener
	log   *slog.Logger
	// sniffTimeout bounds how long a connection may take to show what it
	// is: its preface and first bytes, as ReadHeaderTimeout bounds HTTP's.
	sniffTimeout time.Duration

	mu       sync.Mutex
	sniffing map[net.Conn]struct{} // closed by Close
	closed   bool
	done     chan struct{} // closed when serve has returned
}

// grpcIdleGuess is how long a connection that sent the HTTP/2 preface may
// wait before its first request and still be taken for HTTP's.
const grpcIdleGuess = 2 * time.Second

func newProtocolMux(root net.Listener, sniffTimeout time.Duration, splitHTTP1 bool, log *slog.Logger) *protocolMux {
	m := &protocolMux{root: root, http: newChanListener(root.Addr()), grpc: newChanListener(root.Addr()), log: log,
		sniffTimeout: sniffTimeout, sniffing: map[net.Conn]struct{}{}, done: make(chan struct{})}
	m.http1 = m.http
	if splitHTTP1 {
		m.http1 = newChanListener(root.Addr())
	}
	go m.serve()
	return m
}

func (m *protocolMux) serve() {
	defer close(m.done)
	for {
		c, err := m.root.Accept()
		if err != nil {
			if m.isClosed() {
				return
			}
			var temp interface{ Temporary() bool }
			if errors.As(err, &temp) && temp.Temporary() {
				// Out of file descriptors, say: wait a little, as
				// net/http's server does, rather than spin.
				m.log.Warn("accept failed; retrying", "err", err)
				time.Sleep(10 * time.Millisecond)
				continue
			}
			// The listener is broken: the servers' Serve return it.
			m.http.fail(err)
			m.http1.fail(err)
			m.grpc.fail(err)
			return
		}
		if !m.track(c) {
			c.Close()
			return
		}
		go m.route(c)
	}
}

func (m *protocolMux) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

func (m *protocolMux) track(c net.Conn) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.sniffing[c] = struct{}{}
	return true
}

func (m *protocolMux) untrack(c net.Conn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sniffing, c)
}

// Close stops accepting, closes the connections still being sniffed and
// the two listeners (their servers' Serve return), and waits for the
// accepting goroutine.
func (m *protocolMux) Close() error {
	m.mu.Lock()
	m.closed = true
	for c := range m.sniffing {
		c.Close()
	}
	m.mu.Unlock()
	err := m.root.Close()
	<-m.done
	m.http.Close()
	m.http1.Close()
	m.grpc.Close()
	return err
}

// route finds out a connection's protocol and hands it to its server.
func (m *protocolMux) route(c net.Conn) {
	defer m.untrack(c)
	c.SetReadDeadline(time.Now().Add(m.sniffTimeout))
	conn, proto, err := m.sniff(c)
	if err != nil {
		c.Close()
		return
	}
	c.SetReadDeadline(time.Time{})
	switch proto {
	case protoGRPC:
		m.grpc.hand(conn)
	case protoHTTP1:
		m.http1.hand(conn)
	default:
		m.http.hand(conn)
	}
}

// protocol is what a connection speaks.
type protocol int

const (
	protoHTTP1 protocol = iota // HTTP/1.x
	protoHTTP2                 // HTTP/2 without gRPC
	protoGRPC
)

var http2Preface = []byte(http2.ClientPreface)

// sniff reads what tells a connection's protocol and returns the
// connection to hand on, with what was read put back in front.
func (m *protocolMux) sniff(c net.Conn) (net.Conn, protocol, error) {
	rec := &recorder{r: c}
	var first [len(http2.ClientPreface)]byte
	for n := 0; n < len(first); {
		k, err := rec.Read(first[n:])
		n += k
		if !bytes.HasPrefix(http2Preface, first[:n]) {
			return &replayConn{Conn: c, r: io.MultiReader(bytes.NewReader(rec.buf), c)}, protoHTTP1, nil
		}
		if err != nil {
			return nil, protoHTTP1, err
		}
	}
	// HTTP/2: let a gRPC client go on to its request.
	if _, err := c.Write(settingsFrame); err != nil {
		return nil, protoHTTP2, err
	}
	isGRPC, err := firstRequestIsGRPC(c, rec)
	if err != nil {
		return nil, protoHTTP2, err
	}
	replay := io.MultiReader(bytes.NewReader(rec.buf), c)
	if isGRPC {
		return &replayConn{Conn: c, r: replay}, protoGRPC, nil
	}
	return &replayConn{Conn: c, r: &ackFilter{r: replay, prefaceLeft: len(http2Preface)}}, protoHTTP2, nil
}

// settingsFrame is an empty SETTINGS frame: the server's preface.
var settingsFrame = []byte{0, 0, 0, byte(http2.FrameSettings), 0, 0, 0, 0, 0}

// firstRequestIsGRPC reads frames after the preface until the first
// request's headers and reports whether its content type is gRPC's. A
// client that sends none within grpcIdleGuess is taken for a gRPC client
// connecting ahead of its calls.
func firstRequestIsGRPC(c net.Conn, rec *recorder) (bool, error) {
	fr := http2.NewFramer(io.Discard, rec)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	fr.SetMaxReadFrameSize(1 << 20)
	c.SetReadDeadline(time.Now().Add(grpcIdleGuess))
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return true, nil // nothing asked yet: a gRPC client's connection
			}
			return false, err
		}
		if h, ok := f.(*http2.MetaHeadersFrame); ok {
			for _, hf := range h.RegularFields() {
				if hf.Name == "content-type" {
					return isGRPC(hf.Value), nil
				}
			}
			return false, nil
		}
	}
}

// isGRPC reports whether a content type is gRPC's (application/grpc, with
// or without a codec suffix such as +proto).
func isGRPC(contentType string) bool {
	rest, ok := strings.CutPrefix(contentType, "application/grpc")
	return ok && (rest == "" || rest[0] == '+' || rest[0] == ';')
}

// recorder keeps every byte read through it, for the server that takes the
// connection to read again.
type recorder struct {
	r   io.Reader
	buf []byte
}

func (r *recorder) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.buf = append(r.buf, p[:n]...)
	return n, err
}

// replayConn is a connection whose reads come from r: the bytes sniffed,
// then the connection's own.
type replayConn struct {
	net.Conn
	r io.Reader
}

func (c *replayConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// ackFilter passes an HTTP/2 client's byte stream through, less its first
// SETTINGS acknowledgement: the one of the mux's own SETTINGS frame, which
// the client acknowledges before the server's, since it received it first.
type ackFilter struct {
	r           io.Reader
	prefaceLeft int
	payloadLeft int
	header      []byte // a frame header read and not yet passed on
	dropped     bool
}

func (f *ackFilter) Read(p []byte) (int, error) {
	for {
		switch {
		case f.prefaceLeft > 0:
			n, err := f.r.Read(p[:min(len(p), f.prefaceLeft)])
			f.prefaceLeft -= n
			return n, err
		case len(f.header) > 0:
			n := copy(p, f.header)
			f.header = f.header[n:]
			return n, nil
		case f.payloadLeft > 0:
			n, err := f.r.Read(p[:min(len(p), f.payloadLeft)])
			f.payloadLeft -= n
			return n, err
		case f.dropped:
			return f.r.Read(p)
		}
		var h [9]byte
		if _, err := io.ReadFull(f.r, h[:]); err != nil {
			return 0, err
		}
		length := int(h[0])<<16 | int(h[1])<<8 | int(h[2])
		if http2.FrameType(h[3]) == http2.FrameSettings && http2.Flags(h[4]).Has(http2.FlagSettingsAck) && length == 0 {
			f.dropped = true
			continue
		}
		f.header, f.payloadLeft = h[:], length
	}
}

// chanListener is a net.Listener whose connections are handed to it.
type chanListener struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	err   error // what Accept returns once done is closed
}

func newChanListener(addr net.Addr) *chanListener {
	return &chanListener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *chanListener) hand(c net.Conn) {
	select {
	case l.conns <- c:
	case <-l.done:
		c.Close()
	}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, l.err
	}
}

func (l *chanListener) Close() error {
	l.fail(net.ErrClosed)
	return nil
}

// fail closes the listener: Accept returns err from then on.
func (l *chanListener) fail(err error) {
	l.once.Do(func() {
		l.err = err
		close(l.done)
	})
}

func (l *chanListener) Addr() net.Addr { return l.addr }

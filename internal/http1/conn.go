package http1

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// listener gives the server its connections as conns, which it tracks.
type listener struct {
	net.Listener
	s *Server
}

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	cc := &conn{Conn: c, s: l.s}
	l.s.conns.add(cc)
	return cc, nil
}

// conn is an accepted connection that knows whether its client has sent
// anything, and leaves the server's set when closed.
type conn struct {
	net.Conn
	s     *Server
	heard atomic.Bool
	once  sync.Once
	// remote is the client's address as a string, made once for all the
	// connection's requests (r.RemoteAddr).
	remote string
}

func (c *conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.heard.Load() {
		c.heard.Store(true)
	}
	return n, err
}

func (c *conn) Close() error {
	c.once.Do(func() { c.s.conns.remove(c) })
	return c.Conn.Close()
}

// connSet is the server's open connections, and which of them wait idle
// in resume, for Shutdown and Close: fasthttp no longer counts a
// connection it handed over (hijacked), nor one waiting to be handed back.
type connSet struct {
	mu   sync.Mutex
	all  map[*conn]struct{}
	idle map[*conn]struct{}
}

func (cs *connSet) add(c *conn) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.all == nil {
		cs.all, cs.idle = map[*conn]struct{}{}, map[*conn]struct{}{}
	}
	cs.all[c] = struct{}{}
}

func (cs *connSet) remove(c *conn) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	delete(cs.all, c)
	delete(cs.idle, c)
}

// setIdle marks c as waiting for its next request (or not).
func (cs *connSet) setIdle(c *conn, idle bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if _, open := cs.all[c]; !open {
		return
	}
	if idle {
		cs.idle[c] = struct{}{}
	} else {
		delete(cs.idle, c)
	}
}

// close closes the idle connections, or all of them.
func (cs *connSet) close(all bool) {
	cs.mu.Lock()
	set := cs.idle
	if all {
		set = cs.all
	}
	var cs2 []*conn
	for c := range set {
		cs2 = append(cs2, c)
	}
	cs.mu.Unlock()
	for _, c := range cs2 {
		c.Close()
	}
}

// ownConn is the conn under c (a connection handed back is wrapped), or
// nil.
func ownConn(c net.Conn) *conn {
	if p, ok := c.(*prefixedConn); ok {
		c = p.Conn
	}
	cc, _ := c.(*conn)
	return cc
}

// remoteAddr is the address of the request's client, as net/http gives it.
func remoteAddr(ctx *fasthttp.RequestCtx) string {
	cc := ownConn(ctx.Conn())
	if cc == nil {
		return ctx.RemoteAddr().String()
	}
	if cc.remote == "" {
		cc.remote = cc.RemoteAddr().String() // only the connection's serving goroutine is here
	}
	return cc.remote
}

// heardFrom reports whether c's client has sent anything on it.
func heardFrom(c net.Conn) bool {
	cc := ownConn(c)
	return cc != nil && cc.heard.Load()
}

// resume serves the next requests of a connection whose last answer went
// out live. c is fasthttp's hijacked connection: its reads go through the
// reader fasthttp had, which may hold the start of the next request. Those
// bytes are taken out (a read with a deadline in the past returns what is
// buffered and touches nothing else), so that the server gets the bare
// connection back with them in front, and a connection that answers many
// streams is not wrapped once per stream.
func (s *Server) resume(c net.Conn) {
	defer s.resuming.Done()
	bare := c
	if u, ok := c.(interface{ UnsafeConn() net.Conn }); ok {
		bare = u.UnsafeConn()
	}
	var pending []byte
	if bare != c {
		c.SetReadDeadline(time.Unix(1, 0))
		buf := make([]byte, 64<<10)
		for {
			n, err := c.Read(buf)
			pending = append(pending, buf[:n]...)
			if err != nil || n == 0 {
				break
			}
		}
		bare.SetReadDeadline(time.Time{})
	}
	if p, ok := bare.(*prefixedConn); ok {
		// From an earlier hand-back, maybe still holding bytes: one
		// wrapper.
		pending = append(pending, p.pending...)
		bare = p.Conn
	}
	if s.closing.Load() {
		bare.Close()
		return
	}
	if len(pending) == 0 {
		// fasthttp gives a connection's first request the header timeout
		// to begin, where a keep-alive one has the idle timeout: wait for
		// the next request's first bytes here, as long as an idle
		// connection may wait (Shutdown closes it meanwhile).
		cc, _ := bare.(*conn)
		if cc != nil {
			s.conns.setIdle(cc, true)
			if s.closing.Load() {
				bare.Close()
				return
			}
		}
		buf := make([]byte, 4096)
		if s.cfg.IdleTimeout > 0 {
			bare.SetReadDeadline(time.Now().Add(s.cfg.IdleTimeout))
		}
		n, err := bare.Read(buf)
		bare.SetReadDeadline(time.Time{})
		if cc != nil {
			s.conns.setIdle(cc, false)
		}
		if err != nil || n == 0 || s.closing.Load() {
			bare.Close()
			return
		}
		pending = buf[:n]
	}
	s.fs.ServeConn(&prefixedConn{Conn: bare, pending: pending})
}

// prefixedConn is a connection with bytes already read from it in front.
type prefixedConn struct {
	net.Conn
	pending []byte
}

func (c *prefixedConn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

package http1

import (
	"net"
	"sync/atomic"
	"time"
)

// listener gives the server its connections as conns.
type listener struct{ net.Listener }

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &conn{Conn: c}, nil
}

// conn is an accepted connection that knows whether its client has sent
// anything.
type conn struct {
	net.Conn
	heard atomic.Bool
}

func (c *conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.heard.Load() {
		c.heard.Store(true)
	}
	return n, err
}

// heardFrom reports whether c's client has sent anything on it.
func heardFrom(c net.Conn) bool {
	if p, ok := c.(*prefixedConn); ok {
		c = p.Conn
	}
	cc, ok := c.(*conn)
	return ok && cc.heard.Load()
}

// resume serves the next requests of a connection whose last answer went
// out live. c is fasthttp's hijacked connection: its reads go through the
// reader fasthttp had, which may hold the start of the next request. Those
// bytes are taken out (a read with a deadline in the past returns what is
// buffered and touches nothing else), so that the server gets the bare
// connection back with them in front, and a connection that answers many
// streams is not wrapped once per stream.
func (s *Server) resume(c net.Conn) {
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
	if len(pending) == 0 {
		// fasthttp gives a connection's first request the header timeout
		// to begin, where a keep-alive one has the idle timeout: wait for
		// the next request's first bytes here, as long as an idle
		// connection may wait.
		buf := make([]byte, 4096)
		if s.cfg.IdleTimeout > 0 {
			bare.SetReadDeadline(time.Now().Add(s.cfg.IdleTimeout))
		}
		n, err := bare.Read(buf)
		bare.SetReadDeadline(time.Time{})
		if err != nil || n == 0 {
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

package nemesis

import (
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// proxy relays TCP connections to Folio nodes, so that the run can cut
// the clients' connections in the middle of their calls (the "cut"
// fault). Each connection goes to one of its backends, picked at random
// when it opens: a proxy of several backends spreads the HTTP clients'
// connections, and so the requests of one transaction, over the nodes,
// which then relay them to the node holding the transaction.
type proxy struct {
	ln       net.Listener
	backends []string

	mu    sync.Mutex
	conns map[net.Conn]struct{} // both ends of every pair relayed
}

func newProxy(backends ...string) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{ln: ln, backends: backends, conns: map[net.Conn]struct{}{}}
	go p.serve()
	return p, nil
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		go p.relay(c)
	}
}

// relay connects c to a backend, trying the others if one does not
// answer (a node killed or restarting); with none, c is closed.
func (p *proxy) relay(c net.Conn) {
	var b net.Conn
	for _, i := range rand.Perm(len(p.backends)) {
		var err error
		if b, err = net.DialTimeout("tcp", p.backends[i], time.Second); err == nil {
			break
		}
	}
	if b == nil {
		c.Close()
		return
	}
	if !p.track(c, b) {
		c.Close()
		b.Close()
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(b, c)
	go pipe(c, b)
	<-done // either side gone: the pair is
	c.Close()
	b.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, b)
	p.mu.Unlock()
}

func (p *proxy) track(c, b net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		return false // closed
	}
	p.conns[c], p.conns[b] = struct{}{}, struct{}{}
	return true
}

// cut resets every connection the proxy relays (an RST, not a polite
// close: as a network that drops them would) and returns how many pairs
// it cut. New connections are taken as before.
func (p *proxy) cut() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
		c.Close()
	}
	n := len(p.conns) / 2
	clear(p.conns)
	return n
}

// close stops taking connections and cuts those it relays.
func (p *proxy) close() {
	p.ln.Close()
	p.cut()
	p.mu.Lock()
	p.conns = nil
	p.mu.Unlock()
}

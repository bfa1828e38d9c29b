package node

import (
	"log/slog"
	"net"
	"sync"
	"time"
)

// limitListener caps the connections open at once: past the cap, Accept
// waits until one closes, so a flood of connections (slow clients, or too
// many of them) cannot use up the process's file descriptors. The kernel's
// backlog holds the waiting ones.
type limitListener struct {
	net.Listener
	slots chan struct{}
	log   *slog.Logger
	done  chan struct{} // closed by Close: a waiting Accept gives up

	closeOnce sync.Once

	mu         sync.Mutex
	lastLogged time.Time
}

func newLimitListener(ln net.Listener, max int, log *slog.Logger) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, max), log: log, done: make(chan struct{})}
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	default:
		l.reached()
		select {
		case l.slots <- struct{}{}:
		case <-l.done:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
}

// reached logs that the cap is reached, at most once a minute.
func (l *limitListener) reached() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if time.Since(l.lastLogged) < time.Minute {
		return
	}
	l.lastLogged = time.Now()
	l.log.Warn("connection limit reached: new connections wait until one closes (raise --max-connections if the clients are legitimate)",
		"max_connections", cap(l.slots))
}

// open is the number of connections open now.
func (l *limitListener) open() int { return len(l.slots) }

type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

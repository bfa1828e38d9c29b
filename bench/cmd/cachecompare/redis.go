package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/foliodb/folio/bench/benchrun"
)

// redisServer is a redis-server this program started.
type redisServer struct {
	addr string
	cmd  *exec.Cmd
}

// startRedis starts a Redis server on a free loopback port with its own
// directory, with args after the port, and waits until it answers PING.
func startRedis(ctx context.Context, bin, dir string, args ...string) (*redisServer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	addr, err := benchrun.FreeAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	all := append([]string{"--port", port, "--bind", "127.0.0.1", "--dir", dir, "--protected-mode", "no", "--daemonize", "no", "--logfile", ""}, args...)
	cmd := exec.CommandContext(ctx, bin, all...)
	cmd.Stdout, cmd.Stderr = nil, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("redis-server (apt-get install redis-server): %w", err)
	}
	s := &redisServer{addr: addr, cmd: cmd}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := dialRedis(addr)
		if err == nil {
			err = c.do("PING")
			c.conn.Close()
			if err == nil {
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("redis-server on %s did not answer: %w", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *redisServer) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
	}
}

// redisConn is a minimal RESP client: one command at a time, its reply
// read whole (a simple string, an error, a bulk string or nil).
type redisConn struct {
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
}

func dialRedis(addr string) (*redisConn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &redisConn{conn: c, r: bufio.NewReader(c), w: bufio.NewWriter(c)}, nil
}

func (c *redisConn) do(args ...string) error {
	fmt.Fprintf(c.w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(c.w, "$%d\r\n%s\r\n", len(a), a)
	}
	if err := c.w.Flush(); err != nil {
		return err
	}
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return err
	}
	switch line[0] {
	case '+', ':':
		return nil
	case '-':
		return fmt.Errorf("redis: %s", line[1:len(line)-2])
	case '$':
		n, err := strconv.Atoi(string(line[1 : len(line)-2]))
		if err != nil || n < 0 {
			return err // nil bulk: the key is absent
		}
		_, err = c.r.Discard(n + 2)
		return err
	}
	return fmt.Errorf("redis: unexpected reply %q", line)
}

func redisSide(name string, srv *redisServer) side {
	cpu := func() (time.Duration, error) { return benchrun.TreeCPUTime(srv.cmd.Process.Pid) }
	return side{name: name, cpu: cpu, client: func() (*client, error) {
		c, err := dialRedis(srv.addr)
		if err != nil {
			return nil, err
		}
		return &client{
			set:   func(k string, v []byte) error { return c.do("SET", k, string(v)) },
			get:   func(k string) error { return c.do("GET", k) },
			close: func() { c.conn.Close() },
		}, nil
	}}
}

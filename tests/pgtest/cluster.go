package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Cluster is a throwaway cluster started by a program rather than a test:
// the cluster the tests get, but durable. The comparison benchmark
// (bench/cmd/benchcompare) runs its PostgreSQL side on one.
type Cluster struct {
	// URL is the postgres:// URL of the cluster's postgres database, as
	// the role folio, which needs no password on loopback.
	URL string

	mu  sync.Mutex // guards srv, which Restart replaces
	srv *server
}

// StartCluster starts a cluster from the server programs in bin (the
// newest in /usr/lib/postgresql/<version>/bin if bin is empty) with fsync,
// synchronous_commit and full_page_writes on. Stop ends it.
func StartCluster(bin string) (*Cluster, error) {
	if bin == "" {
		if bin = findBinaries(); bin == "" {
			return nil, errors.New("pgtest: no PostgreSQL server programs in /usr/lib/postgresql/*/bin (Debian: apt-get install postgresql-15)")
		}
	}
	s, err := startCluster(filepath.Clean(bin), true)
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	return &Cluster{URL: s.url.String(), srv: s}, nil
}

// PID is the process id of the cluster's postmaster, whose children are
// its backends and background workers.
func (c *Cluster) PID() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.srv.pid
}

// Stop shuts the cluster down and removes its directory.
func (c *Cluster) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.srv.stop()
}

// CreateDatabase creates a database in the cluster and returns its URL.
func (c *Cluster) CreateDatabase(ctx context.Context, name string) (string, error) {
	c.mu.Lock()
	srv := c.srv
	c.mu.Unlock()
	if err := srv.createDatabase(ctx, name); err != nil {
		return "", fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

// Restart crashes the server (an immediate shutdown: SIGQUIT, no
// checkpoint, as a power cut would leave it but for what the kernel
// holds) and starts it again on the same port and data, which it recovers
// from its log. It returns once the server accepts connections. The
// nemesis run (tests/nemesis) injects it as a fault.
func (c *Cluster) Restart() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.srv
	old.halt(syscall.SIGQUIT)
	var err error
	// The port was the old server's and is free again; another program
	// may take it meanwhile, which a retry or two outlasts only if it lets
	// go: then the cluster is lost, said by the error.
	for attempt := 0; attempt < 5; attempt++ {
		var s *server
		if s, err = runPostgres(old.bin, old.dir, old.data, old.cred, old.durable, old.port); err == nil {
			c.srv = s
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("pgtest: restart: %w", err)
}

// Pause stops every process of the server (SIGSTOP to the postmaster and
// its children, the backends among them): connections stay open and
// nothing answers, as with a server that hangs. Resume lets it go on.
func (c *Cluster) Pause() error { return c.signalAll(syscall.SIGSTOP) }

// Resume continues a server Pause stopped.
func (c *Cluster) Resume() error { return c.signalAll(syscall.SIGCONT) }

func (c *Cluster) signalAll(sig syscall.Signal) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	pids := append([]int{c.srv.pid}, children(c.srv.pid)...)
	for _, pid := range pids {
		if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("pgtest: signal %d: %w", pid, err)
		}
	}
	return nil
}

// children lists the processes whose parent is pid, from /proc (Linux).
func children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var kids []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses,
		// so the fields are counted from the last ')'.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			kids = append(kids, child)
		}
	}
	return kids
}

// Package pgcluster starts a throwaway PostgreSQL cluster on loopback: a
// fresh data directory from initdb, one postgres process on a free port,
// everything removed on Stop. The comparison benchmark runs its PostgreSQL
// side on one.
package pgcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultBinDir is where Debian's postgresql-15 package puts initdb and
// postgres.
const DefaultBinDir = "/usr/lib/postgresql/15/bin"

// Options configure a cluster.
type Options struct {
	// BinDir holds initdb and postgres (default DefaultBinDir, else the
	// directory of pg_config --bindir).
	BinDir string
	// Settings are passed to postgres as -c name=value, after the
	// package's own (listen address, port, socket directory), which they
	// may not override. Durability settings keep their defaults (fsync,
	// synchronous_commit and full_page_writes on) unless set here.
	Settings map[string]string
	// Log, if set, gets the server's output; by default it goes to a
	// file in the cluster's directory, read back when start-up fails.
	Log *os.File
}

// Cluster is a running throwaway cluster. Connect as user postgres to
// database postgres with DSN; no password is asked on loopback.
type Cluster struct {
	Dir  string // the temporary directory holding data, socket and log
	Port int
	cmd  *exec.Cmd
	done chan error
}

// FindBinDir returns the directory of PostgreSQL's programs.
func FindBinDir() (string, error) {
	if _, err := os.Stat(filepath.Join(DefaultBinDir, "postgres")); err == nil {
		return DefaultBinDir, nil
	}
	out, err := exec.Command("pg_config", "--bindir").Output()
	if err == nil {
		dir := strings.TrimSpace(string(out))
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, nil
		}
	}
	return "", fmt.Errorf("no PostgreSQL server programs in %s or from pg_config (on Debian: apt-get install postgresql-15)", DefaultBinDir)
}

// Start creates and starts a cluster; the caller must Stop it. PostgreSQL
// refuses to run as root, so when the caller is root the cluster belongs
// to, and runs as, the postgres user.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	if opts.BinDir == "" {
		if opts.BinDir, err = FindBinDir(); err != nil {
			return nil, err
		}
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "folio-pg-")
	if err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, fmt.Errorf("pgcluster: hand %s to the postgres user: %w", dir, err)
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(opts.BinDir, "initdb"), "-D", data, "-U", "postgres",
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pgcluster: initdb: %w\n%s", err, out)
	}

	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := []string{"-D", data, "-c", "listen_addresses=127.0.0.1", "-c", "port=" + strconv.Itoa(port),
		"-c", "unix_socket_directories=" + dir}
	for name, value := range opts.Settings {
		args = append(args, "-c", name+"="+value)
	}
	cmd := exec.Command(filepath.Join(opts.BinDir, "postgres"), args...)
	// Its own process group keeps a Ctrl-C at the terminal from reaching
	// the server before the caller has stopped it in order; Pdeathsig
	// takes it down if the caller dies without stopping it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGQUIT}
	logPath := filepath.Join(dir, "postgres.log")
	logFile := opts.Log
	if logFile == nil {
		if logFile, err = os.Create(logPath); err != nil {
			return nil, fmt.Errorf("pgcluster: %w", err)
		}
		defer logFile.Close() // the child keeps its own descriptor
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("pgcluster: start postgres: %w", err)
	}
	c = &Cluster{Dir: dir, Port: port, cmd: cmd, done: make(chan error, 1)}
	go func() { c.done <- cmd.Wait() }()
	if err := c.waitReady(ctx, 30*time.Second); err != nil {
		c.Stop()
		log, _ := os.ReadFile(logPath)
		return nil, fmt.Errorf("pgcluster: %w\n%s", err, tail(log, 2000))
	}
	return c, nil
}

// DSN returns the connection string of the cluster's postgres database.
func (c *Cluster) DSN() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.Port)
}

// waitReady waits until the server accepts connections on its port and
// answers as a server that finished starting.
func (c *Cluster) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		select {
		case err := <-c.done:
			c.done <- err
			return fmt.Errorf("postgres exited while starting: %v", err)
		default:
		}
		// pg_isready would need libpq's tools on PATH; a TCP connection
		// plus the postmaster.pid status line says the same.
		if conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(c.Port), time.Second); err == nil {
			conn.Close()
			if pid, err := os.ReadFile(filepath.Join(c.Dir, "data", "postmaster.pid")); err == nil && bytes.Contains(pid, []byte("ready")) {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres not ready after %v", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop shuts the server down (fast shutdown: sessions are cut, the data is
// flushed), kills it if that takes over 30 seconds, and removes the
// cluster's directory.
func (c *Cluster) Stop() error {
	var err error
	if c.cmd.Process != nil {
		c.cmd.Process.Signal(syscall.SIGINT)
		select {
		case werr := <-c.done:
			c.done <- werr
		case <-time.After(30 * time.Second):
			c.cmd.Process.Kill()
			werr := <-c.done
			c.done <- werr
			err = errors.New("pgcluster: postgres did not stop within 30s and was killed")
		}
	}
	if rerr := os.RemoveAll(c.Dir); rerr != nil && err == nil {
		err = fmt.Errorf("pgcluster: %w", rerr)
	}
	return err
}

// credential returns the postgres user's identity when running as root, and
// nil (run as ourselves) otherwise.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgcluster: running as root, PostgreSQL must run as the postgres user: %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: postgres uid %q: %w", u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: postgres gid %q: %w", u.Gid, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgcluster: find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

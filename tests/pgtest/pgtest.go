// Package pgtest gives tests a throwaway PostgreSQL database.
//
// The first test that asks for a database starts one PostgreSQL cluster for
// the whole test binary, in a temporary directory, listening on 127.0.0.1 on
// a free port; Main stops it when the tests are done. Every NewDatabase call
// creates a fresh database in it, so tests never see each other's data.
//
// Where the server comes from, in order:
//
//   - FOLIO_TEST_POSTGRES_URL, if set: a running server (a postgres:// URL of
//     a role that may CREATE DATABASE); nothing is started.
//   - The PostgreSQL server binaries, /usr/lib/postgresql/<version>/bin (the
//     Debian packages' layout; the newest version found is used).
//
// When neither is there, tests that need PostgreSQL are skipped, except when
// the CI environment variable is set: then they fail, so that CI always
// covers the PostgreSQL backend.
//
// The throwaway cluster runs with fsync, synchronous_commit and
// full_page_writes off (unless FOLIO_TEST_POSTGRES_FSYNC=on). That loses
// nothing a test relies on: tests kill Folio
// processes, never PostgreSQL, and a commit that PostgreSQL acknowledged stays
// visible to every later connection whether or not it reached the disk.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/foliodb/folio/tests/testenv"
	"github.com/jackc/pgx/v5"
)

// URLEnv names the environment variable that points the tests at an
// existing PostgreSQL server instead of a throwaway cluster.
const URLEnv = "FOLIO_TEST_POSTGRES_URL"

// FsyncEnv, set to "on", starts the throwaway cluster durable (fsync and
// synchronous commit on), for benchmarks to compare with durable engines.
const FsyncEnv = "FOLIO_TEST_POSTGRES_FSYNC"

var (
	once    sync.Once
	srv     *server
	srvErr  error  // the server binaries are there but the cluster failed
	missing string // why there is no server at all
	dbSeq   atomic.Int64
)

// Main runs the tests of a package that uses NewDatabase and stops the
// throwaway cluster afterwards. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	if srv != nil {
		srv.stop()
	}
	return code
}

// NewDatabase creates an empty database for tb and returns its URL. The
// database is dropped when tb ends. Without a PostgreSQL server, tb is
// skipped (failed when CI is set).
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	once.Do(setup)
	if missing != "" {
		testenv.Missing(tb, missing)
	}
	if srvErr != nil {
		tb.Fatalf("pgtest: %v", srvErr)
	}
	name := fmt.Sprintf("folio_test_%d_%d", os.Getpid(), dbSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.createDatabase(ctx, name); err != nil {
		tb.Fatalf("pgtest: create database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// FORCE: a test's store may have left connections behind, and a
		// crash test's killed child certainly did.
		if err := srv.admin(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Logf("pgtest: drop database %s: %v", name, err)
		}
	})
	u := *srv.url
	u.Path = "/" + name
	return u.String()
}

// server is a PostgreSQL server the tests use: the throwaway cluster, or the
// one FOLIO_TEST_POSTGRES_URL names.
type server struct {
	url  *url.URL // of the maintenance database
	stop func()
	pid  int // the postmaster's, if this program started it
	// halt ends the postmaster with sig (waiting for it to exit) and
	// leaves its directory, so that it can be started again (Cluster's
	// Restart); nil for a server this program did not start.
	halt func(sig syscall.Signal)
	// What starting it again takes.
	bin, dir, data string
	cred           *syscall.Credential
	durable        bool
	port           int
}

func (s *server) admin(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, s.url.String())
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

func setup() {
	if raw := os.Getenv(URLEnv); raw != "" {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			srvErr = fmt.Errorf("%s must be a postgres:// URL", URLEnv)
			return
		}
		srv = &server{url: u, stop: func() {}}
		return
	}
	bin := findBinaries()
	if bin == "" {
		missing = fmt.Sprintf("no PostgreSQL server binaries (/usr/lib/postgresql/*/bin/initdb) and %s is not set; "+
			"install them (Debian: apt-get install postgresql-15) or point %s at a server", URLEnv, URLEnv)
		return
	}
	srv, srvErr = startCluster(bin, os.Getenv(FsyncEnv) == "on")
}

// findBinaries returns the bin directory of the newest PostgreSQL version
// installed in the Debian layout, or "".
func findBinaries() string {
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(matches) == 0 {
		return ""
	}
	version := func(p string) int {
		v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(p))))
		return v
	}
	sort.Slice(matches, func(i, j int) bool { return version(matches[i]) > version(matches[j]) })
	return filepath.Dir(matches[0])
}

// startCluster creates a cluster in a temporary directory and starts it;
// durable keeps fsync, synchronous_commit and full_page_writes on.
func startCluster(bin string, durable bool) (*server, error) {
	dir, err := os.MkdirTemp("", "folio-pgtest-")
	if err != nil {
		return nil, err
	}
	// PostgreSQL refuses to run as root: run it as the postgres user, in a
	// directory that user owns.
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root, and there is no postgres user to run the server as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "folio", "--auth=trust",
		"--encoding=UTF8", "--no-locale", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	var lastErr error
	// The free port may be taken between finding it and the server binding
	// it; try a few.
	for attempt := 0; attempt < 3; attempt++ {
		s, err := runPostgres(bin, dir, data, cred, durable, 0)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	os.RemoveAll(dir)
	return nil, lastErr
}

// runPostgres starts the postmaster of the cluster in data on port, or on
// a free port if port is 0.
func runPostgres(bin, dir, data string, cred *syscall.Credential, durable bool, port int) (*server, error) {
	if port == 0 {
		var err error
		if port, err = freePort(); err != nil {
			return nil, err
		}
	}
	logPath := filepath.Join(dir, "postgres.log")
	// Appended to: a restarted server's log follows the one before.
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	args := []string{"-D", data,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "port=" + strconv.Itoa(port),
		"-c", "unix_socket_directories=" + dir,
		"-c", "max_connections=300",
		"-c", "max_pred_locks_per_transaction=256",
		"-c", "shared_buffers=128MB",
		"-c", "log_min_messages=warning",
	}
	if !durable {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Pdeathsig: a test binary that is killed takes its server with it
	// (SIGQUIT is PostgreSQL's immediate shutdown).
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	u := &url.URL{Scheme: "postgres", User: url.User("folio"), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Path: "/postgres", RawQuery: "sslmode=disable"}
	s := &server{url: u, pid: cmd.Process.Pid, bin: bin, dir: dir, data: data, cred: cred, durable: durable, port: port}
	s.halt = func(sig syscall.Signal) {
		cmd.Process.Signal(sig)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}
	s.stop = func() {
		s.halt(syscall.SIGINT) // fast shutdown
		os.RemoveAll(dir)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := s.admin(ctx, "SELECT 1")
		cancel()
		if err == nil {
			return s, nil
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("postgres exited at start:\n%s", tail(string(log)))
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-exited
			log, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("postgres did not accept connections within a minute: %v\n%s", err, tail(string(log)))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, errors.New("pgtest: no free port on 127.0.0.1")
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

// createDatabase creates a database by copying the template's files, which
// is several times faster than PostgreSQL 15's default of writing the copy
// through the WAL; older servers know only that way.
func (s *server) createDatabase(ctx context.Context, name string) error {
	err := s.admin(ctx, "CREATE DATABASE "+name+" STRATEGY = FILE_COPY")
	if err != nil && strings.Contains(err.Error(), "strategy") {
		err = s.admin(ctx, "CREATE DATABASE "+name)
	}
	return err
}

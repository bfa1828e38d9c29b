// Package servetest runs a real `folio serve` process for tests: the
// binary built from this module once per test process, listening on a free
// loopback port, on an engine of tests/backendtest with data of its
// own, stopped when the test ends.
//
// It is for tests whose client must not share a binary with the server:
// the official clients of the API (tests/clienttest), whose generated
// protobuf package registers the same names as Folio's own
// (internal/wire/tigrisv1), so the two cannot be linked together; and any
// test that wants "a client nobody here wrote driving a real folio serve".
//
// A test binary that uses it calls Main from TestMain, which removes the
// built binary and stops the PostgreSQL cluster after the tests:
//
//	func TestMain(m *testing.M) { os.Exit(servetest.Main(m)) }
//
// and then, per engine:
//
//	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
//		srv := servetest.Start(t, servetest.Options{Backend: b})
//		// ... a client of srv.Addr (HTTP and gRPC share the port)
//	})
package servetest

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/foliodb/folio/tests/backendtest"
)

// Main runs a test binary's tests, then removes the binary Binary built
// and stops the PostgreSQL cluster if one was started
// (backendtest.Main). Call it from TestMain.
func Main(m *testing.M) int {
	code := backendtest.Main(m)
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	return code
}

var built struct {
	once sync.Once
	dir  string // the temporary directory of the binary, removed by Main
	bin  string
	err  error
}

// Binary returns the path of the folio binary (cmd/folio), built with `go
// build` into a temporary directory the first time a test of the process
// asks. It is built as the test binary was (with -race if that was), so
// that the packages the test compiled come from the build cache. Without
// a go tool on PATH, tb is skipped.
func Binary(tb testing.TB) string {
	tb.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		tb.Skip("no go tool in PATH to build the folio binary")
	}
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "servetest-")
		if built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "folio")
		args := []string{"build", "-o", built.bin}
		if info, ok := debug.ReadBuildInfo(); ok && slices.Contains(info.Settings, debug.BuildSetting{Key: "-race", Value: "true"}) {
			args = append(args, "-race")
		}
		out, err := exec.Command(goTool, append(args, "github.com/foliodb/folio/cmd/folio")...).CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		tb.Fatalf("build the folio binary: %v", built.err)
	}
	return built.bin
}

// Options say how to run the server.
type Options struct {
	// Backend is the engine, on fresh data of the test's own (its
	// Durable's ServeArgs); the zero Backend is the embedded one.
	Backend backendtest.Backend
	// Args are further flags of `folio serve` (--auth, --owner-file,
	// --tls-cert, ...). Give no --addr: the server listens on a free
	// loopback port, which Server.Addr holds.
	Args []string
	// Env is added to the environment, from which every FOLIO_* variable
	// of the test's own has been dropped.
	Env []string
}

// Server is a running `folio serve`.
type Server struct {
	// Addr is where it listens, host:port on the loopback interface: the
	// HTTP API (http:// or, with --tls-cert, https://) and gRPC alike.
	Addr string

	cmd    *exec.Cmd
	out    *SyncBuffer
	exited chan struct{} // closed once the process has exited
}

// Start runs `folio serve` as opts say and returns once it answers
// /v1/health. It is stopped (Stop) when tb ends, and its output, kept,
// goes to tb's log if tb failed.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	bin := Binary(tb)
	if opts.Backend.Durable == nil {
		opts.Backend = backendtest.All[0]
	}
	args := append([]string{"serve", "--addr", "127.0.0.1:0"}, opts.Backend.Durable(tb).ServeArgs...)
	args = append(args, opts.Args...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = tb.TempDir()
	cmd.Env = append(withoutFolioEnv(), opts.Env...)
	s := &Server{cmd: cmd, out: &SyncBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = s.out, s.out
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start folio: %v", err)
	}
	go func() {
		cmd.Wait()
		close(s.exited)
	}()
	tb.Cleanup(func() {
		if err := s.Stop(); err != nil {
			tb.Errorf("stop folio: %v", err)
		}
		if tb.Failed() {
			tb.Logf("folio serve %s said:\n%s", strings.Join(args[1:], " "), s.Output())
		}
	})
	s.Addr = s.waitListening(tb)
	s.waitHealthy(tb, slices.Contains(opts.Args, "--tls-cert"))
	return s
}

// startTimeout bounds how long a server may take to answer at start.
const startTimeout = 60 * time.Second

// listening matches the address of the server's start-up log line, in
// either of its log formats.
var listening = regexp.MustCompile(`msg="?folio listening"?.*?\baddr"?[=:]"?([0-9.]+:[0-9]+)`)

// waitListening waits for the start-up log line and returns the address it
// names: the port the server got from the system, with no race for it.
func (s *Server) waitListening(tb testing.TB) string {
	tb.Helper()
	deadline := time.After(startTimeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if m := listening.FindStringSubmatch(s.Output()); m != nil {
			return m[1]
		}
		select {
		case <-s.exited:
			tb.Fatalf("folio exited (%v) before listening:\n%s", s.cmd.ProcessState, s.Output())
		case <-deadline:
			tb.Fatalf("folio did not say where it listens within %v:\n%s", startTimeout, s.Output())
		case <-tick.C:
		}
	}
}

// waitHealthy polls /v1/health until it answers OK. Over TLS the probe
// does not check the certificate: it asks only whether this process
// answers, and the clients under test check it themselves.
func (s *Server) waitHealthy(tb testing.TB, useTLS bool) {
	tb.Helper()
	url := "http://" + s.Addr + "/v1/health"
	tr := &http.Transport{}
	if useTLS {
		url = "https://" + s.Addr + "/v1/health"
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
	}
	defer tr.CloseIdleConnections()
	c := &http.Client{Timeout: 5 * time.Second, Transport: tr}
	deadline := time.After(startTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		res, err := c.Get(url)
		if err == nil {
			var body bytes.Buffer
			body.ReadFrom(res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
			err = fmt.Errorf("%s: %s", res.Status, body.String())
		}
		select {
		case <-s.exited:
			tb.Fatalf("folio exited (%v) before answering at %s:\n%s", s.cmd.ProcessState, s.Addr, s.Output())
		case <-deadline:
			tb.Fatalf("folio did not answer %s within %v (%v):\n%s", url, startTimeout, err, s.Output())
		case <-tick.C:
		}
	}
}

// Output is what the server has written so far, standard output and
// error together.
func (s *Server) Output() string { return s.out.String() }

// stopTimeout is how long Stop waits after SIGTERM before it kills.
const stopTimeout = 30 * time.Second

// Stop stops the server: SIGTERM, then, if it has not exited within
// stopTimeout, SIGKILL. It returns an error if the server had to be killed
// or exited other than cleanly; a server already stopped returns nil.
// Calling it more than once is fine.
func (s *Server) Stop() error {
	select {
	case <-s.exited:
		return nil
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-s.exited:
	case <-time.After(stopTimeout):
		s.cmd.Process.Kill()
		<-s.exited
		return fmt.Errorf("folio did not exit within %v of SIGTERM: killed", stopTimeout)
	}
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		return fmt.Errorf("folio exited with status %d after SIGTERM", code)
	}
	return nil
}

// withoutFolioEnv is the environment without FOLIO_* variables, which
// would otherwise configure the server under test.
func withoutFolioEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FOLIO_") {
			env = append(env, kv)
		}
	}
	return env
}

// SyncBuffer is a bytes.Buffer safe for a process's writes and a test's
// reads (tests that start processes of their own use it too).
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Len is the number of bytes written so far.
func (b *SyncBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Len()
}

package clienttest

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The least TestFinalClients needs to run a real `folio serve`: build the
// binary once, start it on a free loopback port, wait until it answers,
// kill it at the end of the test. internal/servetest (another branch)
// does the same for every suite; once it merges, these go and the calls
// below become servetest's.

var (
	folioOnce sync.Once
	folioBin  string
	folioErr  error
)

// buildFolio builds cmd/folio once per test binary.
func buildFolio(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to build the folio binary")
	}
	folioOnce.Do(func() {
		dir, err := os.MkdirTemp("", "folio-bin-")
		if err != nil {
			folioErr = err
			return
		}
		folioBin = filepath.Join(dir, "folio")
		out, err := exec.Command(goTool, "build", "-o", folioBin, "github.com/foliodb/folio/cmd/folio").CombinedOutput()
		if err != nil {
			folioErr = &buildError{err, out}
		}
	})
	if folioErr != nil {
		t.Fatalf("go build cmd/folio: %v", folioErr)
	}
	return folioBin
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + string(e.out) }

// served is a running `folio serve`.
type served struct {
	addr string // host:port, HTTP and gRPC
	out  *lockedBuffer
}

// serve starts bin serve on a free loopback port with args (the engine's
// flags), logging every request, and waits until it answers /v1/health.
func serve(t *testing.T, bin string, args ...string) *served {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", addr, "--log-requests"}, args...)...)
	cmd.Dir = t.TempDir()
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FOLIO_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	s := &served{addr: addr, out: &lockedBuffer{}}
	cmd.Stdout, cmd.Stderr = s.out, s.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start folio serve: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/v1/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case <-exited:
			t.Fatalf("folio serve exited before answering:\n%s", s.out)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("folio serve did not answer /v1/health at %s in time:\n%s", addr, s.out)
		}
	}
}

// lockedBuffer is the server's output, written by the process and read by
// the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

package apitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/foliodb/folio/tests/servetest"
)

// The folio binary itself: settings from flags, environment and config
// file, graceful shutdown on SIGTERM and SIGINT, and data that survives a
// clean restart.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the folio binary")
	}
	bin := buildFolio(t)

	t.Run("flags, SIGTERM and restart", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		addr := freeAddr(t)
		p := startFolio(t, bin, addr, nil, "serve", "--addr", addr, "--data-dir", dir)
		c := p.client(t)
		c.createDB(t, "db1")
		c.createColl(t, "db1", "notes", `{"title":"notes","properties":{"id":{"type":"integer"},"text":{"type":"string"}},"primary_key":["id"]}`)
		const doc = `{"id":1, "text":"kept across restarts"}`
		c.insert(t, "db1", "notes", doc)
		before := c.read(t, "db1", "notes", `{"filter":{}}`)
		p.stop(t, syscall.SIGTERM)
		if !strings.Contains(p.output(), `msg="folio listening"`) {
			t.Errorf("no structured start-up log line in:\n%s", p.output())
		}

		addr = freeAddr(t)
		p = startFolio(t, bin, addr, nil, "serve", "--addr", addr, "--data-dir", dir)
		after := p.client(t).read(t, "db1", "notes", `{"filter":{}}`)
		if len(after) != 1 || after[0].line != before[0].line {
			t.Errorf("after a restart:\n got %v\nwant %s", after, before[0].line)
		}
		p.stop(t, syscall.SIGTERM)
	})

	t.Run("a second server on the same data directory", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		addr := freeAddr(t)
		p := startFolio(t, bin, addr, nil, "serve", "--addr", addr, "--data-dir", dir)
		p.client(t).createDB(t, "db1")

		// The second one stops at once and says why: the directory is
		// taken, by which file's lock, and what to do.
		second := exec.Command(bin, "serve", "--addr", freeAddr(t), "--data-dir", dir)
		second.Dir = t.TempDir()
		second.Env = withoutFolioEnv()
		done := make(chan struct{})
		var out []byte
		var err error
		go func() { out, err = second.CombinedOutput(); close(done) }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			second.Process.Kill()
			<-done
			t.Fatalf("a second server on the data directory did not stop:\n%s", out)
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Errorf("a second server on the data directory ended with %v, want exit status 1", err)
		}
		want := "folio serve: pebblekv: data directory " + dir + " is in use by another Folio process (it holds the lock on " +
			filepath.Join(dir, "LOCK") + "): stop that one, or give this one another --data-dir"
		if !strings.Contains(string(out), want) {
			t.Errorf("a second server on the data directory said:\n%s\nwant it to say:\n%s", out, want)
		}
		if strings.Contains(string(out), "folio listening") {
			t.Errorf("the second server listened:\n%s", out)
		}

		// The first one is unharmed.
		c := p.client(t)
		c.createDB(t, "db2")
		if got := c.ok(t, "POST", "/v1/databases/list", "").body; !bytes.Contains(got, []byte(`"db1"`)) || !bytes.Contains(got, []byte(`"db2"`)) {
			t.Errorf("the first server lists %s after the second tried to start", got)
		}
		p.stop(t, syscall.SIGTERM)
	})

	t.Run("environment and SIGINT", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "data")
		addr := freeAddr(t)
		p := startFolio(t, bin, addr, []string{"FOLIO_ADDR=" + addr, "FOLIO_DATA_DIR=" + dir}, "serve")
		p.client(t).createDB(t, "db1")
		p.stop(t, syscall.SIGINT)
		wantNonEmptyDir(t, dir)
	})

	t.Run("config file, flags first", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "data")
		config := filepath.Join(t.TempDir(), "folio.json")
		// The flag wins over the environment, which wins over the file;
		// the file's data_dir is used.
		b, _ := json.Marshal(map[string]string{"addr": "127.0.0.1:1", "data_dir": dir})
		if err := os.WriteFile(config, b, 0o644); err != nil {
			t.Fatal(err)
		}
		addr := freeAddr(t)
		p := startFolio(t, bin, addr, []string{"FOLIO_ADDR=127.0.0.1:2"}, "serve", "--config", config, "--addr", addr)
		p.stop(t, syscall.SIGTERM)
		// Without the flag, the environment's address is the one.
		addr = freeAddr(t)
		p = startFolio(t, bin, addr, []string{"FOLIO_ADDR=" + addr}, "serve", "--config", config)
		p.client(t).createDB(t, "db1")
		p.stop(t, syscall.SIGTERM)
		wantNonEmptyDir(t, dir)
	})

	t.Run("config file alone", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "data")
		config := filepath.Join(t.TempDir(), "folio.json")
		addr := freeAddr(t)
		b, _ := json.Marshal(map[string]string{"addr": addr, "data_dir": dir})
		if err := os.WriteFile(config, b, 0o644); err != nil {
			t.Fatal(err)
		}
		p := startFolio(t, bin, addr, nil, "serve", "--config", config)
		p.client(t).createDB(t, "db1")
		p.stop(t, syscall.SIGTERM)
		wantNonEmptyDir(t, dir)
	})
}

// buildFolio returns the folio binary, built once for the test binary
// (servetest.Binary).
func buildFolio(t *testing.T) string {
	t.Helper()
	return servetest.Binary(t)
}

// freeAddr returns a loopback address with a port free at the time of the
// call.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func wantNonEmptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		t.Errorf("data directory %s was not used (%v)", dir, err)
	}
}

// process is a running folio server.
type process struct {
	cmd    *exec.Cmd
	addr   string
	out    *servetest.SyncBuffer
	exited chan struct{} // closed when the process has exited
}

// startFolio runs the binary with args and the environment without FOLIO_*
// variables plus env, in a directory of its own, and waits until it
// answers /v1/health at addr, where its settings must make it listen.
func startFolio(t *testing.T, bin, addr string, env []string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(withoutFolioEnv(), env...)
	p := &process{cmd: cmd, addr: addr, out: &servetest.SyncBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start folio: %v", err)
	}
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			cmd.Process.Kill()
			<-p.exited
		}
	})
	p.waitHealthy(t)
	return p
}

// withoutFolioEnv is the environment without FOLIO_* variables.
func withoutFolioEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FOLIO_") {
			env = append(env, kv)
		}
	}
	return env
}

// waitHealthy polls /v1/health until it answers, the process exits or a
// deadline passes.
func (p *process) waitHealthy(t *testing.T) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	c := p.client(t)
	for {
		r, err := c.send("GET", "/v1/health", "")
		if err == nil {
			if r.status != 200 || string(r.body) != `{"response":"OK"}` {
				t.Fatalf("health: %s", r)
			}
			return
		}
		select {
		case <-p.exited:
			t.Fatalf("folio exited (%v) before answering at %s:\n%s", p.cmd.ProcessState, p.addr, p.output())
		case <-deadline:
			t.Fatalf("folio did not answer /v1/health at %s in time:\n%s", p.addr, p.output())
		case <-tick.C:
		}
	}
}

func (p *process) client(t *testing.T) *client { return newClient("http://" + p.addr) }

func (p *process) output() string { return p.out.String() }

// stop sends sig and waits, until a deadline, for a clean exit.
func (p *process) stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal folio: %v", err)
	}
	select {
	case <-p.exited:
	case <-time.After(60 * time.Second):
		t.Fatalf("folio did not exit after %v:\n%s", sig, p.output())
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("folio exited with %d after %v:\n%s", code, sig, p.output())
	}
	if !strings.Contains(p.output(), `msg="folio stopped"`) {
		t.Errorf("folio did not log its stop:\n%s", p.output())
	}
}

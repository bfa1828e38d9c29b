package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/foliodb/folio/internal/loadgen"
	"github.com/jackc/pgx/v5"
)

// process is a server the comparison started.
type process struct {
	cmd      *exec.Cmd
	url      string // its HTTP base URL
	pprofURL string // its profiler's, if any
	done     chan error
}

// buildFolio builds ./cmd/folio into out: from the working tree, or with
// rev from that git revision exported into a directory under tmp. It
// returns a description of what it built, for the report.
func buildFolio(ctx context.Context, rev, tmp, out string) (string, error) {
	dir, desc := ".", "the working tree at "+gitOutput("rev-parse", "--short", "HEAD")
	if gitOutput("status", "--porcelain", "--untracked-files=no") != "" {
		desc += " with uncommitted changes"
	}
	if rev != "" {
		commit := gitOutput("rev-parse", "--short", rev+"^{commit}")
		if commit == "" {
			return "", fmt.Errorf("build folio: no git revision %q", rev)
		}
		dir, desc = filepath.Join(tmp, "src"), "commit "+commit
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		archive := exec.CommandContext(ctx, "sh", "-c", `git archive "$1" | tar -x -C "$2"`, "sh", commit, dir)
		archive.Stderr = os.Stderr
		if err := archive.Run(); err != nil {
			return "", fmt.Errorf("build folio: export %s: %w", commit, err)
		}
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/folio")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build folio (run from the repository's root): %w", err)
	}
	return desc, nil
}

// gitOutput returns git's trimmed output, or "" if git fails.
func gitOutput(args ...string) string {
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// startFolio runs `folio serve` on a fresh data directory, with the
// profiler on a second loopback port.
func startFolio(ctx context.Context, bin, dataDir string) (*process, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	pprofAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", "--addr", addr, "--data-dir", dataDir, "--log-level", "warn", "--pprof-addr", pprofAddr)
	p, err := start(ctx, cmd, "http://"+addr)
	if err != nil {
		return nil, fmt.Errorf("folio: %w", err)
	}
	p.pprofURL = "http://" + pprofAddr
	return p, nil
}

// startYardstick runs this program again as the trivial handler.
func startYardstick(ctx context.Context) (*process, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	p, err := start(ctx, exec.Command(self, "-serve-yardstick", addr), "http://"+addr)
	if err != nil {
		return nil, fmt.Errorf("yardstick: %w", err)
	}
	return p, nil
}

func serveYardstick(addr string) error {
	srv := &http.Server{Addr: addr, Handler: loadgen.Yardstick(), ReadHeaderTimeout: 10 * time.Second}
	return srv.ListenAndServe()
}

// start starts cmd and waits until url answers /v1/health.
func start(ctx context.Context, cmd *exec.Cmd, url string) (*process, error) {
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	// Its own process group: a Ctrl-C reaches only this program, which
	// then stops its servers in order. Pdeathsig stops them if it dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, url: url, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url + "/v1/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		select {
		case err := <-p.done:
			return nil, fmt.Errorf("exited while starting: %v", err)
		case <-ctx.Done():
			p.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("%s not answering after 30s", url)
		}
	}
}

// stop asks the process to end (SIGTERM) and kills it after 30 seconds.
func (p *process) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
	}
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// fetchProfile saves a CPU profile of the given seconds from a pprof server.
func fetchProfile(ctx context.Context, pprofURL string, seconds int, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, pprofURL+"/debug/pprof/profile?seconds="+strconv.Itoa(seconds), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("CPU profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("CPU profile: %s: %s", resp.Status, b)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("CPU profile: %w", err)
	}
	return f.Close()
}

// environment is what the report says about where it was measured.
type environment struct {
	date      time.Time
	cpu       string
	cores     int
	memory    string
	os        string
	goVersion string
	postgres  string
	folio     string // what was built: commit or working tree
	loadTimes []string
	warmups   []string
	took      time.Duration
}

func describeEnvironment(ctx context.Context, dsn string) (*environment, error) {
	env := &environment{date: time.Now().UTC(), cores: runtime.NumCPU(), goVersion: runtime.Version(),
		cpu: lscpuModel(), memory: memTotal(), os: osName()}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	var version, sharedBuffers, fsync, syncCommit, fullPages string
	err = conn.QueryRow(ctx, "SELECT current_setting('server_version'), current_setting('shared_buffers'), current_setting('fsync'), "+
		"current_setting('synchronous_commit'), current_setting('full_page_writes')").Scan(&version, &sharedBuffers, &fsync, &syncCommit, &fullPages)
	if err != nil {
		return nil, fmt.Errorf("postgres settings: %w", err)
	}
	// A comparison with a PostgreSQL that does not sync would be void.
	if fsync != "on" || syncCommit != "on" || fullPages != "on" {
		return nil, fmt.Errorf("postgres is not durable: fsync %s, synchronous_commit %s, full_page_writes %s", fsync, syncCommit, fullPages)
	}
	env.postgres = fmt.Sprintf("%s (shared_buffers %s, fsync and synchronous_commit on)", version, sharedBuffers)
	return env, nil
}

// lscpuModel returns lscpu's "Model name", or /proc/cpuinfo's.
func lscpuModel() string {
	if out, err := exec.Command("lscpu").Output(); err == nil {
		if v := field(string(out), "Model name:"); v != "" {
			return v
		}
	}
	b, _ := os.ReadFile("/proc/cpuinfo")
	if v := field(string(b), "model name"); v != "" {
		return strings.TrimPrefix(v, ": ")
	}
	return "unknown"
}

func memTotal() string {
	b, _ := os.ReadFile("/proc/meminfo")
	v := field(string(b), "MemTotal:")
	kb, err := strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64)
	if err != nil {
		return "unknown"
	}
	return fmt.Sprintf("%.0f GiB", float64(kb)/(1<<20))
}

func osName() string {
	b, _ := os.ReadFile("/etc/os-release")
	v := strings.Trim(field(string(b), "PRETTY_NAME="), `"`)
	var u syscall.Utsname
	if syscall.Uname(&u) == nil {
		var rel []byte
		for _, c := range u.Release {
			if c == 0 {
				break
			}
			rel = append(rel, byte(c))
		}
		v += ", Linux " + string(rel)
	}
	return strings.TrimPrefix(v, ", ")
}

// field returns the rest of the first line of text starting with prefix,
// trimmed.
func field(text, prefix string) string {
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, prefix) {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(line, prefix)), ":"))
		}
	}
	return ""
}

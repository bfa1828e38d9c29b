// Package benchrun is what the side-by-side benchmarks (bench/cmd/benchcompare,
// bench/cmd/searchcompare) share: building folio and running it as a server on
// loopback, fetching its CPU profiles, describing the machine a run was
// measured on, and rewriting a run's generated part of docs/benchmarks.md.
package benchrun

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Process is a server a benchmark started.
type Process struct {
	cmd      *exec.Cmd
	URL      string // its HTTP base URL
	PprofURL string // its profiler's, if any
	done     chan error
}

// BuildFolio builds ./cmd/folio into out: from the working tree, or with
// rev from that git revision exported into a directory under tmp. It
// returns a description of what it built, for the report.
func BuildFolio(ctx context.Context, rev, tmp, out string) (string, error) {
	dir, desc := ".", "the working tree at "+GitOutput("rev-parse", "--short", "HEAD")
	if GitOutput("status", "--porcelain", "--untracked-files=no") != "" {
		desc += " with uncommitted changes"
	}
	if rev != "" {
		commit := GitOutput("rev-parse", "--short", rev+"^{commit}")
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

// GitOutput returns git's trimmed output, or "" if git fails.
func GitOutput(args ...string) string {
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// StartFolio runs `folio serve` with args (where its data is: --data-dir,
// or --engine postgres and --postgres-url), on a free loopback port, with
// the profiler on a second one.
func StartFolio(ctx context.Context, bin string, args ...string) (*Process, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	pprofAddr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	all := append([]string{"serve", "--addr", addr, "--log-level", "warn", "--pprof-addr", pprofAddr}, args...)
	p, err := Start(ctx, exec.Command(bin, all...), "http://"+addr)
	if err != nil {
		return nil, fmt.Errorf("folio: %w", err)
	}
	p.PprofURL = "http://" + pprofAddr
	return p, nil
}

// StartSelf runs this program again, with flag and a free loopback
// address as its arguments, as a server that answers /v1/health: a
// benchmark's stand-in server, in a process of its own as the servers it
// stands beside are.
func StartSelf(ctx context.Context, flag string) (*Process, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	return Start(ctx, exec.Command(self, flag, addr), "http://"+addr)
}

// Start starts cmd and waits until url answers /v1/health.
func Start(ctx context.Context, cmd *exec.Cmd, url string) (*Process, error) {
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	// Its own process group: a Ctrl-C reaches only the benchmark, which
	// then stops its servers in order. Pdeathsig stops them if it dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, URL: url, done: make(chan error, 1)}
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
			p.Stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.Stop()
			return nil, fmt.Errorf("%s not answering after 30s", url)
		}
	}
}

// Stop asks the process to end (SIGTERM) and kills it after 30 seconds.
func (p *Process) Stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
	}
}

// CPUTime is the user and system CPU the process has used so far, from
// /proc (Linux only; an error elsewhere).
func (p *Process) CPUTime() (time.Duration, error) {
	st, err := readStat(p.cmd.Process.Pid)
	if err != nil {
		return 0, err
	}
	return st.own(), nil
}

// TreeCPUTime is the CPU a server of several processes has used so far:
// the process pid's own, that of its children still running, and that of
// those it has waited for (PostgreSQL's postmaster and its backends).
// Linux only.
func TreeCPUTime(pid int) (time.Duration, error) {
	// A child reaped while the children are read would count in neither
	// the root's reaped CPU read before nor the listing: read again until
	// the root has reaped nothing meanwhile.
	for attempt := 0; ; attempt++ {
		root, err := readStat(pid)
		if err != nil {
			return 0, err
		}
		children, err := childrenCPU(pid)
		if err != nil {
			return 0, err
		}
		again, err := readStat(pid)
		if err != nil {
			return 0, err
		}
		if again.reaped() == root.reaped() || attempt == 10 {
			return root.own() + root.reaped() + children, nil
		}
	}
}

// childrenCPU sums the CPU of pid's children still running, and of those
// they have waited for.
func childrenCPU(pid int) (time.Duration, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	var total time.Duration
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil || child == pid {
			continue
		}
		st, err := readStat(child)
		if err != nil || st.ppid != pid {
			continue // gone since the listing, or not a child
		}
		total += st.own() + st.reaped()
	}
	return total, nil
}

// procStat is what a process's /proc stat line says of its CPU.
type procStat struct {
	ppid                         int
	utime, stime, cutime, cstime int64 // clock ticks
}

func (s procStat) own() time.Duration {
	return time.Duration(s.utime+s.stime) * time.Second / clockTicks
}

// reaped is the CPU of the children the process has waited for.
func (s procStat) reaped() time.Duration {
	return time.Duration(s.cutime+s.cstime) * time.Second / clockTicks
}

func readStat(pid int) (procStat, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	// The command name, field 2, may hold spaces: count from its end.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("unexpected /proc stat %q", stat)
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 15 {
		return procStat{}, fmt.Errorf("unexpected /proc stat %q", stat)
	}
	// Counted from field 3 (state): ppid is field 4, utime to cstime 14 to 17.
	var n [5]int64
	for j, f := range []string{fields[1], fields[11], fields[12], fields[13], fields[14]} {
		if n[j], err = strconv.ParseInt(f, 10, 64); err != nil {
			return procStat{}, fmt.Errorf("unexpected /proc stat %q: %w", stat, err)
		}
	}
	return procStat{ppid: int(n[0]), utime: n[1], stime: n[2], cutime: n[3], cstime: n[4]}, nil
}

// WaitIdle waits until the process uses at most busy of one core over
// a whole window (the work a load left behind, such as merges and
// compactions, done), or until timeout has passed, or ctx ends. It
// returns how long it waited, and whether the process went idle.
func (p *Process) WaitIdle(ctx context.Context, busy float64, window, timeout time.Duration) (time.Duration, bool, error) {
	return WaitIdle(ctx, p.CPUTime, busy, window, timeout)
}

// WaitIdle is Process.WaitIdle for a server whose CPU cpu reads (such as
// TreeCPUTime's).
func WaitIdle(ctx context.Context, cpu func() (time.Duration, error), busy float64, window, timeout time.Duration) (time.Duration, bool, error) {
	start := time.Now()
	prev, err := cpu()
	if err != nil {
		return 0, false, err
	}
	for time.Since(start) < timeout {
		select {
		case <-ctx.Done():
			return time.Since(start), false, ctx.Err()
		case <-time.After(window):
		}
		now, err := cpu()
		if err != nil {
			return time.Since(start), false, err
		}
		if float64(now-prev) <= busy*float64(window) {
			return time.Since(start), true, nil
		}
		prev = now
	}
	return time.Since(start), false, nil
}

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// FreeAddr returns a loopback address with a port free at the time of the
// call.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// FetchProfile saves a CPU profile of the given seconds from a pprof
// server.
func FetchProfile(ctx context.Context, pprofURL string, seconds int, path string) error {
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

// ProfileTop writes, beside a CPU profile, the top of it in text (flat,
// then cumulative), for reading without the tools.
func ProfileTop(ctx context.Context, path string) error {
	top, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=40", path).Output()
	if err != nil {
		return fmt.Errorf("pprof -top %s: %w", path, err)
	}
	cum, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-cum", "-nodecount=60", path).Output()
	if err != nil {
		return fmt.Errorf("pprof -top -cum %s: %w", path, err)
	}
	return os.WriteFile(strings.TrimSuffix(path, ".pprof")+".top.txt", append(top, cum...), 0o644)
}

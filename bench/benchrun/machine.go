package benchrun

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Machine is what a report says about where it was measured.
type Machine struct {
	Date      time.Time
	CPU       string
	Cores     int
	Memory    string
	OS        string
	GoVersion string
}

// DescribeMachine describes this machine, now.
func DescribeMachine() Machine {
	return Machine{Date: time.Now().UTC(), Cores: runtime.NumCPU(), GoVersion: runtime.Version(),
		CPU: lscpuModel(), Memory: memTotal(), OS: osName()}
}

// LoadAverage is /proc/loadavg's first three figures ("" if unreadable):
// on a shared machine, what else was running.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// PostgresSettings describes the PostgreSQL server at dsn, and fails if
// it does not sync its commits: a comparison with it would be void.
func PostgresSettings(ctx context.Context, dsn string) (string, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	var version, sharedBuffers, fsync, syncCommit, fullPages string
	err = conn.QueryRow(ctx, "SELECT current_setting('server_version'), current_setting('shared_buffers'), current_setting('fsync'), "+
		"current_setting('synchronous_commit'), current_setting('full_page_writes')").Scan(&version, &sharedBuffers, &fsync, &syncCommit, &fullPages)
	if err != nil {
		return "", fmt.Errorf("postgres settings: %w", err)
	}
	if fsync != "on" || syncCommit != "on" || fullPages != "on" {
		return "", fmt.Errorf("postgres is not durable: fsync %s, synchronous_commit %s, full_page_writes %s", fsync, syncCommit, fullPages)
	}
	return fmt.Sprintf("%s (shared_buffers %s, fsync and synchronous_commit on)", version, sharedBuffers), nil
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

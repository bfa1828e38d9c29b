package main

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/tests/testenv"
)

// make release's script, for this machine's platform (the others are
// cross builds of the same code, left to make release): the archive holds
// a binary that prints the version it was given with its commit, and
// serves; SHA256SUMS covers the archives.
func TestReleaseArchive(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary (a minute)")
	}
	if _, err := exec.LookPath("git"); err != nil {
		testenv.Missing(t, "git is not on PATH: the release script is not tested")
	}
	out := t.TempDir()
	platform := runtime.GOOS + "/" + runtime.GOARCH
	cmd := exec.Command("bash", "../../scripts/release.sh")
	cmd.Env = append(os.Environ(), "OUT="+out, "PLATFORMS="+platform, "VERSION=9.8.7-test")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("release.sh: %v\n%s", err, b)
	}
	name := "folio_9.8.7-test_" + runtime.GOOS + "_" + runtime.GOARCH
	sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{name + ".tar.gz", "folio_9.8.7-test_source.tar.gz"} {
		if !strings.Contains(string(sums), f) {
			t.Errorf("SHA256SUMS lacks %s:\n%s", f, sums)
		}
	}
	check := exec.Command("sha256sum", "-c", "SHA256SUMS")
	check.Dir = out
	if b, err := check.CombinedOutput(); err != nil {
		t.Fatalf("sha256sum -c: %v\n%s", err, b)
	}
	bin := extract(t, filepath.Join(out, name+".tar.gz"), name+"/folio", t.TempDir())

	v, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(v), "folio 9.8.7-test (commit ") {
		t.Fatalf("folio version = %q, want the version and its commit", v)
	}

	// The archived binary serves.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	srv := exec.Command(bin, "serve", "--addr", addr, "--data-dir", t.TempDir())
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/v1/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the archived binary did not answer /v1/health: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	st, err := exec.Command(bin, "status", "--json", "--url", "http://"+addr).Output()
	if err != nil || !strings.Contains(string(st), `"version":"9.8.7-test"`) || !strings.Contains(string(st), `"health":"ok"`) {
		t.Fatalf("folio status: %v %s", err, st)
	}
}

// extract copies the archive's member into dir and returns its path.
func extract(t *testing.T, archive, member, dir string) string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			t.Fatalf("%s holds no %s", archive, member)
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name != member {
			continue
		}
		path := filepath.Join(dir, filepath.Base(member))
		out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, tr); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
}

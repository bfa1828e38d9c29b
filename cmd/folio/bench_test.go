package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/foliodb/folio/tests/backendtest"
)

// --cpu-profile writes a CPU profile of the client (gzipped, as pprof
// writes them) over the measured workloads.
func TestBenchCPUProfile(t *testing.T) {
	url := startOn(t, backendtest.OpenPebble(t))
	path := filepath.Join(t.TempDir(), "client.pprof")
	err := execute([]string{"bench", "--url", url, "--docs", "100", "--workload", "C", "--duration", "300ms",
		"--warmup", "0", "--quiet", "--cpu-profile", path}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 100 || !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		t.Fatalf("the profile is %d bytes, starting %x: not a pprof profile", len(b), b[:min(len(b), 4)])
	}
}

package pebblekv

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/kv/kvtest"
)

func open(dir string) (kv.Store, error) { return Open(Options{Dir: dir}) }

func TestMain(m *testing.M) {
	kvtest.CrashChild(open)
	os.Exit(m.Run())
}

func newStore(t *testing.T) kv.Store {
	s, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	kvtest.Run(t, kvtest.Harness{New: newStore})
}

func TestReclaim(t *testing.T) {
	const maxAge = time.Second // long enough that two begins on a loaded machine fit in it
	s, err := Open(Options{Dir: t.TempDir(), MaxTxAge: maxAge})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	kvtest.Reclaim(t, s, maxAge, s.txs.Len)
}

func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test starts child processes")
	}
	kvtest.Crash(t, t.TempDir(), open)
}

// Positions never repeat after a reopen, with groups of several commits.
func TestReopenPositions(t *testing.T) {
	kvtest.ReopenPositions(t, t.TempDir(), open, func(s kv.Store, positions []kv.Position) {
		groups := s.(*Store).batches.Load()
		t.Logf("%d commits in %d groups", len(positions), groups)
		if groups >= int64(len(positions)) {
			t.Fatalf("%d commits went in %d groups: no group held several, so the test proves nothing", len(positions), groups)
		}
	})
}

// A second store on a directory another process has open says so, and
// names the lock file. The other process is this test binary again.
func TestOpenDirectoryInUse(t *testing.T) {
	if dir := os.Getenv("FOLIO_TEST_HOLD_DIR"); dir != "" {
		s, err := Open(Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		fmt.Println("open")
		io.Copy(io.Discard, os.Stdin) // until the parent closes it
		return
	}
	dir := t.TempDir()
	child := exec.Command(os.Args[0], "-test.run=^TestOpenDirectoryInUse$")
	child.Env = append(os.Environ(), "FOLIO_TEST_HOLD_DIR="+dir)
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		child.Wait()
	}()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "open\n" {
		t.Fatalf("the child did not open the store: %q %v", line, err)
	}
	_, err = Open(Options{Dir: dir})
	if err == nil {
		t.Fatal("a second store opened a directory another process has open")
	}
	for _, want := range []string{"is in use by another Folio process", filepath.Join(dir, "LOCK")} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

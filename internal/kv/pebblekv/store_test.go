package pebblekv

import (
	"os"
	"testing"

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

func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test starts child processes")
	}
	kvtest.Crash(t, t.TempDir(), open)
}

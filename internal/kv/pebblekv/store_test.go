package pebblekv

import (
	"os"
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

package sqlkv

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/kv/kvtest"
	"github.com/foliodb/folio/tests/pgtest"
)

func open(url string) (kv.Store, error) { return Open(context.Background(), Options{URL: url}) }

func TestMain(m *testing.M) {
	kvtest.CrashChild(open)
	os.Exit(pgtest.Main(m))
}

func newStore(t *testing.T) kv.Store {
	s, err := open(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	kvtest.Run(t, kvtest.Harness{New: newStore, SpuriousConflicts: true})
}

func TestReclaim(t *testing.T) {
	const maxAge = time.Second // long enough that two begins on a loaded machine fit in it
	s, err := Open(context.Background(), Options{URL: pgtest.NewDatabase(t), MaxTxAge: maxAge})
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
	kvtest.Crash(t, pgtest.NewDatabase(t), open)
}

// Positions (xid8s) never repeat after a reopen with commits that ran
// concurrently.
func TestReopenPositions(t *testing.T) {
	kvtest.ReopenPositions(t, pgtest.NewDatabase(t), open, nil)
}

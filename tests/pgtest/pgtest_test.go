package pgtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/foliodb/folio/tests/testenv"
	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestDatabasesAreSeparate(t *testing.T) {
	ctx := context.Background()
	a, b := NewDatabase(t), NewDatabase(t)
	if a == b {
		t.Fatalf("two tests got the same database %s", a)
	}
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	if _, err := ca.Exec(ctx, "CREATE TABLE only_in_a (x int)"); err != nil {
		t.Fatal(err)
	}
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	var n int
	if err := cb.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_a'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("database b sees a's table: %d, %v", n, err)
	}
}

// A cluster restarted after a crash keeps what it committed and answers
// on the same URL; a paused one answers nothing until resumed.
func TestClusterRestartAndPause(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster of its own")
	}
	if findBinaries() == "" {
		testenv.Missing(t, "no PostgreSQL server programs")
	}
	c, err := StartCluster("")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	ctx := context.Background()
	url, err := c.CreateDatabase(ctx, "restarted")
	if err != nil {
		t.Fatal(err)
	}
	exec := func(timeout time.Duration, sql string) error {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := exec(10*time.Second, "CREATE TABLE t (x int); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	pid := c.PID()
	if err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	if c.PID() == pid {
		t.Fatalf("the postmaster is still %d after the restart", pid)
	}
	if err := exec(10*time.Second, "DO $$ BEGIN IF (SELECT count(*) FROM t) <> 1 THEN RAISE 'row lost'; END IF; END $$"); err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	if err := c.Pause(); err != nil {
		t.Fatal(err)
	}
	if err := exec(500*time.Millisecond, "SELECT 1"); err == nil {
		c.Resume()
		t.Fatal("a paused server answered")
	}
	if err := c.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := exec(10*time.Second, "SELECT 1"); err != nil {
		t.Fatalf("after resuming: %v", err)
	}
}

package pgcluster

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestStartQueryStop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	if _, err := FindBinDir(); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := c.Dir
	conn, err := pgx.Connect(ctx, c.DSN())
	if err != nil {
		c.Stop()
		t.Fatal(err)
	}
	var fsync, syncCommit string
	err = conn.QueryRow(ctx, "SELECT current_setting('fsync'), current_setting('synchronous_commit')").Scan(&fsync, &syncCommit)
	conn.Close(ctx)
	if err != nil {
		t.Error(err)
	}
	if fsync != "on" || syncCommit != "on" {
		t.Errorf("fsync %s, synchronous_commit %s: the cluster must be as durable as Folio", fsync, syncCommit)
	}
	if err := c.Stop(); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is still there after Stop: %v", dir, err)
	}
}

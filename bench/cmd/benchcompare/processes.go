package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/foliodb/folio/bench/benchrun"
	"github.com/foliodb/folio/internal/loadgen"
)

// startYardstick runs this program again as the trivial handler.
func startYardstick(ctx context.Context) (*benchrun.Process, error) {
	p, err := benchrun.StartSelf(ctx, "-serve-yardstick")
	if err != nil {
		return nil, fmt.Errorf("yardstick: %w", err)
	}
	return p, nil
}

func serveYardstick(addr string) error {
	srv := &http.Server{Addr: addr, Handler: loadgen.Yardstick(), ReadHeaderTimeout: 10 * time.Second}
	return srv.ListenAndServe()
}

// environment is what the report says about where it was measured.
type environment struct {
	benchrun.Machine
	postgres  string
	folio     string // what was built: commit or working tree
	loadTimes []string
	warmups   []string
	took      time.Duration
}

func describeEnvironment(ctx context.Context, dsn string) (*environment, error) {
	pg, err := benchrun.PostgresSettings(ctx, dsn)
	if err != nil {
		return nil, err
	}
	return &environment{Machine: benchrun.DescribeMachine(), postgres: pg}, nil
}

package pgtest

import (
	"errors"
	"fmt"
	"path/filepath"
)

// Cluster is a throwaway cluster started by a program rather than a test:
// the cluster the tests get, but durable. The comparison benchmark
// (cmd/benchcompare) runs its PostgreSQL side on one.
type Cluster struct {
	// URL is the postgres:// URL of the cluster's postgres database, as
	// the role folio, which needs no password on loopback.
	URL string
	srv *server
}

// StartCluster starts a cluster from the server programs in bin (the
// newest in /usr/lib/postgresql/<version>/bin if bin is empty) with fsync,
// synchronous_commit and full_page_writes on. Stop ends it.
func StartCluster(bin string) (*Cluster, error) {
	if bin == "" {
		if bin = findBinaries(); bin == "" {
			return nil, errors.New("pgtest: no PostgreSQL server programs in /usr/lib/postgresql/*/bin (Debian: apt-get install postgresql-15)")
		}
	}
	s, err := startCluster(filepath.Clean(bin), true)
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	return &Cluster{URL: s.url.String(), srv: s}, nil
}

// PID is the process id of the cluster's postmaster, whose children are
// its backends and background workers.
func (c *Cluster) PID() int { return c.srv.pid }

// Stop shuts the cluster down and removes its directory.
func (c *Cluster) Stop() { c.srv.stop() }

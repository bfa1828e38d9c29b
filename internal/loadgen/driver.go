// Package loadgen generates load against a document store and measures it:
// YCSB-like workloads and Folio's own over about 1 KB documents, run by
// concurrent clients for a bounded time, with latency histograms per
// operation. The workloads reach a store through a Driver, so the same
// operation mix, data, seeds and clients run on Folio (over its HTTP API)
// and on PostgreSQL (documents as jsonb), and the two can be compared.
package loadgen

import (
	"context"
	"errors"
)

// Driver is a store under load. Its methods are called from many clients at
// once and must be safe for concurrent use. A method that finds the store's
// answer wrong (a document missing, a count off) returns an error: a fast
// wrong answer must not count as an operation.
type Driver interface {
	// Name names the store in reports: "folio", "postgres".
	Name() string

	// Setup makes an empty collection, dropping any there was.
	Setup(ctx context.Context) error
	// InsertBatch adds documents in one request; the load phase uses it.
	InsertBatch(ctx context.Context, docs []Document) error
	// FinishLoad runs after the load phase: what a user would do once the
	// data is in (the PostgreSQL driver builds its indexes and analyzes).
	FinishLoad(ctx context.Context) error
	// Trim deletes every document whose id is from or more, which earlier
	// runs inserted, so that each run starts from the loaded documents.
	Trim(ctx context.Context, from int64) error

	// Read reads document id, which must exist.
	Read(ctx context.Context, id int64) error
	// Update sets field of document id, which must exist, to value.
	Update(ctx context.Context, id int64, field, value string) error
	// Insert adds one document.
	Insert(ctx context.Context, doc Document) error
	// Scan reads up to limit documents from id on, in key order, and
	// returns how many it read.
	Scan(ctx context.Context, id int64, limit int) (int, error)
	// FindEqual reads the documents whose email is email and returns how
	// many it read.
	FindEqual(ctx context.Context, email string) (int, error)
	// FindRange reads the documents whose score is in [lo, hi) and returns
	// how many it read.
	FindRange(ctx context.Context, lo, hi int64) (int, error)
	// FindGroup reads up to limit documents whose group is group and
	// returns how many it read.
	FindGroup(ctx context.Context, group string, limit int) (int, error)
	// FindRangeLimit reads up to limit documents whose score is in
	// [lo, hi) and returns how many it read.
	FindRangeLimit(ctx context.Context, lo, hi int64, limit int) (int, error)
	// CountRange counts the documents whose score is in [lo, hi).
	CountRange(ctx context.Context, lo, hi int64) (int64, error)
	// Read2023 is Read over the final (2023) API's route where the store
	// has one; a store with a single API reads as Read does.
	Read2023(ctx context.Context, id int64) error
	// Begin starts an interactive serializable transaction.
	Begin(ctx context.Context) (Tx, error)

	// Close releases the driver's connections.
	Close() error
}

// Tx is an interactive transaction of a Driver, used by one client.
type Tx interface {
	Read(ctx context.Context, id int64) error
	Update(ctx context.Context, id int64, field, value string) error
	// Commit commits; it returns an error wrapping ErrAborted when the
	// store refused the transaction for a conflict.
	Commit(ctx context.Context) error
	// Rollback abandons the transaction.
	Rollback(ctx context.Context) error
}

// Document is one document of a Dataset.
type Document struct {
	ID   int64
	JSON []byte
}

// ErrAborted marks a transaction the store refused for a conflict with
// another: the answer of a correct serializable store under contention,
// counted apart from errors.
var ErrAborted = errors.New("transaction aborted by a conflict")

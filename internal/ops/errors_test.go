package ops

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/kv"
)

// Every error an operation returns carries an API code; the server's own
// faults keep their cause for the log, and nothing else does.
func TestAPIError(t *testing.T) {
	bad := apierror.Errorf(apierror.InvalidArgument, "bad")
	broken := errors.New("disk on fire")
	for _, tc := range []struct {
		name      string
		err       error
		code      apierror.Code
		message   string
		retry     bool
		keepCause bool
	}{
		{"status error", bad, apierror.InvalidArgument, "bad", false, false},
		{"wrapped status error", fmt.Errorf("insert: %w", bad), apierror.InvalidArgument, "bad", false, false},
		{"conflict", fmt.Errorf("commit: %w", kv.ErrConflict), apierror.Aborted, "transaction not committed due to conflict with another transaction", true, false},
		{"conflict after retries", fmt.Errorf("gave up after 10 attempts: %w", kv.ErrConflict), apierror.Aborted, "transaction not committed due to conflict with another transaction", true, false},
		{"too old", kv.ErrTxTooOld, apierror.Aborted, "transaction not committed due to conflict with another transaction", true, false},
		{"transaction too large", fmt.Errorf("pebblekv: commit: %w: more than 10485760 bytes written", kv.ErrTxTooLarge), apierror.InvalidArgument,
			"the request writes too much for one transaction (more than 10485760 bytes written): split it into smaller requests", false, false},
		{"key too large", fmt.Errorf("%w: 3000 bytes, limit 2048", kv.ErrKeyTooLarge), apierror.InvalidArgument, "a primary key is too large for the store (3000 bytes, limit 2048)", false, false},
		{"value too large", fmt.Errorf("%w: 2000000 bytes, limit 1048576", kv.ErrValueTooLarge), apierror.InvalidArgument, "a document is too large for the store (2000000 bytes, limit 1048576)", false, false},
		{"deadline", context.DeadlineExceeded, apierror.DeadlineExceeded, "context deadline exceeded", false, false},
		{"cancelled", fmt.Errorf("read: %w", context.Canceled), apierror.Cancelled, "request cancelled", false, false},
		{"store closed", kv.ErrClosed, apierror.Unavailable, "server is shutting down", false, false},
		{"storage unreachable", fmt.Errorf("sqlkv: begin on postgres://u@db.example:5432/d: %w: dial tcp: connection refused", kv.ErrUnavailable),
			apierror.Unavailable, "the storage cannot be reached right now; retry later", true, true},
		{"no connection free", fmt.Errorf("sqlkv: begin: %w within 2s", kv.ErrBusy),
			apierror.Unavailable, "no storage connection free: the server has too many requests at once; retry later", true, true},
		{"disk full", fmt.Errorf("%w: 1048576 bytes free on the disk of /data, under the 20971520 kept for Pebble's flushes", kv.ErrStorageFull),
			apierror.ResourceExhausted, "the server's disk is full: writes are refused until space is freed; retry later", true, false},
		{"log trimmed", fmt.Errorf("changelog: read after 7: %w (%w)", changelog.ErrTrimmed, kv.ErrLogTrimmed), apierror.OutOfRange,
			"the position is older than the oldest change the log still keeps (see the server's log retention); start again from a fresh position", false, false},
		{"log position ahead", fmt.Errorf("changelog: open a reader after 9, the log ends at 8: %w", changelog.ErrAhead), apierror.OutOfRange,
			"the position is ahead of this server's change log: it comes from another server or data directory", false, false},
		{"log reader cut off", fmt.Errorf("changelog: reader after 3: %w", changelog.ErrCutOff), apierror.OutOfRange,
			"the log reader fell too far behind (it kept the log from being trimmed for longer than the retention allows) and was cut off; resync from a fresh position", false, false},
		{"log reader cut off by size", fmt.Errorf("changelog: reader after 3: %w", changelog.ErrCutOffBySize), apierror.OutOfRange,
			"the log reader fell too far behind (the change log reached its size bound, see the server's log retention bytes, and dropped changes it had not read); resync from a fresh position", false, false},
		{"anything else", broken, apierror.Internal, "disk on fire", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, ok := apierror.From(apiError(context.Background(), tc.err))
			if !ok {
				t.Fatalf("apiError(%v) carries no code", tc.err)
			}
			if e.Code != tc.code || e.Message != tc.message {
				t.Errorf("apiError(%v) = %s %q, want %s %q", tc.err, e.Code, e.Message, tc.code, tc.message)
			}
			if (e.RetryDelay > 0) != tc.retry {
				t.Errorf("apiError(%v) retry delay %v, want one: %v", tc.err, e.RetryDelay, tc.retry)
			}
			if (e.Cause != nil) != tc.keepCause {
				t.Errorf("apiError(%v) cause %v, want one: %v", tc.err, e.Cause, tc.keepCause)
			}
		})
	}
	if apiError(context.Background(), nil) != nil {
		t.Error("apiError(nil) is not nil")
	}
}

// Once the request's context is done, an error that does not say why (the
// PostgreSQL driver closes a connection whose query was cancelled) is
// reported as the deadline or the cancellation; the client's own mistakes
// and conflicts keep their codes.
func TestAPIErrorAfterDeadline(t *testing.T) {
	expired, cancel := context.WithTimeout(context.Background(), -1)
	defer cancel()
	gone, cancelGone := context.WithCancel(context.Background())
	cancelGone()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		code apierror.Code
	}{
		{"backend error past the deadline", expired, errors.New("conn closed"), apierror.DeadlineExceeded},
		{"backend error after the client left", gone, errors.New("conn closed"), apierror.Cancelled},
		{"client error past the deadline", expired, apierror.Errorf(apierror.InvalidArgument, "bad"), apierror.InvalidArgument},
		{"conflict past the deadline", expired, kv.ErrConflict, apierror.Aborted},
		{"log reader cut off past the deadline", expired, changelog.ErrCutOff, apierror.OutOfRange},
		{"backend error in time", context.Background(), errors.New("conn closed"), apierror.Internal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := apierror.From(apiError(tc.ctx, tc.err))
			if e == nil || e.Code != tc.code {
				t.Errorf("apiError = %v, want code %s", e, tc.code)
			}
		})
	}
}

// The names come first, then whether the transport could decode the body,
// as in the original; the collection's name before the database's.
func TestCheckNamesOrder(t *testing.T) {
	const nameRule = "a name starts with a letter, then has letters, digits, '_' or '-', 2 to 128 characters in all"
	malformed := apierror.Errorf(apierror.InvalidArgument, "malformed JSON request")
	for _, tc := range []struct {
		db, coll  string
		hasColl   bool
		malformed error
		want      string
	}{
		{"db", "1x", true, malformed, "invalid collection name '1x': " + nameRule},
		{"1x", "1x", true, malformed, "invalid collection name '1x': " + nameRule},
		{"1x", "coll", true, malformed, "invalid database name '1x': " + nameRule},
		{"db", "coll", true, malformed, "malformed JSON request"},
		{"1x", "", false, malformed, "invalid database name '1x': " + nameRule},
		{"db", "", false, nil, ""},
	} {
		err := checkNames(tc.db, tc.coll, tc.hasColl, tc.malformed)
		got := ""
		if e, ok := apierror.From(err); ok {
			got = e.Message
		}
		if got != tc.want {
			t.Errorf("checkNames(%q, %q, %v, %v) = %q, want %q", tc.db, tc.coll, tc.hasColl, tc.malformed, got, tc.want)
		}
	}
}

// A message past maxMessageBytes keeps its start and end, cut between
// characters; a shared error is not changed.
func TestBoundedMessage(t *testing.T) {
	for _, tc := range []struct {
		name, msg string
		cut       bool
	}{
		{"short", "field 'a' is unknown", false},
		{"at the bound", strings.Repeat("x", maxMessageBytes), false},
		{"ASCII past the bound", "field '" + strings.Repeat("x", 5000) + "' is unknown", true},
		{"multibyte", "field '" + strings.Repeat("é", 5000) + "' is unknown", true},
		{"four-byte", "field '" + strings.Repeat("😀", 5000) + "' is unknown", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &apierror.Error{Code: apierror.InvalidArgument, Message: tc.msg}
			got := bounded(e)
			if e.Message != tc.msg {
				t.Fatal("bounded changed the error it was given")
			}
			if !tc.cut {
				if got.Message != tc.msg {
					t.Errorf("cut a message within the bound: %q", got.Message)
				}
				return
			}
			m := got.Message
			if len(m) > maxMessageBytes+len("…") || !utf8.ValidString(m) || got.Code != e.Code {
				t.Errorf("got %d bytes (valid UTF-8 %v, code %s): %q", len(m), utf8.ValidString(m), got.Code, m)
			}
			if !strings.HasPrefix(m, "field '") || !strings.HasSuffix(m, "' is unknown") || strings.Count(m, "…") != 1 {
				t.Errorf("the start, the end or the ellipsis is missing: %q", m)
			}
		})
	}
}

package kvtest

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/foliodb/folio/internal/kv"
)

// Contents is everything a store holds at one position: every key with its
// value, and every change-log entry up to that position. Tests of copies
// (backup, restore) compare a copy's contents with its source's.
type Contents struct {
	Keys [][2][]byte
	Log  []kv.LogEntry
	UpTo kv.Position
}

// ReadContents reads every key r sees (the whole user key space) and the
// store's change-log entries up to position upTo.
func ReadContents(ctx context.Context, r kv.Reader, s kv.Store, upTo kv.Position) (*Contents, error) {
	c := &Contents{UpTo: upTo}
	it := r.Scan(ctx, kv.Range{Begin: []byte{}, End: []byte{0xFF}}, kv.ScanOptions{})
	for it.Next() {
		c.Keys = append(c.Keys, [2][]byte{bytes.Clone(it.Key()), bytes.Clone(it.Value())})
	}
	err := it.Err()
	it.Close()
	if err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	for after := kv.Position(0); after < upTo; {
		entries, to, err := s.ReadLog(ctx, after, 0)
		if err != nil {
			return nil, fmt.Errorf("read log after %d: %w", after, err)
		}
		for _, e := range entries {
			if e.Pos <= upTo {
				c.Log = append(c.Log, e)
			}
		}
		if to == after {
			return nil, fmt.Errorf("the log ends at %d, before %d", to, upTo)
		}
		after = to
	}
	return c, nil
}

// CompareContents fails t with the first differences between a copy and
// its source: keys missing, extra or different, and log entries.
func CompareContents(t testing.TB, source, cp *Contents) {
	t.Helper()
	const most = 10
	diffs := 0
	report := func(format string, args ...any) {
		diffs++
		if diffs <= most {
			t.Errorf(format, args...)
		}
	}
	i, j := 0, 0
	for i < len(source.Keys) || j < len(cp.Keys) {
		switch {
		case j == len(cp.Keys) || i < len(source.Keys) && bytes.Compare(source.Keys[i][0], cp.Keys[j][0]) < 0:
			report("key %x is in the source, not in the copy", source.Keys[i][0])
			i++
		case i == len(source.Keys) || bytes.Compare(source.Keys[i][0], cp.Keys[j][0]) > 0:
			report("key %x is in the copy, not in the source", cp.Keys[j][0])
			j++
		default:
			if !bytes.Equal(source.Keys[i][1], cp.Keys[j][1]) {
				report("key %x: the source holds %x, the copy %x", source.Keys[i][0], source.Keys[i][1], cp.Keys[j][1])
			}
			i++
			j++
		}
	}
	if len(source.Log) != len(cp.Log) {
		report("the source's log has %d entries up to %d, the copy's %d", len(source.Log), source.UpTo, len(cp.Log))
	}
	for k := range min(len(source.Log), len(cp.Log)) {
		a, b := source.Log[k], cp.Log[k]
		if a.Pos != b.Pos || len(a.Records) != len(b.Records) {
			report("log entry %d: the source's is at %d with %d records, the copy's at %d with %d", k, a.Pos, len(a.Records), b.Pos, len(b.Records))
			continue
		}
		for r := range a.Records {
			if !bytes.Equal(a.Records[r], b.Records[r]) {
				report("log entry at %d, record %d differs", a.Pos, r)
			}
		}
	}
	if diffs > most {
		t.Errorf("... and %d more differences", diffs-most)
	}
}

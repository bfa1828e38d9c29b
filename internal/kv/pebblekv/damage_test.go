package pebblekv

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/kv"
)

// storeWithTwoTables writes 2,000 keys a00000… and then 2,000 keys b00000…
// with 512 random bytes each, each batch flushed into a table of its own,
// and closes the store. It returns the directory and the path of the table
// holding the b keys.
func storeWithTwoTables(t *testing.T) (dir, bTable string) {
	t.Helper()
	dir = t.TempDir()
	s, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var tables []string
	for _, prefix := range []string{"a", "b"} {
		for batch := 0; batch < 2000; batch += 500 {
			if _, err := kv.Run(ctx, s, func(tx kv.Tx) error {
				for i := batch; i < batch+500; i++ {
					v := make([]byte, 512)
					rand.Read(v)
					if err := tx.Set(fmt.Appendf(nil, "%s%05d", prefix, i), v); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.db.Flush(); err != nil {
			t.Fatal(err)
		}
		tables = newTables(t, dir, tables)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, tables[len(tables)-1]
}

// newTables returns the tables in dir, failing unless exactly one is not
// in known, which comes last.
func newTables(t *testing.T, dir string, known []string) []string {
	t.Helper()
	all, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	var added []string
	for _, f := range all {
		if !contains(known, f) {
			added = append(added, f)
		}
	}
	if len(added) != 1 {
		t.Fatalf("a flush made tables %v, want one", added)
	}
	return append(known, added[0])
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// damageFile overwrites 64 bytes in the middle of the file at path.
func damageFile(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	junk := make([]byte, 64)
	rand.Read(junk)
	if _, err := f.WriteAt(junk, info.Size()/2); err != nil {
		t.Fatal(err)
	}
}

// countPrefix reads every key with prefix in a transaction of its own.
func countPrefix(s kv.Store, prefix string) (int, error) {
	n := 0
	_, err := kv.Run(context.Background(), s, func(tx kv.Tx) error {
		n = 0
		it := tx.Scan(context.Background(), kv.PrefixRange([]byte(prefix)), kv.ScanOptions{})
		defer it.Close()
		for it.Next() {
			n++
		}
		return it.Err()
	})
	return n, err
}

// Damaged data found while serving fails the reads that reach it with
// kv.ErrDataLoss, and the store takes no more writes; the process goes on
// (Pebble's default would end it), and reads elsewhere are answered.
func TestDamagedTableWhileServing(t *testing.T) {
	dir, bTable := storeWithTwoTables(t)
	damageFile(t, bTable)

	s, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Ping(context.Background()); err != nil {
		t.Fatalf("ping before the damage was read: %v", err)
	}
	if n, err := countPrefix(s, "a"); err != nil || n != 2000 {
		t.Fatalf("the intact table: %d keys, %v; want 2000", n, err)
	}
	if _, err := countPrefix(s, "b"); !errors.Is(err, kv.ErrDataLoss) {
		t.Fatalf("reading the damaged table: %v, want kv.ErrDataLoss", err)
	}
	if err := s.Ping(context.Background()); !errors.Is(err, kv.ErrDataLoss) || !strings.Contains(err.Error(), filepath.Base(bTable)) {
		t.Errorf("ping after the damage: %v, want kv.ErrDataLoss naming %s", err, filepath.Base(bTable))
	}
	_, err = kv.Run(context.Background(), s, func(tx kv.Tx) error { return tx.Set([]byte("c"), []byte("1")) })
	if !errors.Is(err, kv.ErrDataLoss) {
		t.Errorf("a write after the damage: %v, want kv.ErrDataLoss", err)
	}
	if n, err := countPrefix(s, "a"); err != nil || n != 2000 {
		t.Errorf("the intact table after the damage: %d keys, %v; want 2000", n, err)
	}
	// The log's size is not scanned for on a damaged store (each read of a
	// damaged block costs Pebble's bit-flip search): it says why at once.
	if _, err := s.LogBytes(context.Background(), 0, 1<<40); !errors.Is(err, kv.ErrDataLoss) {
		t.Errorf("the log's size after the damage: %v, want kv.ErrDataLoss", err)
	}
}

// Check finds every damaged table of a stopped store, and passes a whole one.
func TestCheck(t *testing.T) {
	dir, bTable := storeWithTwoTables(t)
	ctx := context.Background()
	report, err := Check(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !report.OK() || len(report.Tables) != 2 {
		t.Fatalf("a whole store: %+v, want two tables and nothing damaged", report)
	}

	damageFile(t, bTable)
	report, err = Check(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	damaged := report.Damaged()
	if report.OK() || len(damaged) != 1 || damaged[0].File != bTable || !strings.Contains(damaged[0].Keys, "b00000") {
		t.Fatalf("damaged %+v, want %s alone, with its keys", damaged, bTable)
	}
	// The levels' check reads every key: on damaged tables it would only
	// fail again on the damage, so it is not run.
	if report.Levels != nil {
		t.Errorf("the levels were checked on a damaged store: %v", report.Levels)
	}

	s, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// (Another process gets TestOpenDirectoryInUse's message; this one,
	// Pebble's own for a lock it holds.)
	if _, err := Check(ctx, dir); err == nil {
		t.Error("check of a store that is open: no error, want it refused")
	}
}

// A copy that left out the empty marker files is refused, with every data
// file left as it was; the error says how to get the markers back, and
// doing so opens the store with its data.
func TestOpenRefusesDataWithoutMarkers(t *testing.T) {
	dir, _ := storeWithTwoTables(t)
	cases := []struct {
		name    string
		drop    func(name string, size int64) bool
		missing []string
	}{
		{"every empty file", func(_ string, size int64) bool { return size == 0 }, []string{manifestMarkerPrefix, formatMarkerPrefix}},
		{"the manifest marker", func(name string, _ int64) bool { return strings.HasPrefix(name, manifestMarkerPrefix) }, []string{manifestMarkerPrefix}},
		{"the format marker", func(name string, _ int64) bool { return strings.HasPrefix(name, formatMarkerPrefix) }, []string{formatMarkerPrefix}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cp := copyDir(t, dir, c.drop)
			before := listSizes(t, cp)
			_, err := Open(Options{Dir: cp})
			if !errors.Is(err, ErrMissingMarkers) {
				t.Fatalf("open: %v, want ErrMissingMarkers", err)
			}
			for _, m := range c.missing {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not name %s", err, m)
				}
			}
			if after := listSizes(t, cp); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("files changed by a refused open:\nbefore %v\nafter  %v", before, after)
			}
			_, hint, ok := strings.Cut(err.Error(), "this recreates what is missing: ")
			if !ok {
				t.Fatalf("error %q gives no way back", err)
			}
			for _, cmd := range strings.Split(hint, " && ") {
				path, ok := strings.CutPrefix(cmd, "touch ")
				if !ok {
					t.Fatalf("hint %q", cmd)
				}
				if err := os.WriteFile(path, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s, err := Open(Options{Dir: cp})
			if err != nil {
				t.Fatalf("open after following the hint: %v", err)
			}
			defer s.Close()
			for _, p := range []string{"a", "b"} {
				if n, err := countPrefix(s, p); err != nil || n != 2000 {
					t.Errorf("keys %s…: %d, %v; want 2000", p, n, err)
				}
			}
		})
	}
	for name, d := range map[string]string{"a new directory": filepath.Join(t.TempDir(), "new"), "an empty directory": t.TempDir()} {
		s, err := Open(Options{Dir: d})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		s.Close()
	}
}

// copyDir copies the files of dir, but those drop says to leave out, into
// a new directory.
func copyDir(t *testing.T, dir string, drop func(name string, size int64) bool) string {
	t.Helper()
	to := t.TempDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if e.IsDir() || drop(e.Name(), info.Size()) {
			continue
		}
		src, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		dst, err := os.Create(filepath.Join(to, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(dst, src); err != nil {
			t.Fatal(err)
		}
		src.Close()
		dst.Close()
	}
	return to
}

// listSizes lists dir's files with their sizes, sorted.
func listSizes(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s:%d", e.Name(), info.Size()))
	}
	sort.Strings(out)
	return out
}

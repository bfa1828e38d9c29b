package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/kv/pebblekv"
)

// `folio check` passes a whole store, names the damaged table of a damaged
// one and fails, and refuses a directory missing its markers.
func TestCheckCommand(t *testing.T) {
	dir := t.TempDir()
	s, err := pebblekv.Open(pebblekv.Options{Dir: dir, MemTableSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for batch := range 20 {
		if _, err := kv.Run(context.Background(), s, func(tx kv.Tx) error {
			for i := range 100 {
				v := make([]byte, 200)
				rand.Read(v)
				if err := tx.Set(fmt.Appendf(nil, "k%02d%03d", batch, i), v); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(tables) == 0 {
		t.Fatal("no tables written")
	}

	var out bytes.Buffer
	if err := execute([]string{"check", "--data-dir", dir}, &out); err != nil {
		t.Fatalf("a whole store: %v\n%s", err, out.String())
	}
	if want := fmt.Sprintf("%d tables", len(tables)); !strings.Contains(out.String(), want) || !strings.Contains(out.String(), " 0 damaged") {
		t.Errorf("report %q, want %q and 0 damaged", out.String(), want)
	}

	f, err := os.OpenFile(tables[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := f.Stat()
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xAB}, 64), info.Size()/3); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out.Reset()
	if err := execute([]string{"check", "--data-dir", dir}, &out); !errors.Is(err, errDamaged) {
		t.Errorf("a damaged store: %v, want errDamaged", err)
	}
	if !strings.Contains(out.String(), "DAMAGED "+tables[0]) || !strings.Contains(out.String(), " 1 damaged") {
		t.Errorf("report %q does not name %s alone", out.String(), tables[0])
	}

	markers, _ := filepath.Glob(filepath.Join(dir, "marker.manifest.*"))
	for _, m := range markers {
		os.Remove(m)
	}
	if err := execute([]string{"check", "--data-dir", dir}, &out); !errors.Is(err, pebblekv.ErrMissingMarkers) {
		t.Errorf("a store without its manifest marker: %v, want ErrMissingMarkers", err)
	}
}

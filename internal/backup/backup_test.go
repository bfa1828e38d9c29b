package backup_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/foliodb/folio/internal/backup"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/kv/kvtest"
	"github.com/foliodb/folio/internal/kv/pebblekv"
)

func openPebble(dir string) (kv.Store, error) { return pebblekv.Open(pebblekv.Options{Dir: dir}) }

// A backup to another filesystem is copied rather than renamed, with
// progress that climbs to the total, and restores to the same contents.
func TestBackupAcrossFilesystems(t *testing.T) {
	ctx := context.Background()
	other, err := os.MkdirTemp("/dev/shm", "folio-backup-test-")
	if err != nil {
		t.Skipf("no /dev/shm to back up to: %v", err)
	}
	defer os.RemoveAll(other)
	dataDir := t.TempDir()
	var a, b syscall.Stat_t
	if syscall.Stat(other, &a) != nil || syscall.Stat(dataDir, &b) != nil || a.Dev == b.Dev {
		t.Skip("/dev/shm is on the temporary directory's filesystem")
	}
	s, err := pebblekv.Open(pebblekv.Options{Dir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	val := make([]byte, 4000)
	for i := range 50 {
		if _, err := kv.Run(ctx, s, func(tx kv.Tx) error {
			for j := range 100 {
				rand.Read(val)
				if err := tx.Set(fmt.Appendf(nil, "k%02d%03d", i, j), val); err != nil {
					return err
				}
			}
			return tx.AppendLog([]byte{byte(i)})
		}); err != nil {
			t.Fatal(err)
		}
	}
	var calls int
	var last, total int64
	progress := func(done, all int64) {
		if done < last || all != total && total != 0 {
			t.Errorf("progress went from %d of %d to %d of %d", last, total, done, all)
		}
		calls++
		last, total = done, all
	}
	m, err := backup.Write(ctx, s, filepath.Join(other, "b"), progress)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("backup of %d bytes in %d files; progress called %d times", m.Bytes(), len(m.Files), calls)
	if last != m.Bytes() || total != m.Bytes() || calls <= len(m.Files) || m.Bytes() < 10<<20 {
		t.Fatalf("progress ended at %d of %d after %d calls, the backup holds %d bytes in %d files", last, total, calls, m.Bytes(), len(m.Files))
	}

	restored := filepath.Join(t.TempDir(), "r")
	calls, last, total = 0, 0, 0
	if _, err := backup.Restore(ctx, filepath.Join(other, "b"), restored, openPebble, progress); err != nil {
		t.Fatal(err)
	}
	if last != m.Bytes() {
		t.Fatalf("restore's progress ended at %d of %d", last, m.Bytes())
	}
	tx, _ := s.Begin(ctx)
	defer tx.Rollback()
	want, err := kvtest.ReadContents(ctx, tx, s, m.Position)
	if err != nil {
		t.Fatal(err)
	}
	r, err := pebblekv.Open(pebblekv.Options{Dir: restored})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rtx, _ := r.Begin(ctx)
	defer rtx.Rollback()
	got, err := kvtest.ReadContents(ctx, rtx, r, m.Position)
	if err != nil {
		t.Fatal(err)
	}
	kvtest.CompareContents(t, want, got)
}

// A second backup while one runs is refused rather than queued.
func TestOneBackupAtATime(t *testing.T) {
	s, err := pebblekv.Open(pebblekv.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	second := make(chan error, 1)
	progress := func(done, total int64) {
		select {
		case second <- func() error {
			_, err := backup.Write(context.Background(), s, filepath.Join(t.TempDir(), "2"), nil)
			return err
		}():
		default:
		}
	}
	if _, err := backup.Write(context.Background(), s, filepath.Join(t.TempDir(), "1"), progress); err != nil {
		t.Fatal(err)
	}
	if err := <-second; !errors.Is(err, backup.ErrRunning) {
		t.Fatalf("a backup during another: %v, want ErrRunning", err)
	}
}

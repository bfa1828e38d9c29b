// Package backup writes and restores copies of the embedded store. A backup
// is a directory holding a Pebble checkpoint (cut while the store serves,
// see kv.Checkpointer) and a manifest, written last, that names the
// position the copy holds and its files: a directory without one is not a
// complete backup. The search indexes are not part of it: they are derived
// from the store, and a server started on a restored directory rebuilds
// them.
package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/foliodb/folio/internal/atomicfile"
	"github.com/foliodb/folio/internal/kv"
)

// ManifestName is the manifest's file name in a backup directory.
const ManifestName = "FOLIO_BACKUP.json"

// stagingName is where a checkpoint is cut, inside the store's directory:
// on its filesystem, so that tables are hard-linked and commits wait for
// milliseconds only. It is moved to the backup's directory afterwards.
const stagingName = "backup-staging"

// Manifest describes a backup.
type Manifest struct {
	// Format is the manifest's version, 1.
	Format int `json:"folio_backup"`
	// Engine is the store's engine, "pebble".
	Engine string `json:"engine"`
	// Position is the change-log position the copy holds: every commit up
	// to it, none after.
	Position  kv.Position `json:"position"`
	CreatedAt time.Time   `json:"created_at"`
	Files     []File      `json:"files"`
}

// File is a file of a backup.
type File struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
}

// Bytes is the size of the backup's files together.
func (m *Manifest) Bytes() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

// Progress is told the bytes copied so far and the bytes to copy in all.
// Files moved by a rename count at once.
type Progress func(done, total int64)

// Errors a caller tells apart.
var (
	// ErrNotEmpty: the target directory exists and holds something.
	ErrNotEmpty = errors.New("directory is not empty")
	// ErrRunning: this process is writing another backup.
	ErrRunning = errors.New("a backup is already running")
	// ErrNotBackup: the directory holds no manifest of a backup.
	ErrNotBackup = errors.New("not a Folio backup")
)

// running lets one backup run at a time: the staging directory is one per
// store, and a second backup would only compete for the disk.
var running sync.Mutex

// Write backs the store up into dir, which must not exist or be empty, and
// returns its manifest. On failure dir is left as it was found.
func Write(ctx context.Context, store kv.Checkpointer, dir string, progress Progress) (*Manifest, error) {
	if !running.TryLock() {
		return nil, ErrRunning
	}
	defer running.Unlock()
	created, err := prepareTarget(dir)
	if err != nil {
		return nil, err
	}
	m, err := write(ctx, store, dir, progress)
	if err != nil {
		cleanTarget(dir, created)
		return nil, err
	}
	return m, nil
}

func write(ctx context.Context, store kv.Checkpointer, dir string, progress Progress) (*Manifest, error) {
	staging := filepath.Join(store.Dir(), stagingName)
	// Left over by a backup that a crash interrupted: only this process
	// (the one holding the store's lock) writes backups of it.
	if err := os.RemoveAll(staging); err != nil {
		return nil, fmt.Errorf("remove an old staging directory: %w", err)
	}
	defer os.RemoveAll(staging)
	pos, err := store.Checkpoint(ctx, staging)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	files, err := listFiles(staging)
	if err != nil {
		return nil, err
	}
	m := &Manifest{Format: 1, Engine: "pebble", Position: pos, CreatedAt: time.Now().UTC(), Files: files}
	if err := moveFiles(ctx, staging, dir, files, progress); err != nil {
		return nil, err
	}
	if err := writeManifest(dir, m); err != nil {
		return nil, err
	}
	return m, nil
}

// ReadManifest reads the manifest of the backup in dir and checks that its
// files are there, whole.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w (no %s: it is not a backup, or one that did not finish)", dir, ErrNotBackup, ManifestName)
	}
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w: its manifest does not decode: %v", dir, ErrNotBackup, err)
	}
	if m.Format != 1 || m.Engine != "pebble" {
		return nil, fmt.Errorf("%s: a backup of format %d of engine %q: this version restores format 1 of pebble", dir, m.Format, m.Engine)
	}
	for _, f := range m.Files {
		fi, err := os.Stat(filepath.Join(dir, f.Name))
		if err != nil {
			return nil, fmt.Errorf("backup %s is incomplete: %w", dir, err)
		}
		if fi.Size() != f.Size {
			return nil, fmt.Errorf("backup %s is damaged: %s has %d bytes, the manifest says %d", dir, f.Name, fi.Size(), f.Size)
		}
	}
	return &m, nil
}

// Opener opens the store in a directory: how Restore checks its copy (the
// caller picks the backend, as the node does).
type Opener func(dir string) (kv.Store, error)

// Restore copies the backup in from into dataDir, which must not exist or
// be empty, and checks that the copy opens as a store at the backup's
// position. On failure dataDir is left as it was found.
func Restore(ctx context.Context, from, dataDir string, open Opener, progress Progress) (*Manifest, error) {
	m, err := ReadManifest(from)
	if err != nil {
		return nil, err
	}
	created, err := prepareTarget(dataDir)
	if err != nil {
		return nil, err
	}
	if err := restore(ctx, m, from, dataDir, open, progress); err != nil {
		cleanTarget(dataDir, created)
		return nil, err
	}
	return m, nil
}

func restore(ctx context.Context, m *Manifest, from, dataDir string, open Opener, progress Progress) error {
	total := m.Bytes()
	var done int64
	for _, f := range m.Files {
		n, err := copyFile(ctx, filepath.Join(from, f.Name), filepath.Join(dataDir, f.Name), func(n int64) { report(progress, done+n, total) })
		if err != nil {
			return err
		}
		done += n
	}
	if err := atomicfile.SyncDir(dataDir); err != nil {
		return err
	}
	s, err := open(dataDir)
	if err != nil {
		return fmt.Errorf("the restored store does not open: %w", err)
	}
	pos, err := s.LastPosition(ctx)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("the restored store: %w", err)
	}
	if pos != m.Position {
		return fmt.Errorf("the restored store opens at position %d, the backup says %d", pos, m.Position)
	}
	return nil
}

// prepareTarget makes dir if it does not exist (reporting that it did) and
// refuses it if it holds anything.
func prepareTarget(dir string) (created bool, err error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return false, err
		}
		return true, nil
	case err != nil:
		return false, err
	case len(entries) > 0:
		return false, fmt.Errorf("%s: %w (it holds %s): give an empty or new directory", dir, ErrNotEmpty, entries[0].Name())
	}
	return false, nil
}

// cleanTarget removes what a failed backup or restore put into dir, and dir
// if it made it: dir was empty before.
func cleanTarget(dir string, created bool) {
	if created {
		os.RemoveAll(dir)
		return
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// listFiles lists a checkpoint's files, in name order.
func listFiles(dir string) ([]File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []File
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("checkpoint %s holds %s, which is not a file", dir, e.Name())
		}
		files = append(files, File{Name: e.Name(), Size: fi.Size()})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files, nil
}

// moveFiles moves files from src to dst: by renaming them when both are on
// one filesystem, by copying them (with progress) otherwise.
func moveFiles(ctx context.Context, src, dst string, files []File, progress Progress) error {
	var total, done int64
	for _, f := range files {
		total += f.Size
	}
	for _, f := range files {
		from, to := filepath.Join(src, f.Name), filepath.Join(dst, f.Name)
		err := os.Rename(from, to)
		if errors.Is(err, syscall.EXDEV) {
			_, err = copyFile(ctx, from, to, func(n int64) { report(progress, done+n, total) })
		}
		if err != nil {
			return err
		}
		done += f.Size
		report(progress, done, total)
	}
	return atomicfile.SyncDir(dst)
}

func report(progress Progress, done, total int64) {
	if progress != nil {
		progress(done, total)
	}
}

// copyFile copies a file and syncs the copy, telling progress the bytes
// copied of it as it goes.
func copyFile(ctx context.Context, from, to string, progress func(int64)) (int64, error) {
	in, err := os.Open(from)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return 0, err
	}
	var n int64
	buf := make([]byte, 1<<20)
	for {
		if err := ctx.Err(); err != nil {
			out.Close()
			return n, err
		}
		r, rerr := in.Read(buf)
		if r > 0 {
			if _, err := out.Write(buf[:r]); err != nil {
				out.Close()
				return n, fmt.Errorf("copy %s: %w", from, err)
			}
			n += int64(r)
			progress(n)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			out.Close()
			return n, fmt.Errorf("copy %s: %w", from, rerr)
		}
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return n, fmt.Errorf("copy %s: %w", from, err)
	}
	return n, out.Close()
}

// writeManifest writes the manifest last, atomically: its presence says
// that the backup is whole.
func writeManifest(dir string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, ManifestName), 0o640, func(f *os.File) error {
		_, err := f.Write(append(b, '\n'))
		return err
	})
}

// Package atomicfile replaces a file whole or not at all, durably: a
// reader, or the next start after a crash, sees the old file or the new
// one, never a part of it.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces the file at path with what write puts into a temporary
// file beside it, with permissions perm: the temporary file is synced,
// renamed over path, and the directory synced so that the rename
// survives a crash. On any error path is left as it was and the
// temporary file is removed.
func Write(path string, perm os.FileMode, write func(f *os.File) error) error {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // gone once renamed
	err = f.Chmod(perm)
	if err == nil {
		err = write(f)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	return SyncDir(dir)
}

// SyncDir makes the renames and creations of files in dir durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

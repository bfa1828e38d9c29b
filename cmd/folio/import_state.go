package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// importState is how far an import of documents got: written after each
// batch the server acknowledged, so that the same command run again
// continues after it. It names the input and the target, so that it is
// never applied to another file or collection.
type importState struct {
	Input    inputIdentity `json:"input"`
	Target   importTarget  `json:"target"`
	Format   string        `json:"format"`
	Offset   int64         `json:"offset"` // the byte the next record starts at
	Line     int           `json:"line"`   // the last line imported
	Imported int64         `json:"imported"`
	Skipped  int64         `json:"skipped"`
}

// inputIdentity tells a file from another: its path, its size and a hash
// of its first KiB.
type inputIdentity struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
	Head string `json:"head_sha256"`
}

type importTarget struct {
	URL        string `json:"url"`
	DB         string `json:"db"`
	Collection string `json:"collection"`
}

func identify(f *os.File) (inputIdentity, error) {
	st, err := f.Stat()
	if err != nil {
		return inputIdentity{}, err
	}
	path, err := filepath.Abs(f.Name())
	if err != nil {
		return inputIdentity{}, err
	}
	head := make([]byte, min(st.Size(), 1024))
	if _, err := f.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return inputIdentity{}, err
	}
	sum := sha256.Sum256(head)
	return inputIdentity{Path: path, Size: st.Size(), Head: hex.EncodeToString(sum[:])}, nil
}

// loadState reads a recorded progress; nil if there is none.
func loadState(path string) (*importState, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st importState
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("the progress file %s is not one: %v (remove it, or --restart)", path, err)
	}
	return &st, nil
}

// save writes the state whole or not at all (a new file renamed over the
// old), so that an import killed while saving keeps the previous one.
func (st *importState) save(path string) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

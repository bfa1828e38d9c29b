package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	write := func(s string) func(f *os.File) error {
		return func(f *os.File) error { _, err := f.WriteString(s); return err }
	}
	if err := Write(path, 0o640, write("one")); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, 0o600, write("two")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "two" {
		t.Fatalf("after two writes: %q, %v; want the second", b, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}

	// A failed write leaves the file as it was, and no temporary file.
	planted := errors.New("planted")
	if err := Write(path, 0o600, func(f *os.File) error {
		f.WriteString("half")
		return planted
	}); !errors.Is(err, planted) {
		t.Fatalf("a failed write: %v, want its error", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "two" {
		t.Errorf("after a failed write: %q, want the file as it was", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the directory holds %v, want only f.json", names)
	}

	if err := Write(filepath.Join(dir, "missing", "f"), 0o600, write("x")); err == nil {
		t.Error("a write into a missing directory: no error")
	}
}

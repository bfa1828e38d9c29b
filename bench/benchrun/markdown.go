package benchrun

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Section is a section of docs/benchmarks.md (which keeps one per piece of
// work, named by the issue that asked for it) and the part of it that a
// benchmark rewrites, each between markers. What is outside the generated
// part is written by hand and kept.
type Section struct {
	Name                         string // for errors: "issue 8"
	Begin, End                   string
	GeneratedBegin, GeneratedEnd string
	// Template is the whole section, markers included, for a file that
	// does not have it yet.
	Template string
}

// Update writes generated into the section of the file at path, creating
// the file or the section if missing, and leaving the rest of the file as
// it was.
func (s Section) Update(path, generated string) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	out, err := s.Replace(old, generated)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, out, 0o644)
}

// Replace returns doc with generated in the section's generated part.
func (s Section) Replace(doc []byte, generated string) ([]byte, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = []byte("# Benchmarks\n\nResults of the project's benchmarks, each with the machine and date it was measured on.\n")
	}
	if !bytes.Contains(doc, []byte(s.Begin)) {
		doc = append(bytes.TrimRight(doc, "\n"), "\n\n"+s.Template...)
	}
	text := string(doc)
	begin, end := strings.Index(text, s.Begin), strings.Index(text, s.End)
	if end < begin {
		return nil, fmt.Errorf("the %s section's end marker is missing or before its beginning", s.Name)
	}
	section := text[begin:end]
	gb, ge := strings.Index(section, s.GeneratedBegin), strings.Index(section, s.GeneratedEnd)
	switch {
	case gb < 0 && ge < 0:
		section += s.GeneratedBegin + "\n" + s.GeneratedEnd + "\n"
		gb, ge = strings.Index(section, s.GeneratedBegin), strings.Index(section, s.GeneratedEnd)
	case gb < 0 || ge < gb:
		return nil, fmt.Errorf("the generated part's markers of the %s section are broken", s.Name)
	}
	section = section[:gb+len(s.GeneratedBegin)] + "\n" + strings.TrimRight(generated, "\n") + "\n" + section[ge:]
	return []byte(text[:begin] + section + text[end:]), nil
}

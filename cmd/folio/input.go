package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"
)

// batchSize is how many documents one insert, replace or publish of a
// command sends (the API takes up to 10,000).
const batchSize = 1000

// documents reads the documents (or messages) a command writes: its
// arguments, each a JSON object; else the file (JSON lines, or JSON
// values one after another, an array standing for its elements); else
// standard input, read the same way. It yields them in batches.
func documents(s *invocation, args []string, file string) iter.Seq2[[]json.RawMessage, error] {
	return func(yield func([]json.RawMessage, error) bool) {
		var src io.Reader
		var name string
		switch {
		case len(args) > 0 && file != "":
			yield(nil, usagef("documents as arguments and --file: choose one"))
			return
		case len(args) > 0:
			src, name = strings.NewReader(strings.Join(args, "\n")), "the arguments"
		case file == "-" || file == "":
			if file == "" && s.stdinT {
				yield(nil, usagef("no documents: give them as arguments, with --file, or as JSON lines on standard input"))
				return
			}
			src, name = s.stdin, "standard input"
		default:
			f, err := os.Open(file)
			if err != nil {
				yield(nil, usageError{err.Error()})
				return
			}
			defer f.Close()
			src, name = f, file
		}
		var batch []json.RawMessage
		for doc, err := range jsonValues(src, name) {
			if err != nil {
				yield(nil, err)
				return
			}
			batch = append(batch, doc)
			if len(batch) == batchSize {
				if !yield(batch, nil) {
					return
				}
				batch = nil
			}
		}
		if len(batch) > 0 {
			yield(batch, nil)
		}
	}
}

// jsonValues reads JSON objects one after another (JSON lines among
// them); an array stands for its elements.
func jsonValues(r io.Reader, name string) iter.Seq2[json.RawMessage, error] {
	return func(yield func(json.RawMessage, error) bool) {
		dec := json.NewDecoder(bufio.NewReader(r))
		dec.UseNumber()
		for n := 1; ; n++ {
			var v json.RawMessage
			err := dec.Decode(&v)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(nil, usagef("%s: document %d is not JSON: %v", name, n, err))
				return
			}
			switch firstByte(v) {
			case '{':
				if !yield(v, nil) {
					return
				}
			case '[':
				var elems []json.RawMessage
				json.Unmarshal(v, &elems)
				for _, e := range elems {
					if firstByte(e) != '{' {
						yield(nil, usagef("%s: an array's element is not a JSON object: %s", name, e))
						return
					}
					if !yield(e, nil) {
						return
					}
				}
			default:
				yield(nil, usagef("%s: document %d is not a JSON object: %s", name, n, v))
				return
			}
		}
	}
}

func firstByte(v json.RawMessage) byte {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return 0
	}
	return v[0]
}

// jsonArg reads an argument that must be a JSON object (a filter, an
// update, a schema).
func jsonArg(what, arg string) (json.RawMessage, error) {
	if !json.Valid([]byte(arg)) || firstByte(json.RawMessage(arg)) != '{' {
		return nil, usagef("the %s is not a JSON object: %s", what, arg)
	}
	return json.RawMessage(arg), nil
}

// schemaArg reads a schema: JSON text if the argument is one, else the
// file it names; "-" or none: standard input.
func schemaArg(s *invocation, args []string) (json.RawMessage, error) {
	var b []byte
	var err error
	switch {
	case len(args) > 0 && strings.HasPrefix(strings.TrimSpace(args[0]), "{"):
		b = []byte(args[0])
	case len(args) > 0 && args[0] != "-":
		b, err = os.ReadFile(args[0])
	default:
		if s.stdinT && len(args) == 0 {
			return nil, usagef("no schema: give it as an argument, a file, or on standard input")
		}
		b, err = io.ReadAll(s.stdin)
	}
	if err != nil {
		return nil, usageError{err.Error()}
	}
	if !json.Valid(b) || firstByte(b) != '{' {
		return nil, usagef("the schema is not a JSON object")
	}
	return b, nil
}

// fieldList splits "a,b,c".
func fieldList(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// sortList reads "-age,name": descending with a minus.
func sortList(s string) []sortField {
	var out []sortField
	for _, f := range fieldList(s) {
		name, desc := strings.CutPrefix(f, "-")
		out = append(out, sortField{name, desc})
	}
	return out
}

type sortField struct {
	name string
	desc bool
}

func (f sortField) String() string { return fmt.Sprintf("%s desc=%v", f.name, f.desc) }

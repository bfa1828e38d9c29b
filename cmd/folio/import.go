package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"os"
	"strings"
)

// importFlags are the flags of `folio import`.
type importFlags struct {
	db, collection, format, primaryKey, state *string
	batchDocs, batchBytes, sample             *int
	inferSchema, dryRun, restart, skipBad     *bool
}

// importCommand is `folio import`. A file whose first line is an export's
// header is an export (import_export.go): its collections are made and
// their items written. Anything else is documents for one collection
// (import_documents.go).
func importCommand(fs *flag.FlagSet) runFunc {
	f := importFlags{
		db:          fs.String("db", "", "the database to import into (an export's: default its own)"),
		collection:  fs.String("collection", "", "the collection documents go into (not for an export)"),
		format:      fs.String("format", "", "jsonl or csv (default: csv for a .csv file, else jsonl)"),
		inferSchema: fs.Bool("infer-schema", false, "infer a schema from the first --sample records, print it, and create the collection with it if missing"),
		sample:      fs.Int("sample", 1000, "how many records --infer-schema reads"),
		primaryKey:  fs.String("primary-key", "", "with --infer-schema, the key field (default: id if present and unique in the sample, else a generated uuid id)"),
		dryRun:      fs.Bool("dry-run", false, "with --infer-schema, print the schema and stop"),
		state:       fs.String("state", "", "the file progress is recorded in, to resume after an interruption (default FILE.folio-import)"),
		restart:     fs.Bool("restart", false, "start from the beginning, ignoring a recorded progress"),
		skipBad:     fs.Bool("skip-bad", false, "skip records that cannot be read and count them, instead of stopping"),
		batchDocs:   fs.Int("batch", 1000, "documents per request, at most the server's max_documents_per_request"),
		batchBytes:  fs.Int("batch-bytes", 1<<20, "bytes of documents per request (a request's writes, index entries included, must fit in one transaction)"),
	}
	return func(s *invocation, a []string) error {
		if *f.batchDocs < 1 || *f.batchBytes < 1 || *f.sample < 1 {
			return usagef("--batch, --batch-bytes and --sample must be at least 1")
		}
		in, err := openInput(s, a[0])
		if err != nil {
			return err
		}
		defer in.Close()
		if h, ok := exportHeaderOf(in.firstLine); ok {
			if *f.collection != "" || *f.inferSchema || *f.format != "" {
				return usagef("%s is a Folio export: --collection, --format and --infer-schema are for documents", in.name)
			}
			return importExport(s, in, h, f)
		}
		if *f.db == "" || *f.collection == "" {
			return usagef("%s is not a Folio export (its first line is not {\"folio_export\":1,...}): to import it as documents, give --db and --collection", in.name)
		}
		if (*f.dryRun || *f.primaryKey != "") && !*f.inferSchema {
			return usagef("--dry-run and --primary-key go with --infer-schema")
		}
		return importDocuments(s, in, f)
	}
}

// importInput is the file (or standard input) being imported, with its
// first line read ahead to tell an export from documents.
type importInput struct {
	name      string
	file      *os.File // nil for standard input, which cannot be resumed
	rd        *bufio.Reader
	firstLine []byte
}

func openInput(s *invocation, name string) (*importInput, error) {
	in := &importInput{name: name}
	var src io.Reader
	if name == "-" {
		if s.stdinT {
			return nil, usagef("standard input is a terminal: give a file, or pipe one in")
		}
		in.name, src = "standard input", s.stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, usageError{err.Error()}
		}
		in.file, src = f, f
	}
	in.rd = bufio.NewReaderSize(src, 1<<20)
	// Peek rather than read, so that a reader of documents starts at the
	// first byte. A first line longer than the buffer is no header.
	head, _ := in.rd.Peek(in.rd.Size())
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		head = head[:i]
	}
	in.firstLine = bytes.TrimRight(head, "\r")
	return in, nil
}

func (in *importInput) Close() error {
	if in.file != nil {
		return in.file.Close()
	}
	return nil
}

// exportHeaderOf returns an export's header if line is one.
func exportHeaderOf(line []byte) (*exportHeader, bool) {
	var h exportHeader
	if json.Unmarshal(line, &h) != nil || h.Version == 0 || h.Database == "" {
		return nil, false
	}
	return &h, h.Version == exportVersion
}

// readLine reads one line, however long, without its newline.
func readLine(rd *bufio.Reader) ([]byte, error) {
	line, err := rd.ReadBytes('\n')
	return bytes.TrimRight(line, "\r\n"), err
}

// formatOf is the input's format: --format, else by the file's name.
func formatOf(f importFlags, name string) (string, error) {
	switch *f.format {
	case "":
		if strings.HasSuffix(strings.ToLower(name), ".csv") {
			return "csv", nil
		}
		return "jsonl", nil
	case "jsonl", "json":
		return "jsonl", nil
	case "csv":
		return "csv", nil
	}
	return "", usagef("--format %s: want jsonl or csv", *f.format)
}

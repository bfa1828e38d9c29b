package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"
)

// importCommand is `folio import`. A file whose first line is an export's
// header is an export (export.go): its collections are made and their
// items written. Anything else is refused for now; plain documents into a
// --collection are to come.
func importCommand(args []string, stdin io.Reader, out io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	db := fs.String("db", "", "the database to import into (default: the export's)")
	batchDocs := fs.Int("batch", 1000, "documents or messages per request, at most the server's max_documents_per_request")
	batchBytes := fs.Int("batch-bytes", 1<<20, "bytes of documents per request (a request's writes, index entries included, must fit in one transaction)")
	connect := rawRemoteFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 || *batchDocs < 1 || *batchBytes < 1 {
		return errors.New("usage: folio import [--db D] FILE|- (folio import -h)")
	}
	in := stdin
	if name := fs.Arg(0); name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	rd := bufio.NewReaderSize(in, 1<<20)
	first, err := readLine(rd)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read %s: %w", fs.Arg(0), err)
	}
	header, ok := exportHeaderOf(first)
	if !ok {
		return fmt.Errorf("%s is not a Folio export: its first line is not an export's header ({\"folio_export\":1,...})", fs.Arg(0))
	}
	r, err := connect(out)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	imp := &importer{r: r, db: header.Database, batchDocs: *batchDocs, batchBytes: *batchBytes}
	if *db != "" {
		imp.db = *db
	}
	if err := imp.run(ctx, rd); err != nil {
		return err
	}
	fmt.Fprintf(out, "imported %d collections, %d documents and %d messages into %s\n", imp.collections, imp.documents, imp.messages, imp.db)
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

// importer writes an export's lines into a database.
type importer struct {
	r                     *rawRemote
	db                    string
	batchDocs, batchBytes int

	coll       string // the collection of the items being read
	isMessages bool   // whether it is a messages collection
	batch      []json.RawMessage
	bytes      int

	collections         int
	documents, messages int64
}

func (imp *importer) run(ctx context.Context, rd *bufio.Reader) error {
	var res map[string]any
	if err := imp.r.callContext(ctx, "POST", dbPath(imp.db)+"/create", nil, &res); err != nil && !hasCode(err, "ALREADY_EXISTS") {
		return fmt.Errorf("create database %s: %w", imp.db, err)
	}
	for n := 2; ; n++ {
		line, err := readLine(rd)
		if len(bytes.TrimSpace(line)) > 0 {
			if end, lerr := imp.line(ctx, line); lerr != nil {
				return fmt.Errorf("line %d: %w", n, lerr)
			} else if end != nil {
				if err := imp.flush(ctx); err != nil {
					return err
				}
				if end.Collections != imp.collections || end.Items != imp.documents+imp.messages {
					return fmt.Errorf("line %d: the export says %d collections and %d items, it held %d and %d", n, end.Collections, end.Items, imp.collections, imp.documents+imp.messages)
				}
				if rest, _ := io.ReadAll(rd); len(bytes.TrimSpace(rest)) > 0 {
					return fmt.Errorf("line %d: more after the export's end line", n+1)
				}
				return nil
			}
		}
		if errors.Is(err, io.EOF) {
			if ferr := imp.flush(ctx); ferr != nil {
				return ferr
			}
			return fmt.Errorf("the export ends at line %d without its end line: it was cut short (what it held is imported)", n)
		}
		if err != nil {
			return err
		}
	}
}

// line takes one line of the export; it returns the end line's counts when
// it is the end.
func (imp *importer) line(ctx context.Context, line []byte) (*exportEnd, error) {
	var l exportLine
	if err := json.Unmarshal(line, &l); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	switch {
	case l.End != nil:
		return l.End, nil
	case l.Collection != "":
		if err := imp.flush(ctx); err != nil {
			return nil, err
		}
		return nil, imp.createCollection(ctx, l.Collection, l.Schema)
	case l.Document != nil || l.Message != nil:
		item, messages := l.Document, false
		if l.Message != nil {
			item, messages = l.Message, true
		}
		if imp.coll == "" {
			return nil, errors.New("an item before any collection line")
		}
		if messages != imp.isMessages {
			return nil, fmt.Errorf("a %s in collection %s, which holds the other kind", map[bool]string{true: "message", false: "document"}[messages], imp.coll)
		}
		imp.batch = append(imp.batch, item)
		imp.bytes += len(item)
		if len(imp.batch) >= imp.batchDocs || imp.bytes >= imp.batchBytes {
			return nil, imp.flush(ctx)
		}
		return nil, nil
	}
	return nil, errors.New("not a line of an export: no collection, document, message or end")
}

func (imp *importer) createCollection(ctx context.Context, coll string, schema json.RawMessage) error {
	if len(schema) == 0 {
		return fmt.Errorf("collection %s has no schema", coll)
	}
	var res map[string]any
	if err := imp.r.callContext(ctx, "POST", collPath(imp.db, coll)+"/createOrUpdate", map[string]any{"schema": schema}, &res); err != nil {
		return fmt.Errorf("create collection %s: %w", coll, err)
	}
	imp.coll, imp.isMessages = coll, isMessages(schema)
	imp.collections++
	return nil
}

// flush writes the items waiting: documents with replace, so that an
// import run again after one that was cut short writes the same documents
// again rather than fail on them; messages with publish. A conflict with
// another writer is retried.
func (imp *importer) flush(ctx context.Context) error {
	if len(imp.batch) == 0 {
		return nil
	}
	method, path, body := "PUT", collPath(imp.db, imp.coll)+"/documents/replace", map[string]any{"documents": imp.batch}
	if imp.isMessages {
		method, path, body = "POST", collPath(imp.db, imp.coll)+"/messages/publish", map[string]any{"messages": imp.batch}
	}
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		var res map[string]any
		if err = imp.r.callContext(ctx, method, path, body, &res); !hasCode(err, "ABORTED") {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 20 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("write %d items into %s: %w", len(imp.batch), imp.coll, err)
	}
	if imp.isMessages {
		imp.messages += int64(len(imp.batch))
	} else {
		imp.documents += int64(len(imp.batch))
	}
	imp.batch, imp.bytes = imp.batch[:0], 0
	return nil
}

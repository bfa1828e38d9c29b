package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/foliodb/folio/client"
)

// importExport writes an export's lines into a database: its collections
// are made, their documents replaced and their messages published.
func importExport(s *invocation, in *importInput, h *exportHeader, f importFlags) error {
	imp := &exportImporter{c: s.c, db: h.Database, batchDocs: *f.batchDocs, batchBytes: *f.batchBytes}
	if *f.db != "" {
		imp.db = *f.db
	}
	if _, err := readLine(in.rd); err != nil { // the header, read ahead already
		return fmt.Errorf("read %s: %w", in.name, err)
	}
	if err := imp.run(s.ctx, in); err != nil {
		return err
	}
	return s.out.message(map[string]any{"db": imp.db, "collections": imp.collections, "documents": imp.documents, "messages": imp.messages},
		fmt.Sprintf("imported %d collections, %d documents and %d messages into %s", imp.collections, imp.documents, imp.messages, imp.db))
}

// exportImporter writes an export's lines into a database.
type exportImporter struct {
	c                     *client.Client
	db                    string
	batchDocs, batchBytes int

	coll       string // the collection of the items being read
	isMessages bool   // whether it is a messages collection
	batch      []json.RawMessage
	bytes      int

	collections         int
	documents, messages int64
}

func (imp *exportImporter) run(ctx context.Context, in *importInput) error {
	if _, err := imp.c.CreateDatabase(ctx, imp.db); err != nil && !client.IsCode(err, client.AlreadyExists) {
		return fmt.Errorf("create database %s: %w", imp.db, err)
	}
	rd := in.rd
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
func (imp *exportImporter) line(ctx context.Context, line []byte) (*exportEnd, error) {
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

func (imp *exportImporter) createCollection(ctx context.Context, coll string, schema json.RawMessage) error {
	if len(schema) == 0 {
		return fmt.Errorf("collection %s has no schema", coll)
	}
	if err := imp.c.Database(imp.db).CreateCollection(ctx, coll, schema); err != nil {
		return fmt.Errorf("create collection %s: %w", coll, err)
	}
	imp.coll, imp.isMessages = coll, isMessages(schema)
	imp.collections++
	return nil
}

// flush writes the items waiting: documents with replace, so that an
// import run again after one that was cut short writes the same documents
// again rather than fail on them; messages with publish.
func (imp *exportImporter) flush(ctx context.Context) error {
	if len(imp.batch) == 0 {
		return nil
	}
	coll := client.Coll[json.RawMessage](imp.c.Database(imp.db), imp.coll)
	err := retryAborted(ctx, func() error {
		if imp.isMessages {
			_, err := coll.Publish(ctx, imp.batch...)
			return err
		}
		_, err := coll.Replace(ctx, pointers(imp.batch)...)
		return err
	})
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

// retryAborted runs write again when it conflicted with another writer
// (ABORTED), a few times.
func retryAborted(ctx context.Context, write func() error) error {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		if err = write(); !client.IsCode(err, client.Aborted) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 20 * time.Millisecond):
		}
	}
	return err
}

// pointers are the addresses of docs' elements, as client's writes take
// them.
func pointers(docs []json.RawMessage) []*json.RawMessage {
	ptrs := make([]*json.RawMessage, len(docs))
	for i := range docs {
		ptrs[i] = &docs[i]
	}
	return ptrs
}

package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/foliodb/folio/client"
)

// afterBatchKey keys a context's func(batches int), called after each
// batch is written and its progress recorded: tests interrupt an import
// with it at a known point.
type afterBatchKey struct{}

// docImport is one import of documents into a collection.
type docImport struct {
	s      *invocation
	f      importFlags
	in     *importInput
	coll   *client.Collection[json.RawMessage]
	format string

	statePath string
	state     importState
	resumed   bool

	reader  recordReader
	pending []record // records read ahead (the schema's sample), to write first

	batch      []json.RawMessage
	batchBytes int
	last       record // the batch's last record
	batches    int
	started    time.Time
	lastShown  time.Time
}

// importDocuments imports JSON lines or CSV into --db and --collection.
func importDocuments(s *invocation, in *importInput, f importFlags) error {
	format, err := formatOf(f, in.name)
	if err != nil {
		return err
	}
	imp := &docImport{s: s, f: f, in: in, format: format,
		coll:  client.Coll[json.RawMessage](s.c.Database(*f.db), *f.collection),
		state: importState{Format: format, Target: importTarget{URL: s.c.URL(), DB: *f.db, Collection: *f.collection}}}
	if err := imp.loadProgress(); err != nil {
		return err
	}
	desc, err := s.c.Database(*f.db).DescribeCollection(s.ctx, *f.collection)
	switch {
	case client.IsCode(err, client.NotFound) && !*f.inferSchema:
		return fmt.Errorf("%w (to make it from the input, pass --infer-schema)", err)
	case err != nil && !client.IsCode(err, client.NotFound):
		return err
	}
	var schema json.RawMessage
	if err == nil && !*f.dryRun {
		schema = desc.Schema
		if *f.inferSchema && !imp.resumed {
			fmt.Fprintf(s.stderr, "collection %s exists: its schema is used, none is inferred\n", *f.collection)
		}
	} else if schema, err = imp.inferSchema(); err != nil || *f.dryRun {
		return err
	}
	if err := imp.position(schema); err != nil {
		return err
	}
	if err := imp.run(); err != nil {
		return err
	}
	if imp.statePath != "" {
		if err := os.Remove(imp.statePath); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	st := imp.state
	return s.out.message(map[string]any{"db": *f.db, "collection": *f.collection, "imported": st.Imported, "skipped": st.Skipped, "batches": imp.batches},
		fmt.Sprintf("imported %d documents into %s.%s in %s, %d skipped", st.Imported, *f.db, *f.collection, plural(imp.batches, "batch", "batches"), st.Skipped))
}

// loadProgress finds the progress of an earlier run of this import, to
// continue after it. Standard input cannot be resumed: it has no
// progress file.
func (imp *docImport) loadProgress() error {
	if imp.in.file == nil {
		if *imp.f.state != "" {
			return usagef("--state: standard input cannot be resumed; import a file")
		}
		return nil
	}
	id, err := identify(imp.in.file)
	if err != nil {
		return err
	}
	imp.state.Input = id
	imp.statePath = *imp.f.state
	if imp.statePath == "" {
		imp.statePath = imp.in.file.Name() + ".folio-import"
	}
	if *imp.f.restart || *imp.f.dryRun {
		return nil
	}
	prev, err := loadState(imp.statePath)
	if err != nil || prev == nil {
		return err
	}
	if prev.Input != imp.state.Input || prev.Target != imp.state.Target || prev.Format != imp.state.Format {
		return usagef("%s records an import of another file or into another collection (%s into %s.%s): --restart to start over, or --state FILE for another", imp.statePath, prev.Input.Path, prev.Target.DB, prev.Target.Collection)
	}
	imp.state, imp.resumed = *prev, true
	fmt.Fprintf(imp.s.stderr, "resuming after line %d (%d documents imported before; --restart to start over)\n", prev.Line, prev.Imported)
	return nil
}

// inferSchema reads a sample of the input from its start, shows the schema
// made from it, and unless --dry-run creates the collection with it. The
// sample's records are kept to be imported first.
func (imp *docImport) inferSchema() (json.RawMessage, error) {
	f := imp.f
	if err := imp.startReader(0, nil); err != nil {
		return nil, err
	}
	var sample []record
	for len(sample) < *f.sample {
		rec, err := imp.nextRecord()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		sample = append(sample, rec)
	}
	if len(sample) == 0 {
		return nil, usagef("%s holds no records to infer a schema from", imp.in.name)
	}
	if cr, ok := imp.reader.(*csvReader); ok {
		cr.types = csvColumnTypes(cr.header, sample)
	}
	docs := make([]json.RawMessage, len(sample))
	for i, rec := range sample {
		doc, err := imp.reader.document(rec)
		if err != nil {
			return nil, err
		}
		docs[i] = doc
	}
	schema, err := inferSchema(*f.collection, docs, *f.primaryKey)
	if err != nil {
		return nil, err
	}
	// A person reads the schema on standard error, beside the import's
	// output; a dry run's schema is its output.
	w, indented := imp.s.stderr, imp.s.out.table
	if *f.dryRun || !indented {
		w = imp.s.out.w
	}
	if err := printSchema(w, schema, indented, len(sample)); err != nil || *f.dryRun {
		return schema, err
	}
	if _, err := imp.s.c.CreateDatabase(imp.s.ctx, *f.db); err != nil && !client.IsCode(err, client.AlreadyExists) {
		return nil, err
	}
	if err := imp.s.c.Database(*f.db).CreateCollection(imp.s.ctx, *f.collection, schema); err != nil {
		return nil, fmt.Errorf("create collection %s with the inferred schema: %w", *f.collection, err)
	}
	imp.pending = sample
	return schema, nil
}

// position makes the reader ready for the import: at the start, at the
// recorded progress, or after the sample already read.
func (imp *docImport) position(schema json.RawMessage) error {
	types := schemaTypes(schema)
	if imp.reader != nil && !imp.resumed {
		if cr, ok := imp.reader.(*csvReader); ok {
			cr.types = types
		}
		return nil
	}
	imp.pending = nil
	return imp.startReader(imp.state.Offset, types)
}

// startReader makes the reader of the input, at byte offset (the start of
// a record) with the lines before it counted.
func (imp *docImport) startReader(offset int64, types map[string]string) error {
	in := imp.in
	if in.file != nil {
		if _, err := in.file.Seek(0, io.SeekStart); err != nil {
			return err
		}
		in.rd.Reset(in.file)
	} else if imp.reader != nil {
		return errors.New("standard input cannot be read twice")
	}
	var header []string
	if imp.format == "csv" {
		r := csv.NewReader(in.rd)
		h, err := r.Read()
		if err != nil {
			return usagef("%s: no CSV header row: %v", in.name, err)
		}
		header = h
		if offset == 0 {
			imp.reader = &csvReader{r: r, header: header, types: types}
			return nil
		}
	}
	lines := 0
	if offset > 0 {
		if _, err := in.file.Seek(0, io.SeekStart); err != nil {
			return err
		}
		in.rd.Reset(in.file)
		var err error
		if lines, err = countLines(in.rd, offset); err != nil {
			return fmt.Errorf("%s: seek to the recorded progress: %w", in.name, err)
		}
	}
	if imp.format == "csv" {
		imp.reader = &csvReader{r: csv.NewReader(in.rd), header: header, types: types, baseLine: lines, base: offset}
	} else {
		imp.reader = &jsonlReader{rd: in.rd, line: lines, offset: offset}
	}
	return nil
}

// countLines reads n bytes and counts the lines they end.
func countLines(rd *bufio.Reader, n int64) (int, error) {
	lines := 0
	for n > 0 {
		b, err := rd.Peek(int(min(n, int64(rd.Size()))))
		if len(b) == 0 && err != nil {
			return 0, err
		}
		lines += bytes.Count(b, []byte{'\n'})
		rd.Discard(len(b))
		n -= int64(len(b))
	}
	return lines, nil
}

// nextRecord is the next record that can be read, bad ones skipped with
// --skip-bad.
func (imp *docImport) nextRecord() (record, error) {
	for {
		rec, err := imp.reader.next()
		var bad badRecord
		if errors.As(err, &bad) && *imp.f.skipBad {
			imp.skip(bad)
			continue
		}
		if errors.As(err, &bad) {
			return record{}, usageError{fmt.Sprintf("%s %v (nothing of its batch is written; --skip-bad skips such lines)", imp.in.name, bad)}
		}
		return rec, err
	}
}

// maxSkipsShown bounds the skipped lines named on standard error.
const maxSkipsShown = 10

func (imp *docImport) skip(bad badRecord) {
	imp.state.Skipped++
	if imp.state.Skipped <= maxSkipsShown {
		fmt.Fprintf(imp.s.stderr, "skipped %v\n", bad)
	}
}

// run writes the records in batches.
func (imp *docImport) run() error {
	imp.started = time.Now()
	imp.lastShown = imp.started // the first progress after a second
	for {
		var rec record
		var err error
		if len(imp.pending) > 0 {
			rec, imp.pending = imp.pending[0], imp.pending[1:]
		} else if rec, err = imp.nextRecord(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return err
		}
		doc, err := imp.reader.document(rec)
		var bad badRecord
		if errors.As(err, &bad) && *imp.f.skipBad {
			imp.skip(bad)
			continue
		} else if err != nil {
			return usageError{fmt.Sprintf("%s %v (nothing of its batch is written; --skip-bad skips such lines)", imp.in.name, err)}
		}
		if len(imp.batch) > 0 && imp.batchBytes+len(doc) > *imp.f.batchBytes {
			if err := imp.flush(); err != nil {
				return err
			}
		}
		imp.batch = append(imp.batch, doc)
		imp.batchBytes += len(doc)
		imp.last = rec
		if len(imp.batch) >= *imp.f.batchDocs {
			if err := imp.flush(); err != nil {
				return err
			}
		}
	}
	err := imp.flush()
	imp.showProgress(true)
	return err
}

// flush writes the batch with replace, so that a batch written again
// after an interruption (its acknowledgement lost) changes nothing with a
// key from the data, and records the progress.
func (imp *docImport) flush() error {
	if len(imp.batch) == 0 {
		return nil
	}
	ctx := imp.s.ctx
	err := retryAborted(ctx, func() error {
		_, err := imp.coll.Replace(ctx, pointers(imp.batch)...)
		return err
	})
	if err != nil {
		imp.showProgress(true)
		next := "the same command continues from there"
		if imp.statePath == "" {
			next = "standard input cannot be resumed"
		}
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: %d documents imported, up to line %d; %s", imp.state.Imported, imp.state.Line, next)
		}
		return fmt.Errorf("write the batch ending at line %d (%d documents imported before it; %s): %w", imp.last.line, imp.state.Imported, next, err)
	}
	imp.state.Imported += int64(len(imp.batch))
	imp.state.Offset, imp.state.Line = imp.last.end, imp.last.line
	imp.batch, imp.batchBytes = imp.batch[:0], 0
	imp.batches++
	if imp.statePath != "" {
		if err := imp.state.save(imp.statePath); err != nil {
			return fmt.Errorf("record the progress: %w", err)
		}
	}
	imp.showProgress(false)
	if after, ok := ctx.Value(afterBatchKey{}).(func(int)); ok {
		after(imp.batches)
	}
	return nil
}

// showProgress shows a person at a terminal how far the import is, once a
// second, on one line that the next overwrites; done clears it.
func (imp *docImport) showProgress(done bool) {
	if !imp.s.terminal {
		return
	}
	if done {
		if imp.lastShown.After(imp.started) {
			fmt.Fprint(imp.s.stderr, "\r\x1b[K")
		}
		return
	}
	if time.Since(imp.lastShown) < time.Second {
		return
	}
	imp.lastShown = time.Now()
	rate := float64(imp.state.Imported) / time.Since(imp.started).Seconds()
	fmt.Fprintf(imp.s.stderr, "\r\x1b[K%d documents, line %d, %.0f/s", imp.state.Imported, imp.state.Line, rate)
}

// plural is n things, in the singular form for 1.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

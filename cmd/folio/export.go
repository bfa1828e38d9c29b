package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/foliodb/folio/client"
)

// Logical export and import: a database, or one collection of it, as JSON
// lines, through the API (the client package, over HTTP or gRPC), so that
// it moves between engines (Pebble, PostgreSQL) and versions.
//
//	folio export --db D [--collection C] [-o FILE]
//	folio import [--db D] FILE|-
//
// The format, one JSON value a line:
//
//	{"folio_export":1,"database":"shop","exported_at":"…","server_version":"…"}
//	{"collection":"users","schema":{…}}           a collection, then its items
//	{"document":{…}}                              a document of the collection above
//	{"message":{…}}                               or a message (messages collections)
//	{"folio_export_end":{"collections":2,"items":1234}}
//
// The last line tells a whole export from a cut one. Items are the bytes
// the server stored, as they came; wrapping them keeps a document whose
// fields are "collection" or "schema" apart from the lines around it.

// exportVersion is the format's version, the header's folio_export.
const exportVersion = 1

// exportHeader is an export's first line.
type exportHeader struct {
	Version       int       `json:"folio_export"`
	Database      string    `json:"database"`
	ExportedAt    time.Time `json:"exported_at"`
	ServerVersion string    `json:"server_version,omitempty"`
}

// exportLine is any line after the header: one of its members is set.
type exportLine struct {
	Collection string          `json:"collection,omitempty"`
	Schema     json.RawMessage `json:"schema,omitempty"`
	Document   json.RawMessage `json:"document,omitempty"`
	Message    json.RawMessage `json:"message,omitempty"`
	End        *exportEnd      `json:"folio_export_end,omitempty"`
}

type exportEnd struct {
	Collections int   `json:"collections"`
	Items       int64 `json:"items"`
}

// exportPage is how many items one read request returns: each read is
// bounded by the server's request timeout, so a collection is read in
// pages, each continuing after the last one's resume token.
var exportPage = 5000

// exportCommand is `folio export`.
func exportCommand(fs *flag.FlagSet) runFunc {
	db := fs.String("db", "", "the database (required)")
	coll := fs.String("collection", "", "only this collection")
	file := fs.String("o", "-", "the file to write (- for standard output)")
	return func(s *invocation, _ []string) error {
		if *db == "" {
			return usagef("--db D is required (folio help export)")
		}
		if *file == "-" {
			bw := bufio.NewWriterSize(s.out.w, 1<<20)
			if err := exportDatabase(s.ctx, s.c, *db, *coll, bw); err != nil {
				return err
			}
			return bw.Flush()
		}
		f, err := os.OpenFile(*file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
		if err != nil {
			return err
		}
		bw := bufio.NewWriterSize(f, 1<<20)
		err = exportDatabase(s.ctx, s.c, *db, *coll, bw)
		if err == nil {
			err = bw.Flush()
		}
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(*file) // a cut export must not pass for a whole one
		}
		return err
	}
}

// exportDatabase writes the export of db (of its collection coll only, if
// given). Every read runs in one transaction (a snapshot, rolled back at
// the end), so the export is one consistent state of the database.
func exportDatabase(ctx context.Context, c *client.Client, db, coll string, w io.Writer) error {
	info, err := c.Info(ctx)
	if err != nil {
		return err
	}
	return c.Database(db).Snapshot(ctx, func(tx *client.Tx) error {
		colls := []string{coll}
		if coll == "" {
			list, err := tx.ListCollections(ctx)
			if err != nil {
				return err
			}
			colls = colls[:0]
			for _, c := range list {
				colls = append(colls, c.Name)
			}
		}
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(exportHeader{Version: exportVersion, Database: db, ExportedAt: time.Now().UTC(), ServerVersion: info.ServerVersion}); err != nil {
			return err
		}
		var items int64
		for _, c := range colls {
			n, err := exportCollection(ctx, tx, c, enc)
			if err != nil {
				return fmt.Errorf("export %s.%s: %w", db, c, err)
			}
			items += n
		}
		return enc.Encode(exportLine{End: &exportEnd{Collections: len(colls), Items: items}})
	})
}

// exportCollection writes a collection's schema line and its items, the
// bytes the server stored.
func exportCollection(ctx context.Context, tx *client.Tx, coll string, enc *json.Encoder) (int64, error) {
	desc, err := tx.DescribeCollection(ctx, coll)
	if err != nil {
		return 0, err
	}
	if err := enc.Encode(exportLine{Collection: coll, Schema: desc.Schema}); err != nil {
		return 0, err
	}
	messages := isMessages(desc.Schema)
	items := client.Coll[json.RawMessage](tx, coll)
	var n int64
	offset := ""
	for {
		opts := []client.Option{client.Limit(int64(exportPage))}
		if offset != "" {
			opts = append(opts, client.After(offset))
		}
		got := 0
		for d, err := range items.ReadDocuments(ctx, client.All(), opts...) {
			if err != nil {
				return n, err
			}
			line := exportLine{Document: d.Data}
			if messages {
				line = exportLine{Message: d.Data}
			}
			got++
			offset = d.ResumeToken
			if err := enc.Encode(line); err != nil {
				return n, err
			}
		}
		n += int64(got)
		if got < exportPage {
			return n, nil
		}
		if offset == "" {
			return n, errors.New("the server gave no resume token to continue the read after a page")
		}
	}
}

// isMessages reports whether a schema is a messages collection's.
func isMessages(schema json.RawMessage) bool {
	var s struct {
		Type string `json:"collection_type"`
	}
	return json.Unmarshal(schema, &s) == nil && s.Type == "messages"
}

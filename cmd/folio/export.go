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
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"time"
)

// Logical export and import: a database, or one collection of it, as JSON
// lines, through the HTTP API, so that it moves between engines (Pebble,
// PostgreSQL) and versions.
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
func exportCommand(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	db := fs.String("db", "", "the database (required)")
	coll := fs.String("collection", "", "only this collection")
	file := fs.String("o", "-", "the file to write (- for standard output)")
	connect := rawRemoteFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *db == "" || fs.NArg() > 0 {
		return errors.New("usage: folio export --db D [--collection C] [-o FILE] (folio export -h)")
	}
	r, err := connect(os.Stderr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	w := out
	if *file != "-" {
		f, err := os.OpenFile(*file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
		if err != nil {
			return err
		}
		bw := bufio.NewWriterSize(f, 1<<20)
		err = exportDatabase(ctx, r, *db, *coll, bw)
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
	bw := bufio.NewWriterSize(w, 1<<20)
	if err := exportDatabase(ctx, r, *db, *coll, bw); err != nil {
		return err
	}
	return bw.Flush()
}

// exportDatabase writes the export of db (of its collection coll only, if
// given). Every read runs in one interactive transaction, so the export is
// one consistent snapshot of the database; the transaction is only read
// in, and rolled back at the end.
func exportDatabase(ctx context.Context, r *rawRemote, db, coll string, w io.Writer) error {
	var info struct {
		ServerVersion string `json:"server_version"`
	}
	if err := r.callContext(ctx, "GET", "/v1/info", nil, &info); err != nil {
		return err
	}
	tx, err := r.begin(ctx, db)
	if err != nil {
		return err
	}
	defer r.rollback(tx, db)
	colls := []string{coll}
	if coll == "" {
		var list struct {
			Collections []struct {
				Name string `json:"collection"`
			} `json:"collections"`
		}
		if err := tx.call(ctx, "POST", dbPath(db)+"/collections/list", nil, &list); err != nil {
			return err
		}
		colls = colls[:0]
		for _, c := range list.Collections {
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
		n, err := exportCollection(ctx, tx, db, c, enc)
		if err != nil {
			return fmt.Errorf("export %s.%s: %w", db, c, err)
		}
		items += n
	}
	return enc.Encode(exportLine{End: &exportEnd{Collections: len(colls), Items: items}})
}

// exportCollection writes a collection's schema line and its items.
func exportCollection(ctx context.Context, tx *txRemote, db, coll string, enc *json.Encoder) (int64, error) {
	var desc struct {
		Schema json.RawMessage `json:"schema"`
	}
	if err := tx.call(ctx, "POST", collPath(db, coll)+"/describe", nil, &desc); err != nil {
		return 0, err
	}
	if err := enc.Encode(exportLine{Collection: coll, Schema: desc.Schema}); err != nil {
		return 0, err
	}
	messages := isMessages(desc.Schema)
	path := collPath(db, coll) + "/documents/read"
	if messages {
		path = collPath(db, coll) + "/messages/read"
	}
	var n int64
	offset := ""
	for {
		body := map[string]any{"filter": map[string]any{}, "options": map[string]any{"limit": exportPage}}
		if offset != "" {
			body["options"].(map[string]any)["offset"] = offset
		}
		got := 0
		err := tx.stream(ctx, path, body, func(res json.RawMessage) error {
			var item struct {
				Data        json.RawMessage `json:"data"`
				ResumeToken string          `json:"resume_token"`
			}
			if err := json.Unmarshal(res, &item); err != nil {
				return err
			}
			line := exportLine{Document: item.Data}
			if messages {
				line = exportLine{Message: item.Data}
			}
			got++
			offset = item.ResumeToken
			return enc.Encode(line)
		})
		if err != nil {
			return n, err
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

func dbPath(db string) string { return "/v1/databases/" + url.PathEscape(db) }

func collPath(db, coll string) string {
	return dbPath(db) + "/collections/" + url.PathEscape(coll)
}

// txRemote is a remote whose calls run in one interactive transaction.
type txRemote struct {
	*rawRemote
	id, origin string
}

func (r *rawRemote) begin(ctx context.Context, db string) (*txRemote, error) {
	var res struct {
		Tx struct {
			ID     string `json:"id"`
			Origin string `json:"origin"`
		} `json:"tx_ctx"`
	}
	if err := r.callContext(ctx, "POST", dbPath(db)+"/transactions/begin", nil, &res); err != nil {
		return nil, fmt.Errorf("begin a transaction on %s: %w", db, err)
	}
	return &txRemote{rawRemote: r, id: res.Tx.ID, origin: res.Tx.Origin}, nil
}

func (r *rawRemote) rollback(tx *txRemote, db string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var res map[string]any
	tx.call(ctx, "POST", dbPath(db)+"/transactions/rollback", nil, &res)
}

func (t *txRemote) request(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var rd io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, t.url+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if t.token != "" {
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	req.Header.Set("Tigris-Tx-Id", t.id)
	req.Header.Set("Tigris-Tx-Origin", t.origin)
	return req, nil
}

// call makes one call in the transaction.
func (t *txRemote) call(ctx context.Context, method, path string, body, out any) error {
	req, err := t.request(ctx, method, path, body)
	if err != nil {
		return err
	}
	return t.do(req, out)
}

// stream makes a read in the transaction and hands each line's result to
// fn; an error line ends it with that error.
func (t *txRemote) stream(ctx context.Context, path string, body any, fn func(json.RawMessage) error) error {
	req, err := t.request(ctx, "POST", path, body)
	if err != nil {
		return err
	}
	res, err := t.hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		var e apiError
		if json.Unmarshal(b, &e) == nil && e.Error.Code != "" {
			return fmt.Errorf("%s: %s", e.Error.Code, e.Error.Message)
		}
		return fmt.Errorf("POST %s: %s", path, res.Status)
	}
	rd := bufio.NewReaderSize(res.Body, 1<<20)
	for {
		line, err := rd.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var l struct {
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if jerr := json.Unmarshal(line, &l); jerr != nil {
				return fmt.Errorf("a line of the read does not decode: %w", jerr)
			}
			if l.Error != nil {
				return fmt.Errorf("%s: %s", l.Error.Code, l.Error.Message)
			}
			if ferr := fn(l.Result); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// FolioOptions configure a FolioDriver.
type FolioOptions struct {
	// URL is the server's base URL, such as http://127.0.0.1:8081, or
	// several, comma-separated: nodes on one PostgreSQL database, which
	// requests go to in turn (a transaction's requests too: the nodes relay
	// them to the one that holds it).
	URL string
	// Database and Collection hold the documents (default bench and
	// usertable, YCSB's table name).
	Database, Collection string
	// Clients is the number of concurrent clients, to size the connection
	// pool: every client keeps its connection.
	Clients int
	// Name names the driver in reports (default "folio").
	Name string
	// HTTPClient is the client that sends the requests: ClientFast (the
	// default) or ClientStd.
	HTTPClient string
}

// FolioDriver runs workloads over the Tigris v1 HTTP API that Folio serves,
// as a client application would: JSON bodies, one request per operation,
// keep-alive connections.
type FolioDriver struct {
	name   string
	dbURL  string // …/v1/databases/{db}
	coll   string
	docURL string // …/collections/{coll}/documents/
	// docURL2023 is docURL on the final API's route:
	// …/v1/projects/{db}/database/collections/{coll}/documents/
	docURL2023 string
	client     transport
	// bases are the servers' base URLs; the URLs above are built on the
	// first, and call sends each request to the next in turn.
	bases []string
	next  atomic.Uint64
}

// NewFolio returns a driver for the server at opts.URL.
func NewFolio(opts FolioOptions) (*FolioDriver, error) {
	if opts.Database == "" {
		opts.Database = "bench"
	}
	if opts.Collection == "" {
		opts.Collection = "usertable"
	}
	if opts.Name == "" {
		opts.Name = "folio"
	}
	var bases []string
	for _, u := range strings.Split(opts.URL, ",") {
		bases = append(bases, strings.TrimRight(strings.TrimSpace(u), "/"))
	}
	client, err := newTransport(opts.HTTPClient, opts.Clients)
	if err != nil {
		return nil, err
	}
	dbURL := bases[0] + "/v1/databases/" + opts.Database
	return &FolioDriver{
		bases:  bases,
		name:   opts.Name,
		dbURL:  dbURL,
		coll:   opts.Collection,
		docURL: dbURL + "/collections/" + opts.Collection + "/documents/",
		docURL2023: bases[0] + "/v1/projects/" + opts.Database + "/database/collections/" +
			opts.Collection + "/documents/",
		client: client,
	}, nil
}

// Name implements Driver.
func (d *FolioDriver) Name() string { return d.name }

// Close implements Driver.
func (d *FolioDriver) Close() error {
	d.client.close()
	return nil
}

// APIError is an error answer of the API.
type APIError struct {
	Status  int
	Code    string
	Message string
}

func (e *APIError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

// txHeaders are the headers that put a request in an interactive
// transaction.
type txHeaders struct{ id, origin string }

// call sends a request and hands the answer's body to check, which must not
// keep it. A non-200 answer is an *APIError; ABORTED wraps ErrAborted too.
func (d *FolioDriver) call(ctx context.Context, method, url string, body []byte, tx *txHeaders, check func([]byte) error) error {
	if len(d.bases) > 1 {
		url = d.bases[d.next.Add(1)%uint64(len(d.bases))] + strings.TrimPrefix(url, d.bases[0])
	}
	return d.client.do(ctx, method, url, body, tx, func(status int, answer []byte) error {
		if status != http.StatusOK {
			return apiError(status, answer)
		}
		if check == nil {
			return nil
		}
		return check(answer)
	})
}

func apiError(code int, body []byte) error {
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	json.Unmarshal(body, &e) // a body that is not the API's error still makes an APIError
	if e.Error.Code == "" {
		e.Error.Message = string(body)
	}
	err := &APIError{Status: code, Code: e.Error.Code, Message: e.Error.Message}
	if e.Error.Code == "ABORTED" {
		return fmt.Errorf("%w: %w", ErrAborted, err)
	}
	return err
}

// countResults returns the number of documents in a read's stream, and the
// error line that ended it, if any.
func countResults(body []byte) (int, error) {
	n := 0
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		switch {
		case bytes.HasPrefix(line, []byte(`{"result":`)):
			n++
		case bytes.HasPrefix(line, []byte(`{"error":`)):
			return n, apiError(http.StatusOK, line)
		case len(bytes.TrimSpace(line)) > 0:
			return n, fmt.Errorf("unexpected line in a read stream: %.200s", line)
		}
	}
	return n, nil
}

// read sends a read and returns the number of documents it streamed.
func (d *FolioDriver) read(ctx context.Context, body []byte, tx *txHeaders) (int, error) {
	var n int
	err := d.call(ctx, http.MethodPost, d.docURL+"read", body, tx, func(b []byte) (err error) {
		n, err = countResults(b)
		return err
	})
	return n, err
}

func idFilter(b []byte, id int64) []byte {
	b = append(b, `{"filter":{"id":`...)
	b = strconv.AppendInt(b, id, 10)
	return append(b, '}')
}

func (d *FolioDriver) readOne(ctx context.Context, id int64, tx *txHeaders) error {
	n, err := d.read(ctx, append(idFilter(nil, id), '}'), tx)
	if err == nil && n != 1 {
		err = fmt.Errorf("read document %d: %d documents, want 1", id, n)
	}
	return err
}

func (d *FolioDriver) update(ctx context.Context, id int64, field, value string, tx *txHeaders) error {
	b := idFilter(make([]byte, 0, 64+len(field)+len(value)), id)
	b = append(b, `,"fields":{"$set":{`...)
	b = strconv.AppendQuote(b, field)
	b = append(b, ':')
	b = strconv.AppendQuote(b, value) // field values are ASCII letters: Go and JSON quote them alike
	b = append(b, "}}}"...)
	return d.call(ctx, http.MethodPut, d.docURL+"update", b, tx, func(body []byte) error {
		var res struct {
			Modified int `json:"modified_count"`
		}
		if err := json.Unmarshal(body, &res); err != nil {
			return fmt.Errorf("update document %d: %w", id, err)
		}
		if res.Modified != 1 {
			return fmt.Errorf("update document %d: modified %d documents, want 1", id, res.Modified)
		}
		return nil
	})
}

// Read implements Driver.
func (d *FolioDriver) Read(ctx context.Context, id int64) error { return d.readOne(ctx, id, nil) }

// Read2023 implements Driver: a read by key over the 2023 route.
func (d *FolioDriver) Read2023(ctx context.Context, id int64) error {
	var n int
	err := d.call(ctx, http.MethodPost, d.docURL2023+"read", append(idFilter(nil, id), '}'), nil, func(b []byte) (err error) {
		n, err = countResults(b)
		return err
	})
	if err == nil && n != 1 {
		err = fmt.Errorf("read document %d over the 2023 route: %d documents, want 1", id, n)
	}
	return err
}

// CountRange implements Driver, with the 2023 API's count.
func (d *FolioDriver) CountRange(ctx context.Context, lo, hi int64) (int64, error) {
	b := append([]byte(`{"filter":{"score":{"$gte":`), strconv.FormatInt(lo, 10)...)
	b = append(b, `,"$lt":`...)
	b = strconv.AppendInt(b, hi, 10)
	b = append(b, "}}}"...)
	var n int64
	err := d.call(ctx, http.MethodPost, d.docURL2023+"count", b, nil, func(body []byte) error {
		var res struct {
			Count int64 `json:"count"`
		}
		if err := json.Unmarshal(body, &res); err != nil {
			return fmt.Errorf("count: %w", err)
		}
		n = res.Count
		return nil
	})
	return n, err
}

// Update implements Driver.
func (d *FolioDriver) Update(ctx context.Context, id int64, field, value string) error {
	return d.update(ctx, id, field, value, nil)
}

// Insert implements Driver.
func (d *FolioDriver) Insert(ctx context.Context, doc Document) error {
	return d.InsertBatch(ctx, []Document{doc})
}

// InsertBatch implements Driver.
func (d *FolioDriver) InsertBatch(ctx context.Context, docs []Document) error {
	size := 16
	for _, doc := range docs {
		size += len(doc.JSON) + 1
	}
	b := make([]byte, 0, size)
	b = append(b, `{"documents":[`...)
	for i, doc := range docs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, doc.JSON...)
	}
	b = append(b, "]}"...)
	return d.call(ctx, http.MethodPost, d.docURL+"insert", b, nil, nil)
}

// Scan implements Driver.
func (d *FolioDriver) Scan(ctx context.Context, id int64, limit int) (int, error) {
	b := append([]byte(`{"filter":{"id":{"$gte":`), strconv.FormatInt(id, 10)...)
	b = append(b, `}},"options":{"limit":`...)
	b = strconv.AppendInt(b, int64(limit), 10)
	b = append(b, "}}"...)
	n, err := d.read(ctx, b, nil)
	if err == nil && n > limit {
		err = fmt.Errorf("scan of %d from %d: %d documents", limit, id, n)
	}
	return n, err
}

// FindEqual implements Driver.
func (d *FolioDriver) FindEqual(ctx context.Context, email string) (int, error) {
	b := append([]byte(`{"filter":{"email":`), strconv.Quote(email)...)
	return d.read(ctx, append(b, "}}"...), nil)
}

// FindRange implements Driver.
func (d *FolioDriver) FindRange(ctx context.Context, lo, hi int64) (int, error) {
	b := append([]byte(`{"filter":{"score":{"$gte":`), strconv.FormatInt(lo, 10)...)
	b = append(b, `,"$lt":`...)
	b = strconv.AppendInt(b, hi, 10)
	return d.read(ctx, append(b, "}}}"...), nil)
}

// FindGroup implements Driver.
func (d *FolioDriver) FindGroup(ctx context.Context, group string, limit int) (int, error) {
	b := append([]byte(`{"filter":{"group":`), strconv.Quote(group)...)
	b = append(b, `},"options":{"limit":`...)
	b = strconv.AppendInt(b, int64(limit), 10)
	return d.read(ctx, append(b, "}}"...), nil)
}

// FindRangeLimit implements Driver.
func (d *FolioDriver) FindRangeLimit(ctx context.Context, lo, hi int64, limit int) (int, error) {
	b := append([]byte(`{"filter":{"score":{"$gte":`), strconv.FormatInt(lo, 10)...)
	b = append(b, `,"$lt":`...)
	b = strconv.AppendInt(b, hi, 10)
	b = append(b, `}},"options":{"limit":`...)
	b = strconv.AppendInt(b, int64(limit), 10)
	return d.read(ctx, append(b, "}}"...), nil)
}

// Setup implements Driver: it drops the collection (not the database) and
// creates it again.
// Each step is retried while aborted: on PostgreSQL dropping a loaded
// collection can meet the background folding of its counters.
func (d *FolioDriver) Setup(ctx context.Context) error {
	collURL := d.dbURL + "/collections/" + d.coll
	var apiErr *APIError
	if err := d.retryAborted(ctx, http.MethodDelete, collURL+"/drop", nil); err != nil && !(errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound) {
		return fmt.Errorf("drop collection %s: %w", d.coll, err)
	}
	if err := d.retryAborted(ctx, http.MethodPost, d.dbURL+"/create", nil); err != nil && !(errors.As(err, &apiErr) && apiErr.Status == http.StatusConflict) {
		return fmt.Errorf("create database: %w", err)
	}
	if err := d.retryAborted(ctx, http.MethodPost, collURL+"/createOrUpdate", Schema(d.coll)); err != nil {
		return fmt.Errorf("create collection %s: %w", d.coll, err)
	}
	return nil
}

// retryAborted makes a call, again while it is aborted (see
// retryWhileAborted).
func (d *FolioDriver) retryAborted(ctx context.Context, method, url string, body []byte) error {
	return retryWhileAborted(ctx, func() error { return d.call(ctx, method, url, body, nil, nil) },
		func(err error) bool { return errors.Is(err, ErrAborted) })
}

// retryWhileAborted makes a call, again while aborted says its error is
// an abort (up to 10 times, backing off from 10 ms): the set-up calls of
// both Folio drivers, which meet the schema changes of other runs.
func retryWhileAborted(ctx context.Context, call func() error, aborted func(error) bool) error {
	wait := 10 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := call()
		if !aborted(err) || attempt == 10 {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// FinishLoad implements Driver; Folio needs nothing once the data is in.
func (d *FolioDriver) FinishLoad(ctx context.Context) error { return nil }

// trimChunk bounds the documents one delete request removes, to stay far
// below the API's limit on what a transaction writes.
const trimChunk = 2_000

// Trim implements Driver. It finds the largest id, then deletes from
// upwards in chunks.
func (d *FolioDriver) Trim(ctx context.Context, from int64) error {
	body := fmt.Appendf(nil, `{"filter":{"id":{"$gte":%d}},"fields":{"id":1}}`, from)
	last := int64(-1)
	err := d.call(ctx, http.MethodPost, d.docURL+"read", body, nil, func(b []byte) error {
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			return nil
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
		var line struct {
			Result struct {
				Data struct {
					ID int64 `json:"id"`
				} `json:"data"`
			} `json:"result"`
		}
		if err := json.Unmarshal(b, &line); err != nil {
			return fmt.Errorf("the last document of %s: %w", b, err)
		}
		last = line.Result.Data.ID
		return nil
	})
	if err != nil {
		return fmt.Errorf("find documents to trim: %w", err)
	}
	for lo := from; lo <= last; lo += trimChunk {
		body := fmt.Appendf(nil, `{"filter":{"id":{"$gte":%d,"$lt":%d}}}`, lo, lo+trimChunk)
		if err := d.call(ctx, http.MethodDelete, d.docURL+"delete", body, nil, nil); err != nil {
			return fmt.Errorf("delete documents %d to %d: %w", lo, lo+trimChunk-1, err)
		}
	}
	return nil
}

// Begin implements Driver.
func (d *FolioDriver) Begin(ctx context.Context) (Tx, error) {
	tx := &folioTx{d: d}
	err := d.call(ctx, http.MethodPost, d.dbURL+"/transactions/begin", nil, nil, func(b []byte) error {
		var res struct {
			TxCtx struct {
				ID     string `json:"id"`
				Origin string `json:"origin"`
			} `json:"tx_ctx"`
		}
		if err := json.Unmarshal(b, &res); err != nil {
			return err
		}
		tx.h = txHeaders{id: res.TxCtx.ID, origin: res.TxCtx.Origin}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	return tx, nil
}

type folioTx struct {
	d *FolioDriver
	h txHeaders
}

func (t *folioTx) Read(ctx context.Context, id int64) error { return t.d.readOne(ctx, id, &t.h) }

func (t *folioTx) Update(ctx context.Context, id int64, field, value string) error {
	return t.d.update(ctx, id, field, value, &t.h)
}

func (t *folioTx) Commit(ctx context.Context) error {
	if err := t.d.call(ctx, http.MethodPost, t.d.dbURL+"/transactions/commit", nil, &t.h, nil); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

func (t *folioTx) Rollback(ctx context.Context) error {
	return t.d.call(ctx, http.MethodPost, t.d.dbURL+"/transactions/rollback", nil, &t.h, nil)
}

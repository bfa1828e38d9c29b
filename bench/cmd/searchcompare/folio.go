package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// folioEngine searches a Folio server through its HTTP API, as a client
// would: one collection "docs" in a database of the corpus's own.
type folioEngine struct {
	label string
	base  string // the server's URL
	coll  string // the collection's path
	hc    *http.Client
	// inserted is when the last load's inserts were all acknowledged.
	inserted time.Time
}

const folioSchema = `{"title":"docs","properties":{"id":{"type":"integer"},"title":{"type":"string"},"body":{"type":"string"},` +
	`"tag":{"type":"string"},"source":{"type":"string"},"rank":{"type":"integer"},"size":{"type":"number"}},"primary_key":["id"]}`

func newFolio(ctx context.Context, label, base, db string) (*folioEngine, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	f := &folioEngine{label: label, base: base, coll: "/v1/databases/" + db + "/collections/docs", hc: &http.Client{Transport: tr, Timeout: 5 * time.Minute}}
	for _, call := range []struct{ path, body string }{
		{"/v1/databases/" + db + "/create", ""},
		{f.coll + "/createOrUpdate", `{"schema":` + folioSchema + `}`},
	} {
		if _, err := f.post(ctx, call.path, []byte(call.body)); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func (f *folioEngine) name() string { return f.label }
func (f *folioEngine) close()       { f.hc.CloseIdleConnections() }

func (f *folioEngine) post(ctx context.Context, path string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s %s", path, resp.Status, bytes.TrimSpace(out))
	}
	return out, nil
}

func (f *folioEngine) load(ctx context.Context, docs []doc, batch, clients int) error {
	err := inBatches(ctx, docs, batch, clients, func(part []doc) error {
		b, err := json.Marshal(map[string]any{"documents": part})
		if err != nil {
			return err
		}
		_, err = f.post(ctx, f.coll+"/documents/insert", b)
		return err
	})
	if err != nil {
		return err
	}
	f.inserted = time.Now()
	// A search waits until the index holds every acknowledged write (up to
	// the server's --search-wait, then 503: asked again): its answer is
	// when the last document became searchable.
	var res outcome
	for {
		res, err = f.search(ctx, query{kind: "all"})
		if err == nil || !strings.Contains(err.Error(), "503 Service Unavailable") {
			break
		}
	}
	if err != nil {
		return err
	}
	if res.found != int64(len(docs)) {
		return fmt.Errorf("%s: after the load, a search finds %d documents, not %d", f.label, res.found, len(docs))
	}
	return nil
}

func (f *folioEngine) insert(ctx context.Context, d doc) error {
	b, err := json.Marshal(map[string]any{"documents": []doc{d}})
	if err != nil {
		return err
	}
	// A write that lost a conflict answers 409 ABORTED with a retry
	// delay; a client tries it again, as the official ones do.
	for attempt := 0; ; attempt++ {
		_, err = f.post(ctx, f.coll+"/documents/insert", b)
		if err == nil || attempt == 50 || !strings.Contains(err.Error(), "409 Conflict") {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// folioRequest is the search body of q.
func folioRequest(q query) ([]byte, error) {
	req := map[string]any{"page": q.offset/pageSize + 1, "page_size": pageSize}
	if len(q.words) > 0 {
		req["q"] = q.text()
		req["search_fields"] = []string{"title", "body"}
	}
	var filter []map[string]any
	if q.tag != "" {
		filter = append(filter, map[string]any{"tag": q.tag})
	}
	if q.sizeHi > q.sizeLo {
		filter = append(filter, map[string]any{"size": map[string]any{"$gte": q.sizeLo, "$lt": q.sizeHi}})
	}
	switch len(filter) {
	case 1:
		req["filter"] = filter[0]
	case 2:
		req["filter"] = map[string]any{"$and": filter}
	}
	if q.facets {
		req["facet"] = map[string]any{"tag": map[string]int{"size": facetSize}, "source": map[string]int{"size": facetSize}, "rank": map[string]int{"size": facetSize}}
	}
	if q.bySize {
		req["sort"] = []map[string]string{{"size": "$desc"}}
	}
	if q.offset%pageSize != 0 {
		return nil, fmt.Errorf("offset %d is not a multiple of the page size", q.offset)
	}
	return json.Marshal(req)
}

type folioFacet struct {
	Counts []struct {
		Count int64  `json:"count"`
		Value string `json:"value"`
	} `json:"counts"`
	Stats struct {
		Count int64    `json:"count"`
		Sum   *float64 `json:"sum"`
	} `json:"stats"`
}

func (f *folioEngine) search(ctx context.Context, q query) (outcome, error) {
	body, err := folioRequest(q)
	if err != nil {
		return outcome{}, err
	}
	out, err := f.post(ctx, f.coll+"/documents/search", body)
	if err != nil {
		return outcome{}, err
	}
	return parseFolioPage(out)
}

// parseFolioPage reads the one page a search with "page" answers. The
// documents are left as they came (a client would hand them on), but for
// the first one's id.
func parseFolioPage(out []byte) (outcome, error) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	if !sc.Scan() {
		return outcome{}, fmt.Errorf("search: empty answer")
	}
	var page struct {
		Result *struct {
			Hits []struct {
				Data json.RawMessage `json:"data"`
			} `json:"hits"`
			Facets map[string]folioFacet `json:"facets"`
			Meta   struct {
				Found int64 `json:"found"`
			} `json:"meta"`
		} `json:"result"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(sc.Bytes(), &page); err != nil {
		return outcome{}, fmt.Errorf("search answer: %w", err)
	}
	if page.Result == nil {
		return outcome{}, fmt.Errorf("search: %s", strings.TrimSpace(sc.Text()))
	}
	r := page.Result
	o := outcome{found: r.Meta.Found, hits: len(r.Hits)}
	if len(r.Hits) > 0 {
		id, err := idOf(r.Hits[0].Data)
		if err != nil {
			return outcome{}, err
		}
		o.firstID = id
	}
	if len(r.Facets) > 0 {
		top := func(name string) (string, int64) {
			if c := r.Facets[name].Counts; len(c) > 0 {
				return c[0].Value, c[0].Count
			}
			return "", 0
		}
		tag, tagN := top("tag")
		src, srcN := top("source")
		rank := r.Facets["rank"].Stats
		sum := 0.0
		if rank.Sum != nil {
			sum = *rank.Sum
		}
		o.facets = facetDigest(tag, tagN, src, srcN, rank.Count, sum)
	}
	return o, nil
}

// idOf is the id of a hit's document.
func idOf(data []byte) (int64, error) {
	var doc struct {
		ID int64 `json:"id"`
	}
	err := json.Unmarshal(data, &doc)
	return doc.ID, err
}

// inBatches calls store with the documents cut into batches, from
// clients goroutines at once, and returns the first error.
func inBatches(ctx context.Context, docs []doc, batch, clients int, store func([]doc) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	parts := make(chan []doc)
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range parts {
				if err := store(p); err != nil {
					errs <- err
					cancel()
					return
				}
			}
		}()
	}
	for _, p := range batches(docs, batch, maxBatchBytes) {
		select {
		case parts <- p:
		case <-ctx.Done():
		}
	}
	close(parts)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return ctx.Err()
}

// maxBatchBytes bounds a batch's text, so that a batch of long mails fits
// in one request and one transaction everywhere: Folio's transaction
// holds each document about three times (the document, its log record,
// its index entries) within its 10 MiB.
const maxBatchBytes = 1 << 20

// batches cuts docs into runs of at most n documents and about maxBytes
// of text (a single larger document makes a batch of its own).
func batches(docs []doc, n, maxBytes int) [][]doc {
	var out [][]doc
	start, size := 0, 0
	for i, d := range docs {
		s := len(d.Title) + len(d.Body) + 64
		if i > start && (i-start >= n || size+s > maxBytes) {
			out = append(out, docs[start:i])
			start, size = i, 0
		}
		size += s
	}
	if start < len(docs) {
		out = append(out, docs[start:])
	}
	return out
}

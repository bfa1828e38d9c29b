package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/foliodb/folio/bench/benchrun"
)

// The floor is what any search over HTTP costs this client on this
// machine, whatever the server does: a trivial server, in a process of
// its own as Folio is, answers each search with the bytes Folio (Pebble)
// answered it with, recorded before; the client sends the same request
// and reads the answer as it reads Folio's. Folio's latency less the
// floor's is Folio's own work; the floor above SQLite's latency (SQLite
// answers in the benchmark's own process) is a cost no HTTP server can
// go below.

// floorEngine searches the floor server.
type floorEngine struct {
	client *folioEngine // the client, pointed at the floor server
	from   *folioEngine // the server whose answers it records
	mu     sync.Mutex
	have   map[string]bool // requests recorded
}

// floorRecord is what /record takes: a request's body and the answer to
// give it.
type floorRecord struct {
	Request  []byte `json:"request"`
	Response []byte `json:"response"`
}

func newFloor(base string, from *folioEngine) *floorEngine {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	return &floorEngine{
		client: &folioEngine{label: floorName, base: base, coll: from.coll, hc: &http.Client{Transport: tr, Timeout: time.Minute}},
		from:   from,
		have:   map[string]bool{},
	}
}

func (f *floorEngine) name() string { return f.client.label }
func (f *floorEngine) close()       { f.client.close() }

// load stores nothing: the floor answers from Folio's answers.
func (f *floorEngine) load(context.Context, []doc, int, int) error { return nil }

func (f *floorEngine) insert(context.Context, doc) error {
	return errors.New("the floor stores nothing")
}

func (f *floorEngine) search(ctx context.Context, q query) (outcome, error) {
	body, err := folioRequest(q)
	if err != nil {
		return outcome{}, err
	}
	if err := f.record(ctx, body); err != nil {
		return outcome{}, err
	}
	out, err := f.client.post(ctx, f.client.coll+"/documents/search", body)
	if err != nil {
		return outcome{}, err
	}
	return parseFolioPage(out)
}

// record asks Folio for the answer to body, once, and gives it to the
// floor server.
func (f *floorEngine) record(ctx context.Context, body []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.have[string(body)] {
		return nil
	}
	answer, err := f.from.post(ctx, f.from.coll+"/documents/search", body)
	if err != nil {
		return err
	}
	rec, err := json.Marshal(floorRecord{Request: body, Response: answer})
	if err != nil {
		return err
	}
	if _, err := f.client.post(ctx, "/record", rec); err != nil {
		return err
	}
	f.have[string(body)] = true
	return nil
}

// startFloor runs this program again as the floor server.
func startFloor(ctx context.Context) (*benchrun.Process, error) {
	return benchrun.StartSelf(ctx, "-serve-floor")
}

// floorHandler is the floor server: /v1/health, /record, and every
// other POST answered with what was recorded for its body, in one write
// as Folio writes a page.
func floorHandler() http.Handler {
	var mu sync.RWMutex
	answers := map[string][]byte{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"response":"OK"}`)
	})
	mux.HandleFunc("POST /record", func(w http.ResponseWriter, r *http.Request) {
		var rec floorRecord
		if err := json.NewDecoder(r.Body).Decode(&rec); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		answers[string(rec.Request)] = rec.Response
		mu.Unlock()
	})
	mux.HandleFunc("POST /", func(w http.ResponseWriter, r *http.Request) {
		var body bytes.Buffer
		if _, err := body.ReadFrom(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.RLock()
		answer, ok := answers[body.String()]
		mu.RUnlock()
		if !ok {
			http.Error(w, fmt.Sprintf("no answer recorded for %s", body.Bytes()), http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	})
	return mux
}

func serveFloor(addr string) error {
	srv := &http.Server{Addr: addr, Handler: floorHandler(), ReadHeaderTimeout: 10 * time.Second}
	return srv.ListenAndServe()
}

package httpapi

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/apierror"
)

// A read's stream does not flush at its end: net/http then writes the rest
// and the end of the chunked body in one write. It stays chunked.
func TestBatchedStreamEndsWithoutFlush(t *testing.T) {
	rec := httptest.NewRecorder()
	s := newBatchedStream(rec, func(err error) *apierror.Error { return &apierror.Error{Code: apierror.Internal, Message: err.Error()} })
	for _, item := range []string{`{"a":1}`, `{"b":2}`} {
		if err := s.send([]byte(item)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.finish(nil); err != nil {
		t.Fatal(err)
	}
	if rec.Flushed {
		t.Error("a short batched stream was flushed: its response takes two writes")
	}
	if te := rec.Header().Get("Transfer-Encoding"); te != "chunked" {
		t.Errorf("Transfer-Encoding %q, want chunked", te)
	}
	if got, want := rec.Body.String(), "{\"result\":{\"a\":1}}\n{\"result\":{\"b\":2}}\n"; got != want {
		t.Errorf("body %q, want %q", got, want)
	}
}

// decode reads bodies into pooled buffers: what it decoded must not change
// when the buffer serves the next request.
func TestDecodeKeepsNothingOfThePooledBody(t *testing.T) {
	var first struct {
		Filter json.RawMessage `json:"filter"`
	}
	r := httptest.NewRequest("POST", "/", strings.NewReader(`{"filter":{"a":1}}`))
	if err := decode(r, &first, nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		var next struct {
			Filter json.RawMessage `json:"filter"`
		}
		r := httptest.NewRequest("POST", "/", strings.NewReader(`{"filter":{"zz":"overwritten"}}`))
		if err := decode(r, &next, nil); err != nil {
			t.Fatal(err)
		}
	}
	if string(first.Filter) != `{"a":1}` {
		t.Errorf("the first body's filter became %s", first.Filter)
	}
}

// A search of one page is written in one write; the pages of a search of
// all of them are flushed as they come.
func TestSearchStreamFlushesOnlyEveryPage(t *testing.T) {
	public := func(err error) *apierror.Error { return &apierror.Error{Code: apierror.Internal, Message: err.Error()} }
	for _, onePage := range []bool{true, false} {
		rec := httptest.NewRecorder()
		s := searchStream(rec, public, onePage)
		if err := s.send([]byte(`{"hits":[]}`)); err != nil {
			t.Fatal(err)
		}
		if err := s.finish(nil); err != nil {
			t.Fatal(err)
		}
		if rec.Flushed == onePage {
			t.Errorf("one page %v: flushed %v", onePage, rec.Flushed)
		}
	}
}

// countingWriter counts the writes and flushes a stream makes.
type countingWriter struct {
	*httptest.ResponseRecorder
	writes, flushes int
}

func (c *countingWriter) Write(b []byte) (int, error) {
	c.writes++
	return c.ResponseRecorder.Write(b)
}

func (c *countingWriter) Flush() {
	c.flushes++
	c.ResponseRecorder.Flush()
}

// A batched stream writes its items batchBytes at a time, each batch in
// one write and flushed, and the rest in one write at the end; an error
// goes out after the items gathered before it. A stream that is not
// batched (events, subscribe) writes and flushes each item as it comes.
func TestStreamWrites(t *testing.T) {
	public := func(err error) *apierror.Error { return &apierror.Error{Code: apierror.Internal, Message: err.Error()} }
	item := `{"text":"` + strings.Repeat("x", 1000) + `"}`
	line := `{"result":` + item + "}\n"
	for _, c := range []struct {
		name            string
		batched         bool
		items           int
		fail            bool
		writes, flushes int
		endsWithError   bool
	}{
		// 33 lines of 1,012 bytes pass batchBytes (32 KiB): three full
		// batches, and the last line at the end.
		{name: "batched", batched: true, items: 100, writes: 4, flushes: 3},
		{name: "batched, short", batched: true, items: 3, writes: 1, flushes: 0},
		{name: "batched, failing", batched: true, items: 40, fail: true, writes: 2, flushes: 2, endsWithError: true},
		{name: "not batched", items: 5, writes: 5, flushes: 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := &countingWriter{ResponseRecorder: httptest.NewRecorder()}
			s := newStream(w, public)
			if c.batched {
				s = newBatchedStream(w, public)
			}
			for range c.items {
				if err := s.send([]byte(item)); err != nil {
					t.Fatal(err)
				}
			}
			var failure error
			if c.fail {
				failure = errors.New("the scan failed")
			}
			if err := s.finish(failure); err != nil {
				t.Fatal(err)
			}
			if w.writes != c.writes || w.flushes != c.flushes {
				t.Errorf("%d writes and %d flushes, want %d and %d", w.writes, w.flushes, c.writes, c.flushes)
			}
			want := strings.Repeat(line, c.items)
			body := w.Body.String()
			if c.endsWithError {
				if !strings.HasPrefix(body, want) || !strings.HasSuffix(body, "\"the scan failed\"}}\n") {
					t.Errorf("body does not hold the %d items then the error: ...%q", c.items, body[max(0, len(body)-120):])
				}
			} else if body != want {
				t.Errorf("body of %d bytes, want the %d items' %d", len(body), c.items, len(want))
			}
		})
	}
}

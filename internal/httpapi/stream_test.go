package httpapi

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/status"
)

// A read's stream does not flush at its end: net/http then writes the rest
// and the end of the chunked body in one write. It stays chunked.
func TestBatchedStreamEndsWithoutFlush(t *testing.T) {
	rec := httptest.NewRecorder()
	s := newBatchedStream(rec, func(err error) *status.Error { return &status.Error{Code: status.Internal, Message: err.Error()} })
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
	if err := decode(r, &first); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		var next struct {
			Filter json.RawMessage `json:"filter"`
		}
		r := httptest.NewRequest("POST", "/", strings.NewReader(`{"filter":{"zz":"overwritten"}}`))
		if err := decode(r, &next); err != nil {
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
	public := func(err error) *status.Error { return &status.Error{Code: status.Internal, Message: err.Error()} }
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

package httpapi

import (
	"encoding/json"
	"net/http"
	"sync"

	"github.com/foliodb/folio/internal/apierror"
)

// stream writes a streamed response as the original did: one
// {"result":...} object per line, each flushed as it is written, and an
// {"error":...} line if something fails after the first one. An error before
// anything was sent is an ordinary error response; a stream with no item is
// a 200 with an empty body.
type stream struct {
	w http.ResponseWriter
	// public turns an error into what the client may see (see
	// Server.public).
	public  func(error) *apierror.Error
	flusher http.Flusher
	started bool
	// buf holds the lines not yet written; from lineBuffers, back there
	// at finish.
	buf *[]byte
	// batch: the items come as fast as they can be written (a read), so
	// they are gathered and written batchBytes at a time, and at the end,
	// rather than one by one.
	batch bool
}

// batchBytes is how much a batched stream gathers before it writes and
// flushes. Written item by item, a scan of 100 documents of 1 KB went
// out in a write(2) every 4 KB (net/http's buffer), and those writes were
// a third of the server's CPU under short scans.
const batchBytes = 32 << 10

// maxPooledLine: a buffer grown past this by one large item is left to
// the garbage collector rather than kept. A search's page is one item: 20
// mails of up to 64 KiB each still fit.
const maxPooledLine = 2 << 20

func newStream(w http.ResponseWriter, public func(error) *apierror.Error) *stream {
	f, _ := w.(http.Flusher)
	return &stream{w: w, flusher: f, public: public}
}

// newBatchedStream is a stream for items that are all at hand: a read.
func newBatchedStream(w http.ResponseWriter, public func(error) *apierror.Error) *stream {
	s := newStream(w, public)
	s.batch = true
	return s
}

func (s *stream) start() {
	if !s.started {
		s.started = true
		s.w.Header().Set("Content-Type", "application/json")
		// Chunked as the original's streams, even one that ends before
		// anything was flushed: net/http would send that one with a
		// Content-Length instead.
		s.w.Header().Set("Transfer-Encoding", "chunked")
		s.w.WriteHeader(http.StatusOK)
	}
}

// send writes one item, given as its JSON.
func (s *stream) send(item []byte) error {
	return s.sendAppend(func(b []byte) []byte { return append(b, item...) })
}

// lineBuffers keep the buffers streams render their lines in from one
// request to the next: a read's line is the size of its document.
var lineBuffers = sync.Pool{New: func() any { return new([]byte) }}

// sendAppend writes one item, which appendItem appends as JSON to the
// buffer it is given.
func (s *stream) sendAppend(appendItem func([]byte) []byte) error {
	s.start()
	if s.buf == nil {
		s.buf = lineBuffers.Get().(*[]byte)
		*s.buf = (*s.buf)[:0]
	}
	b := append(*s.buf, `{"result":`...)
	b = appendItem(b)
	b = append(b, "}\n"...)
	*s.buf = b
	if s.batch && len(b) < batchBytes {
		return nil // written with the next ones
	}
	return s.writeOut(true)
}

// writeOut writes the lines gathered, in one write, and flushes them if
// flush is set. An error means the client went away; the caller stops.
func (s *stream) writeOut(flush bool) error {
	if s.buf == nil || len(*s.buf) == 0 {
		return nil
	}
	b := *s.buf
	*s.buf = b[:0]
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	if flush && s.flusher != nil {
		s.flusher.Flush()
	}
	return nil
}

// finish ends the stream, with err if the work failed. It returns an error
// only when nothing was sent yet, for the caller to answer as usual.
func (s *stream) finish(err error) error {
	defer s.release()
	if err == nil {
		// No flush: net/http writes what is left when the handler returns
		// with the end of the body, so a short read is one write, not two.
		s.start()
		s.writeOut(false)
		return nil
	}
	if !s.started {
		return err
	}
	// The lines gathered, then the error after them.
	bj, _ := json.Marshal(errorJSON(s.public(err)))
	if s.buf == nil {
		s.buf = lineBuffers.Get().(*[]byte)
		*s.buf = (*s.buf)[:0]
	}
	*s.buf = append(append(*s.buf, bj...), '\n')
	s.writeOut(true)
	return nil
}

// release gives the line buffer back to the pool.
func (s *stream) release() {
	if s.buf != nil {
		if cap(*s.buf) <= maxPooledLine {
			lineBuffers.Put(s.buf)
		}
		s.buf = nil
	}
}

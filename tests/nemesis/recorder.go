package nemesis

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/foliodb/folio/tests/history"
)

// recorder keeps one workload's history: every event in the order it
// happened, which is the real-time order the checker reads, in memory
// and in a JSON-lines file (tests/history's format) that
// tests/cmd/historycheck can check again.
type recorder struct {
	start time.Time

	mu     sync.Mutex
	events []history.Event
	file   *os.File
	enc    *history.Encoder
	err    error // the first write error
}

func newRecorder(path string, start time.Time) (*recorder, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &recorder{start: start, file: f, enc: history.NewEncoder(f)}, nil
}

// record appends an event, timed now. An invocation is recorded before
// its first request leaves, a completion after its last answer came:
// the order of two events then says which happened first.
func (r *recorder) record(e history.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.Time = time.Since(r.start).Nanoseconds()
	r.events = append(r.events, e)
	if err := r.enc.Encode(e); err != nil && r.err == nil {
		r.err = err
	}
}

// close flushes the file and returns the events.
func (r *recorder) close() ([]history.Event, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.err
	if ferr := r.enc.Flush(); err == nil {
		err = ferr
	}
	if cerr := r.file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		err = fmt.Errorf("write the history %s: %w", r.file.Name(), err)
	}
	return r.events, err
}

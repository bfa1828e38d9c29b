package apitest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
)

// The harness of the stream tests (events, subscribe). Streams never end
// by themselves; the node ends them first when it shuts down. The server
// can also be stopped and started again on the same data, to test resuming
// across a restart.

// streamServer is a node whose store can be reopened.
type streamServer struct {
	open func(t testing.TB) kv.Store
	cfg  node.Config

	store kv.Store // the running node's
	node  *node.Node
	*client
}

// eachStreamBackend runs fn once per backend with a stream server of its
// own on an empty store.
func eachStreamBackend(t *testing.T, cfg node.Config, fn func(t *testing.T, s *streamServer)) {
	t.Helper()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		store := b.Open(t)
		opened := false
		s := &streamServer{cfg: cfg, open: func(t testing.TB) kv.Store {
			if opened {
				t.Fatalf("the %s backend's store cannot be reopened", b.Name)
			}
			opened = true
			return store
		}}
		s.start(t)
		fn(t, s)
	})
}

// pebbleServer is a stream server on a Pebble store in dir, which survives
// stop and start.
func pebbleServer(t *testing.T, dir string, cfg node.Config) *streamServer {
	open := func(t testing.TB) kv.Store { return backendtest.OpenPebbleAt(t, dir) }
	s := &streamServer{open: open, cfg: cfg}
	s.start(t)
	return s
}

// start opens the store and serves the API on a new loopback port; the
// client then talks to that port.
func (s *streamServer) start(t *testing.T) {
	t.Helper()
	s.store = s.open(t)
	s.node = startNode(t, s.store, s.cfg)
	s.client = newClient("http://" + s.node.Addr().String())
	t.Cleanup(func() {
		if s.node != nil {
			s.stop(t)
		}
	})
}

// stop shuts the node down, as folio serve does at a signal.
func (s *streamServer) stop(t *testing.T) {
	t.Helper()
	if err := s.node.Close(); err != nil {
		t.Errorf("shut the node down: %v", err)
	}
	s.node = nil
}

// restart stops the server and starts it again on the same store.
func (s *streamServer) restart(t *testing.T) {
	t.Helper()
	s.stop(t)
	s.start(t)
}

// liveStream is an open stream response, read line by line in the
// background. Closing it (or the end of the test) disconnects.
type liveStream struct {
	t      *testing.T
	cancel context.CancelFunc
	lines  chan string // closed when the body ends
	done   chan struct{}
}

// openStream posts body to path and expects a stream: 200 with the JSON
// content type, sent before any item (the stream is in place once the
// call returns).
func (c *client) openStream(t *testing.T, path, body string) *liveStream {
	t.Helper()
	res, cancel := c.startStream(t, path, body, 0)
	return readStream(t, res, cancel)
}

// readStream reads an open stream's lines in the background.
func readStream(t *testing.T, res *http.Response, cancel context.CancelFunc) *liveStream {
	ls := &liveStream{t: t, cancel: cancel, lines: make(chan string), done: make(chan struct{})}
	go func() {
		defer close(ls.lines)
		defer res.Body.Close()
		rd := bufio.NewReaderSize(res.Body, 1<<16)
		for {
			line, err := rd.ReadString('\n')
			if line != "" {
				select {
				case ls.lines <- line:
				case <-ls.done:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(ls.close)
	return ls
}

// startStream makes the streaming request and checks its status line; the
// caller reads (or does not read) the body. A rcvbuf above zero fixes the
// connection's receive buffer to that many bytes (the kernel then does not
// grow it), so that a client that does not read stops the server's writes
// soon.
func (c *client) startStream(t *testing.T, path, body string, rcvbuf int) (*http.Response, context.CancelFunc) {
	t.Helper()
	// No client timeout: a stream lasts as long as the test wants it.
	dialer := &net.Dialer{}
	if rcvbuf > 0 {
		dialer.Control = func(_, _ string, conn syscall.RawConn) error {
			var err error
			conn.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf) })
			return err
		}
	}
	return c.startStreamOver(t, &http.Transport{DialContext: dialer.DialContext, DisableKeepAlives: true}, path, body)
}

// startStreamOver is startStream through the given transport (h2c, say).
func (c *client) startStreamOver(t *testing.T, tr *http.Transport, path, body string) (*http.Response, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "POST", c.base+path, strings.NewReader(body))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	hc := &http.Client{Transport: tr}
	res, err := hc.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("POST %s: %v", path, err)
	}
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		cancel()
		t.Fatalf("POST %s %s: got %d %s %s, want a 200 JSON stream", path, body, res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	return res, cancel
}

func (ls *liveStream) close() {
	select {
	case <-ls.done:
	default:
		close(ls.done)
		ls.cancel()
	}
}

// line returns the next line, without its newline; it fails the test if
// none comes within the deadline or the stream ends.
func (ls *liveStream) line(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-ls.lines:
		if !ok {
			t.Fatal("the stream ended")
		}
		if !strings.HasSuffix(l, "\n") {
			t.Fatalf("stream line without a newline: %q", l)
		}
		return strings.TrimSuffix(l, "\n")
	case <-time.After(streamIdle):
		t.Fatalf("no stream line within %s", streamIdle)
	}
	return ""
}

// end waits for the stream to end and returns the lines left in it.
func (ls *liveStream) end(t *testing.T) []string {
	t.Helper()
	var rest []string
	deadline := time.After(streamIdle)
	for {
		select {
		case l, ok := <-ls.lines:
			if !ok {
				return rest
			}
			rest = append(rest, strings.TrimSuffix(l, "\n"))
		case <-deadline:
			t.Fatalf("the stream did not end within %s (got %q)", streamIdle, rest)
		}
	}
}

// event is one change event as a client decodes it.
type event struct {
	TxID       string          `json:"tx_id"`
	Collection string          `json:"collection"`
	Op         string          `json:"op"`
	Key        []byte          `json:"key"` // base64 in JSON
	Data       json.RawMessage `json:"data"`
	Last       bool            `json:"last"`
	LeftFilter bool            `json:"left_filter"` // on a filtered stream only
	Expired    bool            `json:"expired"`     // on a delete of a document past its ttl only
	Position   string          `json:"position"`
}

// next reads the next line of an events stream, which must be an event.
func (ls *liveStream) next(t *testing.T) event {
	t.Helper()
	return parseEvent(t, ls.line(t))
}

func parseEvent(t *testing.T, line string) event {
	t.Helper()
	var chunk struct {
		Result struct {
			Event *event `json:"event"`
		} `json:"result"`
	}
	strict(t, line, &chunk)
	ev := chunk.Result.Event
	if ev == nil || ev.TxID == "" || ev.Position == "" || ev.Op == "" {
		t.Fatalf("not an event line: %s", line)
	}
	if tx, err := base64.StdEncoding.DecodeString(ev.TxID); err != nil || len(tx) == 0 {
		t.Fatalf("tx_id %q is not base64: %v", ev.TxID, err)
	}
	return *ev
}

// message is one line of a subscribe stream.
type message struct {
	Message  json.RawMessage `json:"message"`
	Position string          `json:"position"`
}

func (ls *liveStream) message(t *testing.T) message {
	t.Helper()
	line := ls.line(t)
	var chunk struct {
		Result *message `json:"result"`
	}
	strict(t, line, &chunk)
	if chunk.Result == nil || chunk.Result.Message == nil || chunk.Result.Position == "" {
		t.Fatalf("not a message line: %s", line)
	}
	return *chunk.Result
}

// strict decodes one compact JSON line into v, refusing unknown fields.
func strict(t *testing.T, line string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil || dec.More() {
		t.Fatalf("stream line %s: %v", line, err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(line)); err != nil || compact.String() != line {
		t.Fatalf("stream line is not compact JSON: %s", line)
	}
}

// streamError decodes an {"error":...} line.
func streamError(t *testing.T, line string) apiError {
	t.Helper()
	var e struct {
		Error *apiError `json:"error"`
	}
	strict(t, line, &e)
	if e.Error == nil {
		t.Fatalf("not an error line: %s", line)
	}
	return *e.Error
}

// streamIdle bounds every wait of a test for a stream's next bytes:
// streams never end by themselves, so an unbounded read of one whose
// awaited line never comes would hang until the package's timeout
// instead of failing.
const streamIdle = 20 * time.Second

// streamLines splits a stream body into lines, however long. Once the body
// has sent nothing for streamIdle it is closed: the scan stops, and its Err
// says why.
func streamLines(t *testing.T, body io.ReadCloser) *bufio.Scanner {
	b := &idleBody{body: body}
	b.timer = time.AfterFunc(streamIdle, func() {
		b.expired.Store(true)
		body.Close()
	})
	t.Cleanup(func() { b.timer.Stop() })
	sc := bufio.NewScanner(b)
	sc.Buffer(nil, 16<<20)
	return sc
}

// idleBody is a stream body that its timer closes when idle too long.
type idleBody struct {
	body    io.ReadCloser
	timer   *time.Timer
	expired atomic.Bool
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if b.expired.Load() {
		return n, fmt.Errorf("the stream sent nothing for %s", streamIdle)
	}
	b.timer.Reset(streamIdle)
	return n, err
}

// sendBufferMax is the most a connection's send buffer grows to (Linux's
// tcp_wmem maximum), or a generous guess where that cannot be read.
func sendBufferMax() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_wmem")
	if f := strings.Fields(string(b)); err == nil && len(f) == 3 {
		if n, err := strconv.Atoi(f[2]); err == nil {
			return n
		}
	}
	return 16 << 20
}

func eventsPath(db, coll string) string  { return collPath(db, coll, "events") }
func msgPath(db, coll, op string) string { return collPath(db, coll, "messages/"+op) }

// startAfter is a stream request body resuming after position.
func startAfter(position string) string {
	return `{"options":{"start_after":"` + position + `"}}`
}

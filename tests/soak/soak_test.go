//go:build soak

package soak

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The shape of the run; the whole test stays under five minutes.
const (
	phase        = 40 * time.Second // load before the kill, and again after the restart
	idleConns    = 800              // keep-alive connections doing a request now and then
	writers      = 16               // clients inserting documents, counting acknowledgements
	slowReaders  = 60               // clients reading a large read a byte at a time
	slowBodies   = 80               // clients sending a body a byte at a time
	stalledFeeds = 60               // clients opening events streams and reading nothing for stallFor
	// feedEvery is how often the feeder replaces a large document in the
	// collection the stalled streams watch, so that their server-side
	// buffers (a loopback socket's send buffer grows to megabytes) fill
	// within seconds and the write timeout must cut them off.
	feedEvery = 50 * time.Millisecond
	feedBytes = 32 << 10
	// memoryBound is the most resident memory the server may hold while
	// everything above is connected (sampled every second after the
	// restart): the 16 MiB per-stream buffers and the block cache are
	// bounded, and so must the whole be.
	memoryBound = 768 << 20
	clientWait  = 60 * time.Second // a request unanswered this long has hung
	// stallFor is how long a stalled stream's client reads nothing: far
	// past the write timeout (5s), so the server must have cut it off by
	// then; drainWait how long it then takes to read what the server sent
	// until the stream's end.
	stallFor  = 20 * time.Second
	drainWait = 15 * time.Second
)

func TestSoak(t *testing.T) {
	bin := buildFolio(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	srv := start(t, bin, dir, addr)
	base := "http://" + addr
	setup(t, base)

	var st stats
	feeds := feedStats{back: make(chan struct{})}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	acked := &ackSet{ids: map[int64]bool{}}
	run := func(n int, fn func(ctx context.Context, i int)) {
		for i := range n {
			wg.Add(1)
			go func() { defer wg.Done(); fn(ctx, i) }()
		}
	}
	run(idleConns, func(ctx context.Context, i int) { idle(ctx, base, &st) })
	run(writers, func(ctx context.Context, i int) { write(ctx, base, int64(i), acked, &st) })
	run(slowReaders, func(ctx context.Context, i int) { slowRead(ctx, addr, &st) })
	run(slowBodies, func(ctx context.Context, i int) { slowBody(ctx, addr, &st) })
	run(1, func(ctx context.Context, i int) { feed(ctx, base, &st) })
	run(stalledFeeds, func(ctx context.Context, i int) { stalledFeed(ctx, addr, i, &feeds) })

	time.Sleep(phase)
	t.Logf("before the kill: %s; stalled streams: %s", st.String(), feeds.String())
	feeds.kills.Add(1)
	srv.kill(t)
	time.Sleep(2 * time.Second)
	srv = start(t, bin, dir, addr)
	feeds.restarted.Store(true)
	close(feeds.back)
	// The stalled streams reopen (their clients reconnect after the
	// kill), so the memory sampled here is with them in place.
	var rss, peak int64
	for end := time.Now().Add(phase); time.Now().Before(end); time.Sleep(time.Second) {
		rss = srv.rss(t)
		peak = max(peak, rss)
	}
	t.Logf("after the restart: %s; stalled streams: %s; server resident memory %d MiB at the end, %d MiB at most",
		st.String(), feeds.String(), rss>>20, peak>>20)
	stop()
	wg.Wait()

	if n := st.hung.Load(); n > 0 {
		t.Errorf("%d requests got no answer within %v", n, clientWait)
	}
	if n := st.unclear.Load(); n > 0 {
		t.Errorf("%d answers were not the API's JSON (first: %s)", n, st.firstUnclear())
	}
	if st.ok.Load() == 0 || acked.len() == 0 {
		t.Fatalf("nothing succeeded: %s", st.String())
	}
	if peak > memoryBound {
		t.Errorf("the server held up to %d MiB, above the bound of %d MiB", peak>>20, memoryBound>>20)
	}
	feeds.check(t)
	lost := acked.missing(t, base)
	if len(lost) > 0 {
		t.Errorf("%d acknowledged writes were lost, e.g. %v", len(lost), lost[:min(5, len(lost))])
	}
	srv.stop(t)
}

// stats counts what the clients saw.
type stats struct {
	ok, apiError, cut, hung, unclear atomic.Int64
	mu                               sync.Mutex
	unclearExample                   string
}

func (s *stats) String() string {
	return fmt.Sprintf("%d ok, %d API errors, %d cut off (connection closed or refused), %d hung, %d unclear",
		s.ok.Load(), s.apiError.Load(), s.cut.Load(), s.hung.Load(), s.unclear.Load())
}

func (s *stats) noteUnclear(what string) {
	s.unclear.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unclearExample == "" {
		s.unclearExample = what
	}
}

func (s *stats) firstUnclear() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unclearExample
}

// answer sorts one request's outcome: a 2xx, the API's JSON error, a
// connection cut (a clear error at the client: the server closed or was
// down), or a hang.
func (s *stats) answer(res *http.Response, err error) []byte {
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			s.hung.Add(1)
		} else {
			s.cut.Add(1)
		}
		return nil
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		s.cut.Add(1)
		return nil
	}
	if res.StatusCode < 300 {
		s.ok.Add(1)
		return b
	}
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if json.Unmarshal(b, &e) != nil || e.Error.Code == "" || e.Error.Message == "" {
		s.noteUnclear(fmt.Sprintf("%d %q", res.StatusCode, b))
		return nil
	}
	s.apiError.Add(1)
	return nil
}

var client = &http.Client{Timeout: clientWait, Transport: &http.Transport{MaxIdleConnsPerHost: 2000, MaxConnsPerHost: 0}}

func post(ctx context.Context, url, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return client.Do(req)
}

const (
	coll     = "/v1/databases/soak/collections/docs"
	feedColl = "/v1/databases/soak/collections/feed"
)

func setup(t *testing.T, base string) {
	for _, r := range []struct{ path, body string }{
		{"/v1/databases/soak/create", ""},
		{coll + "/createOrUpdate", `{"schema":{"title":"docs","primary_key":["id"],"properties":{"id":{"type":"integer"},"w":{"type":"integer"},"pad":{"type":"string"}}}}`},
		{feedColl + "/createOrUpdate", `{"schema":{"title":"feed","primary_key":["id"],"properties":{"id":{"type":"integer"},"pad":{"type":"string"}}}}`},
	} {
		res, err := post(context.Background(), base+r.path, r.body)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("setup %s: %v %v", r.path, err, res)
		}
		res.Body.Close()
	}
	// Enough documents that a full read does not fit in socket buffers.
	pad := strings.Repeat("p", 1000)
	for batch := range 10 {
		var b strings.Builder
		b.WriteString(`{"documents":[`)
		for i := range 1000 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":%d,"w":-1,"pad":"%s"}`, -1-(batch*1000+i), pad)
		}
		b.WriteString(`]}`)
		res, err := post(context.Background(), base+coll+"/documents/insert", b.String())
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("load: %v %v", err, res)
		}
		res.Body.Close()
	}
}

// idle holds a keep-alive connection and makes a cheap request now and then.
func idle(ctx context.Context, base string, st *stats) {
	for ctx.Err() == nil {
		res, err := post(ctx, base+coll+"/documents/read", `{"filter":{"id":-5}}`)
		if ctx.Err() != nil {
			return
		}
		st.answer(res, err)
		sleep(ctx, 2*time.Second)
	}
}

// ackSet is the ids whose insert the server acknowledged.
type ackSet struct {
	mu  sync.Mutex
	ids map[int64]bool
}

func (a *ackSet) add(id int64) { a.mu.Lock(); a.ids[id] = true; a.mu.Unlock() }
func (a *ackSet) len() int     { a.mu.Lock(); defer a.mu.Unlock(); return len(a.ids) }

// missing reads every acknowledged id back.
func (a *ackSet) missing(t *testing.T, base string) []int64 {
	res, err := post(context.Background(), base+coll+"/documents/read", `{"filter":{"w":{"$gte":0}},"fields":{"id":1}}`)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("read back: %v %v", err, res)
	}
	defer res.Body.Close()
	found := map[int64]bool{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Result struct {
				Data struct{ ID int64 } `json:"data"`
			} `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("read back: %v in %s", err, sc.Bytes())
		}
		found[line.Result.Data.ID] = true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var lost []int64
	for id := range a.ids {
		if !found[id] {
			lost = append(lost, id)
		}
	}
	return lost
}

// write inserts documents one at a time and notes each acknowledged one.
func write(ctx context.Context, base string, w int64, acked *ackSet, st *stats) {
	for n := int64(0); ctx.Err() == nil; n++ {
		id := w<<32 | n
		res, err := post(ctx, base+coll+"/documents/insert", fmt.Sprintf(`{"documents":[{"id":%d,"w":%d}]}`, id, w))
		if ctx.Err() != nil {
			return
		}
		ok := err == nil && res.StatusCode == 200
		st.answer(res, err)
		if ok {
			acked.add(id)
		} else {
			sleep(ctx, 100*time.Millisecond)
		}
	}
}

// slowRead starts a full read and takes its answer a few bytes a second.
func slowRead(ctx context.Context, addr string, st *stats) {
	for ctx.Err() == nil {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			st.cut.Add(1)
			sleep(ctx, time.Second)
			continue
		}
		body := `{"filter":{}}`
		fmt.Fprintf(conn, "POST %s/documents/read HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", coll, len(body), body)
		buf := make([]byte, 16)
		for ctx.Err() == nil {
			conn.SetReadDeadline(time.Now().Add(clientWait))
			if _, err := conn.Read(buf); err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					st.hung.Add(1)
				} else {
					st.cut.Add(1) // the server's write timeout cut it: expected
				}
				break
			}
			sleep(ctx, time.Second)
		}
		conn.Close()
	}
}

// slowBody sends a body a byte every few seconds.
func slowBody(ctx context.Context, addr string, st *stats) {
	for ctx.Err() == nil {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			st.cut.Add(1)
			sleep(ctx, time.Second)
			continue
		}
		fmt.Fprintf(conn, "POST %s/documents/insert HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", coll)
		answered := make(chan struct{})
		go func() {
			defer close(answered)
			conn.SetReadDeadline(time.Now().Add(clientWait))
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			st.answer(res, err)
		}()
	dribble:
		for ctx.Err() == nil {
			select {
			case <-answered:
				break dribble
			case <-time.After(3 * time.Second):
				conn.Write([]byte(" "))
			}
		}
		conn.Close()
		<-answered
	}
}

// feed replaces one of a few large documents of the feed collection every
// feedEvery: the changes the stalled streams do not read. The pad is one
// word, which the search index takes as a single term.
func feed(ctx context.Context, base string, st *stats) {
	pad := strings.Repeat("f", feedBytes)
	tick := time.NewTicker(feedEvery)
	defer tick.Stop()
	for n := 0; ctx.Err() == nil; n++ {
		req, err := http.NewRequestWithContext(ctx, "PUT", base+feedColl+"/documents/replace",
			strings.NewReader(fmt.Sprintf(`{"documents":[{"id":%d,"pad":"%s"}]}`, n%16, pad)))
		if err != nil {
			panic(err)
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if ctx.Err() != nil {
			return
		}
		st.answer(res, err)
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}

// feedStats is how the stalled streams ended.
type feedStats struct {
	opened atomic.Int64 // answered 200: the stream was open
	// The connection closed under it, the server having died (the kill
	// came while it was open), or else cut it off at the write timeout;
	// timedOutAfter counts the latter among the streams opened after the
	// restart.
	killed, timedOut, timedOutAfter atomic.Int64
	ended                           atomic.Int64 // an error line, RESOURCE_EXHAUSTED or UNAVAILABLE
	refused                         atomic.Int64 // not opened: an API error, or no connection (the server down)
	uncut                           atomic.Int64 // still open after stallFor and drainWait: never cut off
	unclear                         atomic.Int64 // anything else
	kills                           atomic.Int64 // the kills so far
	restarted                       atomic.Bool  // set once the server is back after the kill
	// back is closed then: a stream opened before the kill ends its
	// stall, so that its client opens another on the restarted server
	// at once.
	back chan struct{}
	// reopened marks the clients that had a stream open after the
	// restart.
	reopened [stalledFeeds]atomic.Bool
	mu       sync.Mutex
	example  string // the first unclear or uncut outcome
}

func (f *feedStats) String() string {
	return fmt.Sprintf("%d opened, %d cut off at the write timeout (%d of those opened after the restart), %d cut off by the kill, %d ended with an error line, %d refused, %d never cut off, %d unclear",
		f.opened.Load(), f.timedOut.Load(), f.timedOutAfter.Load(), f.killed.Load(), f.ended.Load(), f.refused.Load(), f.uncut.Load(), f.unclear.Load())
}

func (f *feedStats) note(n *atomic.Int64, what string) {
	n.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.example == "" {
		f.example = what
	}
}

// check asserts that every stalled stream was cut off or ended with a
// clear error, and that every client opened one again after the restart.
func (f *feedStats) check(t *testing.T) {
	t.Helper()
	if n := f.uncut.Load() + f.unclear.Load(); n > 0 {
		t.Errorf("%d stalled streams were neither cut off nor ended with RESOURCE_EXHAUSTED or UNAVAILABLE (first: %s)", n, f.example)
	}
	if f.timedOut.Load() == 0 || f.timedOutAfter.Load() == 0 {
		t.Errorf("no stalled stream was seen cut off at the write timeout (before the kill and after the restart): %s", f.String())
	}
	reopened := 0
	for i := range f.reopened {
		if f.reopened[i].Load() {
			reopened++
		}
	}
	if reopened != stalledFeeds {
		t.Errorf("%d of the %d stalled clients had a stream open after the restart", reopened, stalledFeeds)
	}
}

// stalledFeed opens an events stream on a connection with a small receive
// buffer, reads nothing for stallFor while the writers' changes pile up,
// then reads what the server sent and how the stream ended; then again,
// until the end of the run, across the kill and the restart.
func stalledFeed(ctx context.Context, addr string, i int, f *feedStats) {
	dialer := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	for ctx.Err() == nil {
		// A dial after the kill reaches the restarted server or none.
		// (restarted is set only once the new server answers its health
		// check: a stream opened in between, taken for one of the old
		// server's, skipped its stall, read a live stream for drainWait
		// and was counted as never cut off.)
		after := f.kills.Load() > 0
		conn, err := dialer.DialContext(ctx, "tcp", addr)
		if err != nil {
			if ctx.Err() == nil {
				f.refused.Add(1) // the server is down
				sleep(ctx, time.Second)
			}
			continue
		}
		stalledStream(ctx, conn, i, after, f)
		conn.Close()
	}
}

// stalledStream is one stalled stream on conn, from the request to its
// end. A stream the run's end interrupts is not counted.
func stalledStream(ctx context.Context, conn net.Conn, i int, afterRestart bool, f *feedStats) {
	fmt.Fprintf(conn, "POST %s/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", feedColl)
	// The head comes at once, before any change.
	conn.SetReadDeadline(time.Now().Add(clientWait))
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			f.note(&f.unclear, fmt.Sprintf("no answer to the events request within %v", clientWait))
		} else {
			f.refused.Add(1) // the connection closed: the kill
		}
		return
	}
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if json.Unmarshal(b, &e) != nil || e.Error.Code == "" || e.Error.Message == "" {
			f.note(&f.unclear, fmt.Sprintf("events answered %d %q", res.StatusCode, b))
		} else {
			f.refused.Add(1)
		}
		return
	}
	f.opened.Add(1)
	kills := f.kills.Load()
	if afterRestart {
		f.reopened[i].Store(true)
	}

	stall := f.back
	if afterRestart {
		stall = nil
	}
	select {
	case <-ctx.Done():
		return
	case <-time.After(stallFor):
	case <-stall:
	}
	conn.SetReadDeadline(time.Now().Add(drainWait))
	rd := bufio.NewReaderSize(res.Body, 64<<10)
	var last []byte
	for {
		line, err := rd.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			last = line
		}
		if err == nil {
			continue
		}
		var ne net.Error
		switch code := errorCode(last); {
		case code == "RESOURCE_EXHAUSTED" || code == "UNAVAILABLE":
			f.ended.Add(1)
		case code != "":
			f.note(&f.unclear, fmt.Sprintf("a stalled stream ended with %s", bytes.TrimSpace(last)))
		case errors.As(err, &ne) && ne.Timeout():
			f.note(&f.uncut, fmt.Sprintf("a stream stalled for %v was still open %v later", stallFor, drainWait))
		case err == io.EOF:
			f.note(&f.unclear, "a stalled stream ended without an error line")
		default:
			// Unexpected EOF or reset: the server closed the connection.
			switch {
			case f.kills.Load() != kills:
				f.killed.Add(1)
			case afterRestart:
				f.timedOutAfter.Add(1)
				f.timedOut.Add(1)
			default:
				f.timedOut.Add(1)
			}
		}
		return
	}
}

// errorCode is the code of an {"error":...} line, "" for any other line.
func errorCode(line []byte) string {
	var e struct {
		Error *struct{ Code string } `json:"error"`
	}
	if json.Unmarshal(line, &e) != nil || e.Error == nil {
		return ""
	}
	return e.Error.Code
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// server is a running folio serve.
type server struct {
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

func start(t *testing.T, bin, dir, addr string) *server {
	t.Helper()
	logf, err := os.CreateTemp(t.TempDir(), "folio-*.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--addr", addr, "--data-dir", dir, "--max-connections", "1200",
		"--body-timeout", "5s", "--write-timeout", "5s", "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, done: make(chan struct{}), log: logf}
	go func() { cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get("http://" + addr + "/v1/health")
		if err == nil && res.StatusCode == 200 {
			res.Body.Close()
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("folio did not start: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *server) kill(t *testing.T) {
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

func (s *server) stop(t *testing.T) {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(60 * time.Second):
		s.kill(t)
		t.Error("folio did not stop within 60s of SIGTERM")
	}
}

// rss is the server's resident memory in bytes.
func (s *server) rss(t *testing.T) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

func buildFolio(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "folio")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/foliodb/folio/cmd/folio").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

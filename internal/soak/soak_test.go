//go:build soak

package soak

import (
	"bufio"
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
	stalledFeeds = 60               // events streams whose clients never read
	// memoryBound is the most resident memory the server may hold at the
	// end, with everything above still connected: the 16 MiB per-stream
	// buffers and the block cache are bounded, and so must the whole be.
	memoryBound = 768 << 20
	clientWait  = 60 * time.Second // a request unanswered this long has hung
)

func TestSoak(t *testing.T) {
	bin := buildFolio(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	srv := start(t, bin, dir, addr)
	base := "http://" + addr
	setup(t, base)

	var st stats
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
	run(stalledFeeds, func(ctx context.Context, i int) { stalledFeed(ctx, addr, &st) })

	time.Sleep(phase)
	t.Logf("before the kill: %s", st.String())
	srv.kill(t)
	time.Sleep(2 * time.Second)
	srv = start(t, bin, dir, addr)
	time.Sleep(phase)
	rss := srv.rss(t)
	t.Logf("after the restart: %s; server resident memory %d MiB", st.String(), rss>>20)
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
	if rss > memoryBound {
		t.Errorf("the server holds %d MiB, above the bound of %d MiB", rss>>20, memoryBound>>20)
	}
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

const coll = "/v1/databases/soak/collections/docs"

func setup(t *testing.T, base string) {
	for _, r := range []struct{ path, body string }{
		{"/v1/databases/soak/create", ""},
		{coll + "/createOrUpdate", `{"schema":{"title":"docs","primary_key":["id"],"properties":{"id":{"type":"integer"},"w":{"type":"integer"},"pad":{"type":"string"}}}}`},
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
		fmt.Fprintf(conn, "POST %s/documents/read HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", coll, len(body), body)
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
		fmt.Fprintf(conn, "POST %s/documents/insert HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", coll)
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

// stalledFeed opens an events stream and never reads it.
func stalledFeed(ctx context.Context, addr string, st *stats) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		st.cut.Add(1)
		return
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", coll)
	<-ctx.Done()
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

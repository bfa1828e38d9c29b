package http1_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/http1"
)

// serve runs h on an http1 server on a loopback port until the end of
// the test, and returns its address.
func serve(t testing.TB, cfg http1.Config) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = 5 * time.Second
	}
	if cfg.BodyTimeout == 0 {
		cfg.BodyTimeout = 5 * time.Second
	}
	if cfg.HeaderTimeout == 0 {
		cfg.HeaderTimeout = 5 * time.Second
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	s := http1.New(cfg)
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// rawConn is a client connection that writes raw requests and reads
// answers with net/http's parser.
type rawConn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dial(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawConn{t: t, c: c, br: bufio.NewReader(c)}
}

func (rc *rawConn) send(raw string) {
	rc.t.Helper()
	if _, err := io.WriteString(rc.c, raw); err != nil {
		rc.t.Fatal(err)
	}
}

// answer reads one answer whole.
func (rc *rawConn) answer() (*http.Response, string) {
	rc.t.Helper()
	res, err := http.ReadResponse(rc.br, nil)
	if err != nil {
		rc.t.Fatalf("read answer: %v", err)
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		rc.t.Fatalf("read body: %v", err)
	}
	return res, string(b)
}

func post(path, body string) string {
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body)
}

// echo answers with what it was asked, so that tests can see the request
// as the handler saw it; /stream answers chunked in three flushed lines.
func echo(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/flushfirst" {
		// Answers live before it reads its body, and never does.
		fmt.Fprint(w, "flushed")
		w.(http.Flusher).Flush()
		return
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		// The words of a broken body's error are the body parser's,
		// which differ between the servers.
		var tooBig *http.MaxBytesError
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, "body: too large %v, timeout %v, early end %v", errors.As(err, &tooBig), isTimeout(err), errors.Is(err, io.ErrUnexpectedEOF))
		return
	}
	switch r.URL.Path {
	case "/stream":
		w.Header().Set("Transfer-Encoding", "chunked")
		for i := range 3 {
			fmt.Fprintf(w, "line %d\n", i)
			w.(http.Flusher).Flush()
		}
		return
	case "/gathered":
		w.Header().Set("Transfer-Encoding", "chunked")
		fmt.Fprintf(w, "one\n")
		fmt.Fprintf(w, "two\n")
		return
	case "/empty":
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("X-Echo", "yes")
	fmt.Fprintf(w, "%s %s %q %s %d %s|%s", r.Method, r.URL.Path, r.URL.RawQuery, r.Host, r.ContentLength, r.Header.Get("X-Thing"), b)
}

func TestAnswers(t *testing.T) {
	addr := serve(t, http1.Config{Handler: http.HandlerFunc(echo)})
	rc := dial(t, addr)
	for _, tc := range []struct {
		name, req      string
		status         int
		body           string
		chunked        bool
		header, hvalue string
	}{
		{"post", post("/a/b", `{"x":1}`), 200, `POST /a/b "" x 7 |{"x":1}`, false, "X-Echo", "yes"},
		{"query and escapes", "GET /a%2Fb?q=1 HTTP/1.1\r\nHost: h:1\r\nX-Thing: t\r\n\r\n", 200, `GET /a/b "q=1" h:1 0 t|`, false, "Content-Type", "text/plain"},
		{"chunked request body", "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", 200, `POST /c "" x -1 |abcde`, false, "", ""},
		{"gathered chunked answer", post("/gathered", ""), 200, "one\ntwo\n", true, "", ""},
		{"streamed answer", post("/stream", ""), 200, "line 0\nline 1\nline 2\n", true, "", ""},
		{"after a stream, the same connection", post("/x", "after"), 200, `POST /x "" x 5 |after`, false, "", ""},
		{"no content", post("/empty", ""), 204, "", false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc.t = t
			rc.send(tc.req)
			res, body := rc.answer()
			if res.StatusCode != tc.status || body != tc.body {
				t.Errorf("got %d %q, want %d %q", res.StatusCode, body, tc.status, tc.body)
			}
			if chunked := len(res.TransferEncoding) > 0 && res.TransferEncoding[0] == "chunked"; chunked != tc.chunked {
				t.Errorf("chunked %v, want %v", chunked, tc.chunked)
			}
			if tc.header != "" && res.Header.Get(tc.header) != tc.hvalue {
				t.Errorf("%s: %q, want %q", tc.header, res.Header.Get(tc.header), tc.hvalue)
			}
			if res.Close {
				t.Errorf("the connection closes")
			}
		})
	}
}

// TestPipelined sends requests in one write, a streamed answer among
// them: the answers come back whole and in order.
func TestPipelined(t *testing.T) {
	addr := serve(t, http1.Config{Handler: http.HandlerFunc(echo)})
	for round := range 3 {
		rc := dial(t, addr)
		rc.send(post("/one", "1") + post("/stream", "") + post("/two", "2") + post("/stream", "") + post("/three", "3"))
		want := []string{`POST /one "" x 1 |1`, "line 0\nline 1\nline 2\n", `POST /two "" x 1 |2`, "line 0\nline 1\nline 2\n", `POST /three "" x 1 |3`}
		for i, w := range want {
			if _, body := rc.answer(); body != w {
				t.Fatalf("round %d answer %d: %q, want %q", round, i, body, w)
			}
		}
	}
}

// TestLongLived: a long-lived request's context ends when its client goes
// away, with nothing written for it to fail on, and its connection closes
// after it.
func TestLongLived(t *testing.T) {
	ended := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/events" {
			echo(w, r)
			return
		}
		w.Header().Set("Transfer-Encoding", "chunked")
		fmt.Fprintln(w, "started")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			close(ended)
		case <-time.After(10 * time.Second):
		}
	})
	addr := serve(t, http1.Config{Handler: h, LongLived: func(p string) bool { return p == "/events" }})
	rc := dial(t, addr)
	rc.send(post("/events", ""))
	res, err := http.ReadResponse(rc.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Close {
		t.Errorf("a long-lived answer keeps its connection")
	}
	line, err := bufio.NewReader(res.Body).ReadString('\n')
	if err != nil || line != "started\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	rc.c.Close()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the request's context was not cancelled when its client went away")
	}
}

// TestPanic: a handler's panic drops its connection, as net/http does,
// and the server goes on serving.
func TestPanic(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/panic" {
			panic("planted")
		}
		echo(w, r)
	})
	addr := serve(t, http1.Config{Handler: h, Logger: slog.New(slog.DiscardHandler)})
	rc := dial(t, addr)
	rc.send(post("/panic", ""))
	if _, err := http.ReadResponse(rc.br, nil); err == nil {
		t.Fatal("an answer to a request whose handler panicked")
	}
	rc = dial(t, addr)
	rc.send(post("/ok", "k"))
	if _, body := rc.answer(); body != `POST /ok "" x 1 |k` {
		t.Fatalf("after a panic: %q", body)
	}
}

// TestLargeBody: a body past MaxBodyBytes reaches the handler, streamed,
// for its own limit to refuse (the API answers with its JSON error).
func TestLargeBody(t *testing.T) {
	var got atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, 2000))
		got.Store(n)
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			fmt.Fprint(w, "too large")
			return
		}
		fmt.Fprint(w, n)
	})
	addr := serve(t, http1.Config{Handler: h, MaxBodyBytes: 1000})
	for _, tc := range []struct {
		size   int
		status int
	}{{500, 200}, {1500, 200}, {5000, 413}} {
		rc := dial(t, addr)
		rc.send(post("/b", strings.Repeat("a", tc.size)))
		res, body := rc.answer()
		if res.StatusCode != tc.status {
			t.Errorf("%d bytes: %d %q, want %d", tc.size, res.StatusCode, body, tc.status)
		}
	}
}

// TestBodyTimeout: a body that stops arriving before the handler runs
// is answered by SlowBody; one streamed to the handler (larger than what
// is read ahead, or chunked) fails the handler's read with a timeout, as
// on net/http. The connection closes either way.
func TestBodyTimeout(t *testing.T) {
	slow := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":"slow"}`)
	}
	addr := serve(t, http1.Config{Handler: http.HandlerFunc(echo), BodyTimeout: 300 * time.Millisecond, SlowBody: slow})
	for _, tc := range []struct{ req, want string }{
		{"POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc", `{"error":"slow"}`},
		{"POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" + strings.Repeat("a", 9000), "timeout true"},
		{"POST /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n", "timeout true"},
	} {
		rc := dial(t, addr)
		rc.send(tc.req)
		res, body := rc.answer()
		if res.StatusCode != 400 || !strings.Contains(body, tc.want) || !res.Close {
			t.Errorf("got %d %q (close %v), want 400 with %q, closing", res.StatusCode, body, res.Close, tc.want)
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestRefusals: what net/http's server refuses before any handler, this
// one refuses too, through Refuse, and closes the connection.
func TestRefusals(t *testing.T) {
	type refusal struct {
		status int
		why    string
	}
	got := make(chan refusal, 1)
	refuse := func(w http.ResponseWriter, status int, why string) {
		got <- refusal{status, why}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":%q}`, why)
	}
	addr := serve(t, http1.Config{Handler: http.HandlerFunc(echo), Refuse: refuse})
	for _, tc := range []struct {
		req    string
		status int
	}{
		{"GET * HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"GET /a HTTP/2.0\r\nHost: x\r\n\r\n", 505},
		{"GET /a%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"GET /a HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n", 400},
		{"GET /a HTTP/1.1\r\nHost: x\r\nX-Thing: " + strings.Repeat("v", 70000) + "\r\n\r\n", 431},
	} {
		rc := dial(t, addr)
		rc.send(tc.req)
		res, body := rc.answer()
		if res.StatusCode != tc.status || !res.Close || !strings.HasPrefix(body, `{"error":`) {
			t.Errorf("%.40q: %d %q (close %v), want %d from Refuse, closing", tc.req, res.StatusCode, body, res.Close, tc.status)
			continue
		}
		if r := <-got; r.status != tc.status || r.why == "" {
			t.Errorf("%.40q: Refuse given %d %q", tc.req, r.status, r.why)
		}
	}
}

// TestIdleAfterStream: a connection handed back after a streamed answer
// waits for its next request as long as any idle connection (IdleTimeout),
// not just a new connection's header timeout.
func TestIdleAfterStream(t *testing.T) {
	addr := serve(t, http1.Config{Handler: http.HandlerFunc(echo), HeaderTimeout: 200 * time.Millisecond, IdleTimeout: 10 * time.Second})
	rc := dial(t, addr)
	rc.send(post("/stream", ""))
	if _, body := rc.answer(); body != "line 0\nline 1\nline 2\n" {
		t.Fatalf("stream: %q", body)
	}
	time.Sleep(600 * time.Millisecond)
	rc.send(post("/later", "x"))
	if _, body := rc.answer(); body != `POST /later "" x 1 |x` {
		t.Fatalf("after an idle wait: %q", body)
	}
}

// countingListener counts the writes on the connections it accepts.
type countingListener struct {
	net.Listener
	writes *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestGatheredAnswerIsOneWrite: an answer that is whole when its handler
// returns goes out in one write to the socket, chunked or not (fasthttp
// flushes every chunk of a body stream: a point read took two).
func TestGatheredAnswerIsOneWrite(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var writes atomic.Int64
	s := http1.New(http1.Config{Handler: http.HandlerFunc(echo), WriteTimeout: 5 * time.Second, HeaderTimeout: 5 * time.Second, BodyTimeout: 5 * time.Second, MaxBodyBytes: 1 << 20})
	go s.Serve(countingListener{ln, &writes})
	defer s.Shutdown(context.Background())
	rc := dial(t, ln.Addr().String())
	for _, path := range []string{"/gathered", "/plain"} {
		before := writes.Load()
		rc.send(post(path, "x"))
		res, _ := rc.answer()
		if n := writes.Load() - before; n != 1 {
			t.Errorf("%s (chunked %v): %d writes, want 1", path, res.TransferEncoding, n)
		}
	}
}

// TestSilentConnectionTimesOut: a connection that sends nothing within the
// header timeout is closed without an answer, as net/http closes it, not
// answered as a request whose body did not arrive.
func TestSilentConnectionTimesOut(t *testing.T) {
	slow := func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, "slow body")
	}
	addr := serve(t, http1.Config{Handler: http.HandlerFunc(echo), HeaderTimeout: 200 * time.Millisecond, SlowBody: slow})
	rc := dial(t, addr)
	b, err := io.ReadAll(rc.c)
	if err != nil || len(b) != 0 {
		t.Fatalf("a silent connection got %q, %v; want it closed without a word", b, err)
	}
}

// TestLiveAnswerLeavesNoBodyBehind: a handler that answers live without
// reading its body must not leave the body to be read as the next request
// (it would be served, and its answer sent to whoever asks next).
func TestLiveAnswerLeavesNoBodyBehind(t *testing.T) {
	addr := serve(t, http1.Config{Handler: http.HandlerFunc(echo)})
	smuggled := "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
	for _, body := range []string{strings.Repeat("p", 9000) + smuggled, smuggled} {
		rc := dial(t, addr)
		rc.send(post("/flushfirst", body))
		if _, got := rc.answer(); got != "flushed" {
			t.Fatalf("answer %q", got)
		}
		rc.send(post("/next", "n"))
		if _, got := rc.answer(); got != `POST /next "" x 1 |n` {
			t.Fatalf("after a live answer with its body unread, the next answer is %q", got)
		}
	}
}

// TestLongLivedBodyIntact: the watch of a long-lived request's connection
// starts once its body is in, and takes none of it.
func TestLongLivedBodyIntact(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%d %v", len(b), err)
	})
	addr := serve(t, http1.Config{Handler: h, LongLived: func(string) bool { return true }})
	for range 20 {
		rc := dial(t, addr)
		rc.send("POST /events HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
		time.Sleep(time.Millisecond)
		rc.send("5\r\nabcde\r\n0\r\n\r\n")
		if _, got := rc.answer(); got != "5 <nil>" {
			t.Fatalf("body read %q", got)
		}
	}
}

// TestPipelinedOrder: an answer fasthttp writes and a live one after it,
// pipelined, go out in order.
func TestPipelinedOrder(t *testing.T) {
	addr := serve(t, http1.Config{Handler: http.HandlerFunc(echo)})
	rc := dial(t, addr)
	rc.send("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n" + post("/stream", ""))
	if res, got := rc.answer(); res.StatusCode != 200 || got != "" {
		t.Fatalf("first answer %d %q, want OPTIONS *'s empty 200", res.StatusCode, got)
	}
	if _, got := rc.answer(); got != "line 0\nline 1\nline 2\n" {
		t.Fatalf("second answer %q", got)
	}
}

// TestHeadLive: a live answer to HEAD sends headers only, and the
// connection goes on.
func TestHeadLive(t *testing.T) {
	addr := serve(t, http1.Config{Handler: http.HandlerFunc(echo)})
	rc := dial(t, addr)
	rc.send("HEAD /stream HTTP/1.1\r\nHost: x\r\n\r\n")
	res, err := http.ReadResponse(rc.br, &http.Request{Method: http.MethodHead})
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("HEAD: %v %v", res, err)
	}
	res.Body.Close()
	rc.send(post("/next", "n"))
	if _, got := rc.answer(); got != `POST /next "" x 1 |n` {
		t.Fatalf("after HEAD: %q", got)
	}
}

// TestShutdownEndsHandedBackConnections: after Shutdown no connection
// serves another request, those handed back after a stream included.
func TestShutdownEndsHandedBackConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := http1.New(http1.Config{Handler: http.HandlerFunc(echo), WriteTimeout: 5 * time.Second, HeaderTimeout: 5 * time.Second, BodyTimeout: 5 * time.Second, IdleTimeout: time.Minute, MaxBodyBytes: 1 << 20})
	go s.Serve(ln)
	rc := dial(t, ln.Addr().String())
	rc.send(post("/stream", ""))
	rc.answer()
	time.Sleep(50 * time.Millisecond) // handed back, waiting idle
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	rc.c.SetDeadline(time.Now().Add(2 * time.Second))
	io.WriteString(rc.c, post("/after", "a"))
	if res, err := http.ReadResponse(rc.br, nil); err == nil {
		t.Fatalf("a request after Shutdown was answered %d", res.StatusCode)
	}
}

// TestRefusalsLogNoRequestBytes: fasthttp's messages about a malformed
// request quote none of it (its headers may carry a token).
func TestRefusalsLogNoRequestBytes(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	addr := serve(t, http1.Config{Handler: http.HandlerFunc(echo), Logger: log})
	rc := dial(t, addr)
	rc.send("GET /a HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer SECRET-TOKEN\r\nBad\x01Header: v\r\n\r\n")
	io.ReadAll(rc.c)
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(logs.String(), "SECRET") {
		t.Fatalf("the log quotes the request:\n%s", logs.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

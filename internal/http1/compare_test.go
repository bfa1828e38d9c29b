package http1_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/http1"
)

// TestAgainstNetHTTP sends the same bytes, one request or several
// (pipelined), well-formed or not, to this server and to net/http's, both
// running the same handler, and compares the answers: the same statuses
// in the same order, and the same bodies where the handler answered (see
// sameAnswers for what may differ).
func TestAgainstNetHTTP(t *testing.T) {
	fast, std := comparedServers(t)
	for _, raw := range compareSeeds {
		compare(t, fast, std, []byte(raw))
	}
}

// FuzzAgainstNetHTTP is TestAgainstNetHTTP on requests built from fuzzed
// parts: a header's name and value, a body and its framing (a length,
// right or wrong, or chunks of fuzzed sizes), a path, and the request
// repeated, pipelined.
func FuzzAgainstNetHTTP(f *testing.F) {
	f.Add(uint8(0), "/a", "X-Thing", "v", []byte(`{"x":1}`), uint8(0), uint8(1))
	f.Add(uint8(1), "/stream", "Content-Type", "application/json", []byte("abc"), uint8(1), uint8(3))
	f.Add(uint8(2), "/a%2F?q=1", "Bad Name", "v", []byte("abcdef"), uint8(2), uint8(2))
	f.Add(uint8(3), "/gathered", "X-Thing", "a\x00b", []byte(""), uint8(3), uint8(1))
	f.Add(uint8(0), "/empty", "Transfer-Encoding", "gzip", []byte("abc"), uint8(4), uint8(2))
	f.Add(uint8(1), "/a", "Content-Length", "5", []byte("abcdefgh"), uint8(5), uint8(1))
	fast, std := comparedServers(f)
	f.Fuzz(func(t *testing.T, method uint8, path, name, value string, body []byte, framing, repeat uint8) {
		one := buildRequest(method, path, name, value, body, framing)
		compare(t, fast, std, bytes.Repeat(one, int(repeat%4)+1))
	})
}

// buildRequest makes a request of fuzzed parts. framing picks the body's:
// 0 a right Content-Length, 1 chunked in chunks of the body's bytes' sizes,
// 2 a Content-Length too short, 3 too long, 4 none, 5 both headers.
func buildRequest(method uint8, path, name, value string, body []byte, framing uint8) []byte {
	// No HEAD: the answers are read without knowing their requests.
	methods := []string{"GET", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "post"}
	path = "/" + strings.Map(func(r rune) rune {
		if r == ' ' || r == '\r' || r == '\n' {
			return -1
		}
		return r
	}, path)
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: x\r\n%s: %s\r\n", methods[int(method)%len(methods)], path, name, value)
	switch framing % 6 {
	case 0:
		fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
	case 1, 5:
		if framing%6 == 5 {
			fmt.Fprintf(&b, "Content-Length: %d\r\n", len(body))
		}
		b.WriteString("Transfer-Encoding: chunked\r\n\r\n")
		for rest := body; len(rest) > 0; {
			n := min(int(rest[0]%7)+1, len(rest))
			fmt.Fprintf(&b, "%x\r\n%s\r\n", n, rest[:n])
			rest = rest[n:]
		}
		b.WriteString("0\r\n\r\n")
	case 2:
		fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body)/2, body)
	case 3:
		fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body)+3, body)
	case 4:
		fmt.Fprintf(&b, "\r\n%s", body)
	}
	return b.Bytes()
}

// comparedServers starts both servers on the same handler, with the body
// limit the API applies itself (as MaxBytesHandler does).
func comparedServers(tb testing.TB) (fast, std string) {
	cfg := http1.Config{Handler: http.MaxBytesHandler(http.HandlerFunc(echo), 4096), HeaderTimeout: 2 * time.Second, BodyTimeout: 2 * time.Second, MaxBodyBytes: 4096}
	return serve(tb, cfg), serveNetHTTP(tb, cfg)
}

func compare(t *testing.T, fast, std string, raw []byte) {
	t.Helper()
	if knownDifference(raw) {
		return
	}
	a, b := answers(t, fast, raw), answers(t, std, raw)
	if head, _, _ := bytes.Cut(bytes.ToLower(raw), []byte("\r\n\r\n")); bytes.Contains(head, []byte("\r\ncontent-length:")) &&
		bytes.Contains(head, []byte("\r\ntransfer-encoding:")) && len(a) > 0 && len(b) > 0 {
		// Both framings: the chunks say where the body ends, and this
		// server closes the connection after the answer (RFC 9112, 6.3),
		// where net/http serves the requests behind.
		a, b = a[:1], b[:1]
	}
	if !sameAnswers(a, b) {
		t.Errorf("for %s:\nhttp1:    %s\nnet/http: %s", short(fmt.Sprintf("%q", raw)), short(fmt.Sprintf("%q", a)), short(fmt.Sprintf("%q", b)))
	}
}

var compareSeeds = []string{
	post("/a", `{"x":1}`),
	"GET /a?b=c HTTP/1.1\r\nHost: h\r\n\r\n",
	"GET /a HTTP/1.0\r\n\r\n",
	"GET /a HTTP/1.1\r\n\r\n",
	"GET http://h/a/b?c HTTP/1.1\r\nHost: h\r\n\r\n",
	"OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n",
	"GET /a%20b%2F HTTP/1.1\r\nHost: h\r\n\r\n",
	"GET /a%zz HTTP/1.1\r\nHost: h\r\n\r\n",
	"POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
	"POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
	"POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
	"POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
	"POST /c HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
	"POST /c HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
	"POST /c HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n" + strings.Repeat("a", 5000),
	"POST /c HTTP/1.1\r\nHost: x\r\nX-Thing: a\r\n b\r\n\r\n",
	"POST /c HTTP/1.1\r\nHost: x\r\nBad Header: a\r\n\r\n",
	"POST /c HTTP/1.1\r\nHost: x\r\nX-Thing: a\x00b\r\n\r\n",
	"POST /c HTTP/1.1\nHost: x\nX-Thing: lf\n\n",
	"GET /a HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
	"GET /a HTTP/2.0\r\nHost: a\r\n\r\n",
	"GET /a FOO/1.1\r\nHost: a\r\n\r\n",
	"GET  /a HTTP/1.1\r\nHost: a\r\n\r\n",
	"get /a HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /a HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n" + post("/after", "x"),
	post("/one", "1") + post("/stream", "") + post("/two", "2"),
	post("/gathered", "") + "GET /x HTTP/1.1\r\nHost: y\r\nX-Thing: t\r\n\r\n",
	post("/empty", "abc"),
	"POST /c HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc",
	"GET /" + strings.Repeat("a", 12000) + " HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /a HTTP/1.1\r\nHost: x\r\nX-Thing: " + strings.Repeat("b", 12000) + "\r\n\r\n",
}

// serveNetHTTP runs cfg's handler on net/http's server, with the same
// limits, until the end of the test.
func serveNetHTTP(tb testing.TB, cfg http1.Config) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: cfg.Handler, ReadHeaderTimeout: cfg.HeaderTimeout, ReadTimeout: cfg.BodyTimeout}
	go srv.Serve(ln)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return ln.Addr().String()
}

// answers sends raw on a new connection, closes its sending side, and
// reads the answers until the server closes: "status body" each.
func answers(t *testing.T, addr string, raw []byte) []string {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write(raw)
	c.(*net.TCPConn).CloseWrite()
	all, _ := io.ReadAll(c)
	br := bufio.NewReader(bytes.NewReader(all))
	var out []string
	for {
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			if len(all) > 0 && err != io.EOF && len(out) == 0 {
				out = append(out, fmt.Sprintf("unreadable: %v", err))
			}
			return out
		}
		b, err := io.ReadAll(res.Body)
		if err != nil {
			out = append(out, fmt.Sprintf("%d body: %v", res.StatusCode, err))
			return out
		}
		out = append(out, fmt.Sprintf("%d %s", res.StatusCode, b))
	}
}

// sameAnswers compares answers: statuses, and bodies where the handler
// answered. Two refusals by the servers themselves (a body that starts
// with its status) may differ in their words and in which 4xx or 5xx they
// chose (net/http says 501 to a transfer coding it does not know, fasthttp
// 400). A request whose body the client cut short by closing gets this
// server's 400, where net/http's handler reads the early end and answers;
// a few bytes left after the last request (less than a request line) get
// a 400 here where net/http closes without a word after a first request.
func sameAnswers(a, b []string) bool {
	if len(b) > 0 && len(a) == len(b) && strings.HasSuffix(b[len(b)-1], "early end true") && strings.HasPrefix(a[len(a)-1], "400 400 ") {
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	refused := func(s []string) bool { return len(s) > 0 && strings.HasPrefix(s[len(s)-1], "400 400 Bad Request") }
	if len(a) == len(b)+1 && refused(a) {
		a = a[:len(a)-1] // a few bytes left behind the last request, refused here
	}
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] == b[i] {
			continue
		}
		refusal := func(s string) bool { return s[0] >= '4' && !strings.HasPrefix(s[4:], "body:") }
		if !refusal(a[i]) || !refusal(b[i]) {
			return false
		}
	}
	return true
}

// knownDifference reports inputs the two servers answer differently on
// purpose, as docs/api.md says: a request line or headers past 16 KiB
// (net/http's bound is 1 MiB), lines ended by a bare LF (net/http takes
// them, fasthttp waits for CRLF), and empty lines before a request
// (fasthttp skips them, net/http refuses more than one), and a
// Content-Length given twice (net/http takes two equal ones, fasthttp
// refuses any two).
func knownDifference(raw []byte) bool {
	head, _, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
	return len(head) > 15<<10 || bytes.Contains(bytes.ReplaceAll(raw, []byte("\r\n"), nil), []byte("\n")) ||
		bytes.HasPrefix(raw, []byte("\r\n")) || bytes.Count(bytes.ToLower(head), []byte("\r\ncontent-length:")) > 1
}

// short cuts a message to a length a test log can show.
func short(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

//go:build ignore

// proxy stands between the original's suite and folio serve
// (scripts/upstream-suite.sh) and writes every exchange as a JSON line:
// the method, path and query, the request body and the answer's status
// and body (each cut at 2 KiB). A POST to /upstream-suite/mark?test=NAME
// is not passed on: it writes a mark, and the script sends one before it
// runs each test, so that summary.go knows which exchanges are whose and
// can say, for a failure, what was sent and what Folio answered (Folio's
// request log has no bodies; the tests' own output has neither).
//
//	go run proxy.go -target 127.0.0.1:8081 -log exchanges.jsonl
//
// It prints the address it listens on as its first line.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"sync"
)

const keep = 2048 // bytes of each body kept in the log

type exchange struct {
	Method   string `json:"method"`
	Path     string `json:"path"`
	Sent     string `json:"sent,omitempty"`
	Status   int    `json:"status"`
	Answered string `json:"answered,omitempty"`
}

func main() {
	target := flag.String("target", "", "host:port of folio serve")
	logPath := flag.String("log", "", "file of the exchanges")
	flag.Parse()
	out, err := os.Create(*logPath)
	if err != nil {
		log.Fatal(err)
	}
	var mu sync.Mutex
	enc := json.NewEncoder(out)
	record := func(e exchange) {
		mu.Lock()
		defer mu.Unlock()
		enc.Encode(e)
	}

	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: *target})
	rp.FlushInterval = -1 // streamed answers (reads, search) pass as they come
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/upstream-suite/mark" {
			record(exchange{Method: "MARK", Path: r.URL.Query().Get("test")})
			w.WriteHeader(http.StatusNoContent)
			return
		}
		var sent []byte
		if r.Body != nil {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			sent = body
		}
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		rp.ServeHTTP(rec, r)
		record(exchange{
			Method:   r.Method,
			Path:     r.URL.RequestURI(),
			Sent:     clip(sent),
			Status:   rec.status,
			Answered: clip(rec.body.Bytes()),
		})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ln.Addr().String())
	log.Fatal(http.Serve(ln, handler))
}

// recorder passes an answer on and keeps its status and first bytes.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if room := keep + 1 - r.body.Len(); room > 0 {
		r.body.Write(p[:min(room, len(p))])
	}
	return r.ResponseWriter.Write(p)
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func clip(b []byte) string {
	if len(b) > keep {
		return string(b[:keep]) + "…"
	}
	return string(b)
}

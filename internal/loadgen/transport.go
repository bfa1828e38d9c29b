package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// HTTP clients the FolioDriver can send its requests with.
const (
	// ClientFast is fasthttp's client: a connection's request is written
	// and its answer read by the calling goroutine, with buffers reused. Its
	// CPU per request is near that of pgx, PostgreSQL's driver (35.7 against
	// 27.1 µs a point read, docs/benchmarks.md; net/http's about 50), which
	// matters where the client shares the machine with the server.
	ClientFast = "fasthttp"
	// ClientStd is Go's net/http client, as most Go applications use:
	// every connection has a reading and a writing goroutine, and each
	// request passes through both.
	ClientStd = "net/http"
)

// transport sends one request and hands the answer's status and body to
// answer, which must not keep the body.
type transport interface {
	do(ctx context.Context, method, url string, body []byte, tx *txHeaders, answer func(status int, body []byte) error) error
	close()
}

// CheckHTTPClient reports whether name is a client NewFolio knows.
func CheckHTTPClient(name string) error {
	switch name {
	case ClientFast, ClientStd, "":
		return nil
	}
	return fmt.Errorf("unknown HTTP client %q (%s or %s)", name, ClientFast, ClientStd)
}

func newTransport(name string, clients int) (transport, error) {
	if err := CheckHTTPClient(name); err != nil {
		return nil, err
	}
	conns := 2 * max(clients, 1)
	if name == ClientStd {
		return &stdTransport{c: &http.Client{Transport: &http.Transport{
			MaxIdleConns:        conns,
			MaxIdleConnsPerHost: conns,
			IdleConnTimeout:     time.Minute,
			DisableCompression:  true,
		}}}, nil
	}
	return &fastTransport{c: &fasthttp.Client{
		MaxConnsPerHost:               conns,
		MaxIdleConnDuration:           time.Minute,
		NoDefaultUserAgentHeader:      true,
		DisableHeaderNamesNormalizing: true,
		// A connection busy with other callers' requests is waited for,
		// not refused, so that more callers than connections queue rather
		// than fail.
		MaxConnWaitTimeout: time.Minute,
	}}, nil
}

type fastTransport struct{ c *fasthttp.Client }

// do honours ctx's deadline, and its cancellation before the request is
// sent: fasthttp cannot abandon a request in flight, as net/http does
// when the context is canceled. Without a deadline, as with net/http, a
// request waits as long as the server takes.
func (t *fastTransport) do(ctx context.Context, method, url string, body []byte, tx *txHeaders, answer func(int, []byte) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI(url)
	req.Header.SetContentType("application/json")
	if tx != nil {
		req.Header.Set("Tigris-Tx-Id", tx.id)
		req.Header.Set("Tigris-Tx-Origin", tx.origin)
	}
	req.SetBodyRaw(body)
	var err error
	if deadline, ok := ctx.Deadline(); ok {
		err = t.c.DoDeadline(req, resp, deadline)
	} else {
		err = t.c.Do(req, resp)
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, url, err)
	}
	return answer(resp.StatusCode(), resp.Body())
}

func (t *fastTransport) close() { t.c.CloseIdleConnections() }

type stdTransport struct{ c *http.Client }

// bodies recycles the standard client's answer buffers: most answers are
// counted, not kept.
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func (t *stdTransport) do(ctx context.Context, method, url string, body []byte, tx *txHeaders, answer func(int, []byte) error) error {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if tx != nil {
		req.Header.Set("Tigris-Tx-Id", tx.id)
		req.Header.Set("Tigris-Tx-Origin", tx.origin)
	}
	resp, err := t.c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	buf := bodies.Get().(*bytes.Buffer)
	defer bodies.Put(buf)
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, url, err)
	}
	return answer(resp.StatusCode, buf.Bytes())
}

func (t *stdTransport) close() { t.c.CloseIdleConnections() }

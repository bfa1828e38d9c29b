package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// httpTransport carries calls over the HTTP API: JSON bodies, streams
// of one JSON object a line.
type httpTransport struct {
	base string // the server's URL, without a trailing slash
	hc   *http.Client
}

func newHTTPTransport(base string, opts Options) *httpTransport {
	hc := opts.HTTPClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		if opts.TLS != nil {
			tr.TLSClientConfig = opts.TLS.Clone()
		}
		hc = &http.Client{Transport: tr}
	}
	return &httpTransport{base: base, hc: hc}
}

func (t *httpTransport) close() { t.hc.CloseIdleConnections() }

// path is the request's path, its parameters in place.
func (r *request) path() string {
	return strings.NewReplacer("{db}", url.PathEscape(r.params.db), "{collection}", url.PathEscape(r.params.collection),
		"{name}", url.PathEscape(r.params.name), "{namespace_id}", url.PathEscape(r.params.namespaceID)).Replace(r.route.path)
}

func (t *httpTransport) exchange(ctx context.Context, r *request, token string, each func(json.RawMessage) bool) error {
	var payload []byte
	if r.body != nil {
		var err error
		if payload, err = json.Marshal(r.body); err != nil {
			return fmt.Errorf("%s %s: encode the request: %w", r.route.method, r.route.path, err)
		}
	}
	req, err := http.NewRequestWithContext(ctx, r.route.method, t.base+r.path(), bytes.NewReader(payload))
	if err != nil {
		return err
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if r.tx != nil {
		req.Header.Set("Tigris-Tx-Id", r.tx.id)
		req.Header.Set("Tigris-Tx-Origin", r.tx.origin)
	}
	res, err := t.hc.Do(req)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return readError(res)
	}
	defer res.Body.Close()
	if r.opened != nil {
		r.opened()
	}
	if r.route.stream {
		return lines(res, each)
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	each(b)
	return nil
}

func (t *httpTransport) accessToken(ctx context.Context, id, secret string) (string, time.Duration, error) {
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}}
	req, err := http.NewRequestWithContext(ctx, "POST", t.base+routeAccessToken.path, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := t.hc.Do(req)
	if err != nil {
		return "", 0, err
	}
	if res.StatusCode != http.StatusOK {
		return "", 0, readError(res)
	}
	defer res.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	if err := json.NewDecoder(res.Body).Decode(&tok); err != nil {
		return "", 0, fmt.Errorf("decode the answer: %w", err)
	}
	return tok.AccessToken, time.Duration(tok.ExpiresIn) * time.Second, nil
}

// readError reads a response that is not 200 as the API's error.
func readError(res *http.Response) *Error {
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	var body struct {
		Error wireError `json:"error"`
	}
	if json.Unmarshal(b, &body) == nil && body.Error.Code != "" {
		return body.Error.toError(res.StatusCode)
	}
	return &Error{Code: Unknown, Message: fmt.Sprintf("%s %s: %s %s", res.Request.Method, res.Request.URL.Path, res.Status, bytes.TrimSpace(b)), HTTPStatus: res.StatusCode}
}

// lines reads a stream's answer: one {"result":…} or {"error":…} object
// a line. It calls fn with each result until fn returns false, the
// stream ends (nil), or an error line or a broken connection ends it.
func lines(res *http.Response, fn func(result json.RawMessage) bool) error {
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 64<<20) // a line holds a document, up to the 16 MiB body limit and more
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var line struct {
			Result json.RawMessage `json:"result"`
			Error  *wireError      `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return fmt.Errorf("a stream's line is not JSON: %w", err)
		}
		if line.Error != nil {
			return line.Error.toError(http.StatusOK)
		}
		if !fn(line.Result) {
			return nil
		}
	}
	return sc.Err()
}

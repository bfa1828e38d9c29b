package client

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Options configure a Client. The zero value talks to a server without
// authentication, over plain HTTP or HTTPS with the system's roots.
type Options struct {
	// ApplicationID and ApplicationSecret are an application's
	// credentials: the client exchanges them for access tokens and renews
	// them before they expire. Token, instead, is an access token used as
	// it is.
	ApplicationID, ApplicationSecret string
	Token                            string
	// TLS configures HTTPS (for example a RootCAs pool that trusts the
	// server's certificate); nil takes Go's defaults.
	TLS *tls.Config
	// HTTPClient, if set, makes the requests (TLS is then ignored). It
	// must have no Timeout: streams last as long as their context.
	HTTPClient *http.Client
	// TxAttempts bounds how many times Database.Tx runs a transaction
	// that keeps being aborted by conflicts. Default 10.
	TxAttempts int
	// StreamReconnect is how long an events or subscribe stream keeps
	// trying to reconnect, after it lost its connection, before it gives
	// up with the last error. Default 1 minute; negative: never reconnect.
	StreamReconnect time.Duration
}

// Client is a connection to one Folio server. It is safe for concurrent
// use.
type Client struct {
	base string
	hc   *http.Client
	opts Options

	mu        sync.Mutex
	token     string
	expiresAt time.Time // zero: the token does not expire (Options.Token)
}

// Open returns a Client for the server at rawURL ("http://host:port" or
// "https://host:port"). It does not connect: the first call does.
func Open(rawURL string, opts Options) (*Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("folio URL %q: %w", rawURL, err)
	}
	switch u.Scheme {
	case "http", "https":
	case "grpc":
		return nil, fmt.Errorf("folio URL %q: gRPC is not supported by this client yet: use http:// or https://", rawURL)
	default:
		return nil, fmt.Errorf("folio URL %q: want http://host:port or https://host:port", rawURL)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("folio URL %q: no host", rawURL)
	}
	if (opts.ApplicationID == "") != (opts.ApplicationSecret == "") {
		return nil, errors.New("folio client: give both an application id and its secret, or neither")
	}
	hc := opts.HTTPClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		if opts.TLS != nil {
			tr.TLSClientConfig = opts.TLS.Clone()
		}
		hc = &http.Client{Transport: tr}
	}
	if opts.TxAttempts <= 0 {
		opts.TxAttempts = 10
	}
	if opts.StreamReconnect == 0 {
		opts.StreamReconnect = time.Minute
	}
	return &Client{base: strings.TrimSuffix(u.String(), "/"), hc: hc, opts: opts, token: opts.Token}, nil
}

// URL is the server's URL.
func (c *Client) URL() string { return c.base }

// Close releases the client's idle connections.
func (c *Client) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}

// Info is what the server says of itself.
type Info struct {
	ServerVersion string `json:"server_version"`
}

// Info asks the server its version.
func (c *Client) Info(ctx context.Context) (*Info, error) {
	var info Info
	return &info, c.call(ctx, "GET", "/v1/info", nil, nil, &info)
}

// Health answers nil when the server and its storage are up.
func (c *Client) Health(ctx context.Context) error {
	return c.call(ctx, "GET", "/v1/health", nil, nil, &struct{}{})
}

// txHeaders are the headers that run a request in a transaction; nil runs
// it on its own.
type txHeaders struct{ id, origin string }

// call makes one request and decodes its JSON answer into out.
func (c *Client) call(ctx context.Context, method, path string, tx *txHeaders, body, out any) error {
	res, err := c.send(ctx, method, path, tx, body)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	// Read to the end, so that the connection can carry the next call.
	defer io.Copy(io.Discard, res.Body)
	dec := json.NewDecoder(res.Body)
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("%s %s: decode the answer: %w", method, path, err)
	}
	return nil
}

// send makes one request and returns the response if its status is 200,
// else the API's error. An expired token is renewed and the request sent
// once more.
func (c *Client) send(ctx context.Context, method, path string, tx *txHeaders, body any) (*http.Response, error) {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return nil, fmt.Errorf("%s %s: encode the request: %w", method, path, err)
		}
	}
	for attempt := 0; ; attempt++ {
		token, err := c.accessToken(ctx, attempt > 0)
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(payload))
		if err != nil {
			return nil, err
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if tx != nil {
			req.Header.Set("Tigris-Tx-Id", tx.id)
			req.Header.Set("Tigris-Tx-Origin", tx.origin)
		}
		res, err := c.hc.Do(req)
		if err != nil {
			return nil, err
		}
		if res.StatusCode == http.StatusOK {
			return res, nil
		}
		apiErr := readError(res)
		// A token past its expiry (or revoked and re-issued) is renewed
		// once, when the client has credentials to renew it with.
		if apiErr.Code == Unauthenticated && attempt == 0 && c.opts.ApplicationID != "" {
			continue
		}
		return nil, apiErr
	}
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

// accessToken is the token to send, fetched (or renewed, when renew is
// set or it is about to expire) with the application's credentials.
func (c *Client) accessToken(ctx context.Context, renew bool) (string, error) {
	if c.opts.ApplicationID == "" {
		return c.opts.Token, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token != "" && !renew && time.Until(c.expiresAt) > 30*time.Second {
		return c.token, nil
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {c.opts.ApplicationID}, "client_secret": {c.opts.ApplicationSecret}}
	req, err := http.NewRequestWithContext(ctx, "POST", c.base+"/v1/auth/token", strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := c.hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("get an access token: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("get an access token for %s: %w", c.opts.ApplicationID, readError(res))
	}
	defer res.Body.Close()
	var t struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	if err := json.NewDecoder(res.Body).Decode(&t); err != nil {
		return "", fmt.Errorf("get an access token: decode the answer: %w", err)
	}
	c.token, c.expiresAt = t.AccessToken, time.Now().Add(time.Duration(t.ExpiresIn)*time.Second)
	return c.token, nil
}

// lines reads a stream's answer: one {"result":…} or {"error":…} object
// a line. It calls fn with each result until fn returns false, the
// stream ends (nil), or an error line or a broken connection ends it.
func lines(res *http.Response, fn func(result json.RawMessage) bool) error {
	defer res.Body.Close()
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

// escape makes a name one segment of a path.
func escape(name string) string { return url.PathEscape(name) }

package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Options configure a Client. The zero value talks to a server without
// authentication, in cleartext or over TLS with the system's roots.
type Options struct {
	// ApplicationID and ApplicationSecret are an application's
	// credentials: the client exchanges them for access tokens and renews
	// them before they expire. Token, instead, is an access token used as
	// it is.
	ApplicationID, ApplicationSecret string
	Token                            string
	// TLS configures HTTPS and gRPC over TLS (for example a RootCAs pool
	// that trusts the server's certificate); nil takes Go's defaults.
	TLS *tls.Config
	// HTTPClient, if set, makes the requests of an http:// or https://
	// URL (TLS is then ignored); gRPC makes its own. It must have no
	// Timeout: streams last as long as their context.
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
	url  string
	t    transport
	opts Options

	mu        sync.Mutex
	token     string
	expiresAt time.Time // zero: the token does not expire (Options.Token)
}

// transport carries the calls over one protocol: HTTP with JSON
// (http.go) or gRPC (grpc.go). Both take a call as its route and the
// HTTP API's JSON body, and answer the HTTP API's JSON, so that the
// calls are written once.
type transport interface {
	// exchange makes one call and hands each answer (one for most calls,
	// each item of a stream) to each as JSON, until each returns false or
	// the answers end. An error the server answers is an *Error.
	exchange(ctx context.Context, req *request, token string, each func(json.RawMessage) bool) error
	// accessToken exchanges an application's credentials for a token.
	accessToken(ctx context.Context, id, secret string) (token string, expiresIn time.Duration, err error)
	close()
}

// request is one call: its route, parameters, transaction and body.
type request struct {
	route  *route
	params params
	tx     *txHeaders // nil: the call runs on its own
	body   any        // marshalled with encoding/json; nil: none
	// opened, if set, is called when the server has accepted the call,
	// before its first answer: a stream that then breaks was connected.
	opened func()
}

// params are a call's names: in the HTTP path, in the gRPC request.
type params struct{ db, collection, name, namespaceID string }

// txHeaders are the transaction a call runs in: headers over HTTP,
// metadata over gRPC.
type txHeaders struct{ id, origin string }

// Open returns a Client for the server at rawURL: "http://host:port" or
// "https://host:port" for HTTP with JSON, "grpc://host:port" for gRPC in
// cleartext or "grpcs://host:port" for gRPC over TLS. Both protocols
// offer every call of the client, but for RotateSigningKey and Backup,
// HTTP only.
// Open does not connect: the first call does.
func Open(rawURL string, opts Options) (*Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("folio URL %q: %w", rawURL, err)
	}
	switch u.Scheme {
	case "http", "https", "grpc", "grpcs":
	default:
		return nil, fmt.Errorf("folio URL %q: want http://, https://, grpc:// or grpcs://host:port", rawURL)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("folio URL %q: no host", rawURL)
	}
	if (opts.ApplicationID == "") != (opts.ApplicationSecret == "") {
		return nil, errors.New("folio client: give both an application id and its secret, or neither")
	}
	c := &Client{url: strings.TrimSuffix(u.String(), "/"), opts: opts, token: opts.Token}
	if u.Scheme == "grpc" || u.Scheme == "grpcs" {
		if strings.Trim(u.Path, "/") != "" {
			return nil, fmt.Errorf("folio URL %q: a gRPC URL has no path", rawURL)
		}
		c.t = newGRPCTransport(u.Host, u.Scheme == "grpcs", opts.TLS)
	} else {
		c.t = newHTTPTransport(c.url, opts)
	}
	if c.opts.TxAttempts <= 0 {
		c.opts.TxAttempts = 10
	}
	if c.opts.StreamReconnect == 0 {
		c.opts.StreamReconnect = time.Minute
	}
	return c, nil
}

// URL is the server's URL.
func (c *Client) URL() string { return c.url }

// Close releases the client's idle connections.
func (c *Client) Close() error {
	c.t.close()
	return nil
}

// Info is what the server says of itself.
type Info struct {
	ServerVersion string `json:"server_version"`
	// Engine is the server's storage engine ("pebble", "postgres"), and
	// Auth whether its calls need credentials (Folio's; empty and false
	// from a server that does not say).
	Engine string `json:"engine"`
	Auth   bool   `json:"auth"`
}

// Info asks the server its version.
func (c *Client) Info(ctx context.Context) (*Info, error) {
	var info Info
	return &info, c.call(ctx, &request{route: routeInfo}, &info)
}

// Health answers nil when the server and its storage are up.
func (c *Client) Health(ctx context.Context) error {
	return c.call(ctx, &request{route: routeHealth}, &struct{}{})
}

// call makes a call and decodes its JSON answer into out.
func (c *Client) call(ctx context.Context, req *request, out any) error {
	var decodeErr error
	err := c.stream(ctx, req, func(answer json.RawMessage) bool {
		dec := json.NewDecoder(bytes.NewReader(answer))
		dec.UseNumber()
		if err := dec.Decode(out); err != nil {
			decodeErr = fmt.Errorf("%s %s: decode the answer: %w", req.route.method, req.route.path, err)
		}
		return false
	})
	if err != nil {
		return err
	}
	return decodeErr
}

// stream makes a call and hands each of its answers to each. An expired
// token is renewed and the call made once more, if nothing was answered.
func (c *Client) stream(ctx context.Context, req *request, each func(json.RawMessage) bool) error {
	for attempt := 0; ; attempt++ {
		token, err := c.accessToken(ctx, attempt > 0)
		if err != nil {
			return err
		}
		answered := false
		err = c.t.exchange(ctx, req, token, func(answer json.RawMessage) bool {
			answered = true
			return each(answer)
		})
		// A token past its expiry (or revoked and re-issued) is renewed
		// once, when the client has credentials to renew it with.
		if IsCode(err, Unauthenticated) && attempt == 0 && !answered && c.opts.ApplicationID != "" {
			continue
		}
		return err
	}
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
	token, expiresIn, err := c.t.accessToken(ctx, c.opts.ApplicationID, c.opts.ApplicationSecret)
	if err != nil {
		return "", fmt.Errorf("get an access token for %s: %w", c.opts.ApplicationID, err)
	}
	c.token, c.expiresAt = token, time.Now().Add(expiresIn)
	return c.token, nil
}

package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// rawRemote is the HTTP caller of the backup, export and import commands,
// which make calls that client/ has no method for (the backup call, reads
// in a transaction page by page with their raw JSON). The other commands
// go through client/; moving these onto it is left to do.
type rawRemote struct {
	url    string
	hc     *http.Client
	token  string
	asJSON bool
	out    io.Writer
}

// rawRemoteFlags adds the connection flags of the backup, export and
// import commands.
func rawRemoteFlags(fs *flag.FlagSet) func(out io.Writer) (*rawRemote, error) {
	u := fs.String("url", envOr("FOLIO_URL", "http://localhost:8081"), "the server's URL (env FOLIO_URL)")
	id := fs.String("client-id", os.Getenv("FOLIO_CLIENT_ID"), "the application's id (env FOLIO_CLIENT_ID)")
	secret := fs.String("client-secret", os.Getenv("FOLIO_CLIENT_SECRET"), "the application's secret (env FOLIO_CLIENT_SECRET)")
	token := fs.String("token", os.Getenv("FOLIO_TOKEN"), "an access token, instead of an id and a secret (env FOLIO_TOKEN)")
	caCert := fs.String("ca-cert", os.Getenv("FOLIO_CA_CERT"), "PEM certificate to trust for the server's TLS, beside the system's (env FOLIO_CA_CERT)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	return func(out io.Writer) (*rawRemote, error) {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		if *caCert != "" {
			pem, err := os.ReadFile(*caCert)
			if err != nil {
				return nil, fmt.Errorf("--ca-cert: %w", err)
			}
			pool, err := x509.SystemCertPool()
			if err != nil {
				pool = x509.NewCertPool()
			}
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("--ca-cert %s: no PEM certificate in it", *caCert)
			}
			tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		}
		r := &rawRemote{url: strings.TrimSuffix(*u, "/"), hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}, token: *token, asJSON: *asJSON, out: out}
		if r.token == "" && (*id != "" || *secret != "") {
			if err := r.login(*id, *secret); err != nil {
				return nil, err
			}
		}
		return r, nil
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// apiError is the API's error body.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// call makes one call of the API and decodes its answer into out.
func (r *rawRemote) call(method, path string, body any, out any) error {
	return r.callContext(context.Background(), method, path, body, out)
}

// callContext is call, ended early when ctx is.
func (r *rawRemote) callContext(ctx context.Context, method, path string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.url+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	return r.do(req, out)
}

func (r *rawRemote) do(req *http.Request, out any) error {
	res, err := r.hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		var e apiError
		if json.Unmarshal(b, &e) == nil && e.Error.Code != "" {
			return &callError{Code: e.Error.Code, Message: e.Error.Message}
		}
		return fmt.Errorf("%s %s: %s", req.Method, req.URL.Path, res.Status)
	}
	return json.Unmarshal(b, out)
}

// callError is an error the API answered.
type callError struct{ Code, Message string }

func (e *callError) Error() string { return e.Code + ": " + e.Message }

// hasCode reports whether err is an API error with the given code.
func hasCode(err error, code string) bool {
	var ce *callError
	return errors.As(err, &ce) && ce.Code == code
}

// login exchanges an application's id and secret for an access token.
func (r *rawRemote) login(id, secret string) error {
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}}
	req, err := http.NewRequest("POST", r.url+"/v1/auth/token", strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	var t struct {
		AccessToken string `json:"access_token"`
	}
	if err := r.do(req, &t); err != nil {
		return fmt.Errorf("log in as %s: %w", id, err)
	}
	r.token = t.AccessToken
	return nil
}

// print prints records as the management commands do.
func (r *rawRemote) print(records []map[string]any, columns ...string) error {
	return printRecords(r.out, r.asJSON, records, columns...)
}

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
	"text/tabwriter"
	"time"
)

// The management commands: applications, namespaces and signing keys of a
// running server, through its HTTP API, with an admin's (or the owner's)
// credentials.
//
//	folio app create --name N [--description D] [--role R] [--namespace NS]
//	folio app list
//	folio app rotate ID
//	folio app delete ID
//	folio namespace create NAME [--id N]
//	folio namespace list
//	folio key rotate

// remote is a connection to a server's API with credentials.
type remote struct {
	url    string
	hc     *http.Client
	token  string
	asJSON bool
	out    io.Writer
}

// remoteFlags adds the flags every management command takes.
func remoteFlags(fs *flag.FlagSet) func(out io.Writer) (*remote, error) {
	u := fs.String("url", envOr("FOLIO_URL", "http://localhost:8081"), "the server's URL (env FOLIO_URL)")
	id := fs.String("client-id", os.Getenv("FOLIO_CLIENT_ID"), "the application's id (env FOLIO_CLIENT_ID)")
	secret := fs.String("client-secret", os.Getenv("FOLIO_CLIENT_SECRET"), "the application's secret (env FOLIO_CLIENT_SECRET)")
	token := fs.String("token", os.Getenv("FOLIO_TOKEN"), "an access token, instead of an id and a secret (env FOLIO_TOKEN)")
	caCert := fs.String("ca-cert", os.Getenv("FOLIO_CA_CERT"), "PEM certificate to trust for the server's TLS, beside the system's (env FOLIO_CA_CERT)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	return func(out io.Writer) (*remote, error) {
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
		r := &remote{url: strings.TrimSuffix(*u, "/"), hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}, token: *token, asJSON: *asJSON, out: out}
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
func (r *remote) call(method, path string, body any, out any) error {
	return r.callContext(context.Background(), method, path, body, out)
}

// callContext is call, ended early when ctx is.
func (r *remote) callContext(ctx context.Context, method, path string, body any, out any) error {
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

func (r *remote) do(req *http.Request, out any) error {
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
func (r *remote) login(id, secret string) error {
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

// print prints records: JSON lines with --json, a table otherwise, with
// the columns given (a record's fields by their JSON names).
func (r *remote) print(records []map[string]any, columns ...string) error {
	if r.asJSON {
		enc := json.NewEncoder(r.out)
		for _, rec := range records {
			if err := enc.Encode(rec); err != nil {
				return err
			}
		}
		return nil
	}
	w := tabwriter.NewWriter(r.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, strings.ToUpper(strings.Join(columns, "\t")))
	for _, rec := range records {
		cells := make([]string, len(columns))
		for i, c := range columns {
			cells[i] = cell(rec[c])
		}
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	return w.Flush()
}

func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return "-"
	case json.Number:
		return x.String()
	case float64:
		return fmt.Sprint(int64(x))
	}
	return fmt.Sprint(v)
}

// appColumns are an application's fields a table shows.
var appColumns = []string{"id", "name", "namespace", "role", "description", "created_at", "created_by"}

// appCommand is `folio app`.
func appCommand(args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: folio app create|list|rotate|delete [flags] (folio app create -h)")
	}
	fs := flag.NewFlagSet("app "+args[0], flag.ContinueOnError)
	connect := remoteFlags(fs)
	switch args[0] {
	case "create":
		name := fs.String("name", "", "the application's name (required)")
		description := fs.String("description", "", "what it is for")
		role := fs.String("role", "", "reader, editor, admin or owner (default: editor)")
		ns := fs.String("namespace", "", "its namespace (default: yours; another needs the owner)")
		owner := fs.Bool("owner", false, "make another owner: --role owner in the default namespace")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *owner {
			*role = "owner"
		}
		r, err := connect(out)
		if err != nil {
			return err
		}
		var res struct {
			App map[string]any `json:"created_application"`
		}
		if err := r.call("POST", "/v1/management/applications/create", map[string]string{"name": *name, "description": *description, "role": *role, "namespace": *ns}, &res); err != nil {
			return err
		}
		return r.printApp(res.App)
	case "list":
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		r, err := connect(out)
		if err != nil {
			return err
		}
		var res struct {
			Apps []map[string]any `json:"applications"`
		}
		if err := r.call("POST", "/v1/management/applications/list", nil, &res); err != nil {
			return err
		}
		for _, a := range res.Apps {
			a["created_at"] = readableTime(a["created_at"])
		}
		return r.print(res.Apps, appColumns...)
	case "rotate", "delete":
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return fmt.Errorf("usage: folio app %s [flags] ID", args[0])
		}
		r, err := connect(out)
		if err != nil {
			return err
		}
		body := map[string]string{"id": fs.Arg(0)}
		if args[0] == "delete" {
			var res map[string]any
			if err := r.call("DELETE", "/v1/management/applications/delete", body, &res); err != nil {
				return err
			}
			return r.print([]map[string]any{{"id": fs.Arg(0), "deleted": res["deleted"]}}, "id", "deleted")
		}
		var res struct {
			App map[string]any `json:"application"`
		}
		if err := r.call("POST", "/v1/management/applications/rotate", body, &res); err != nil {
			return err
		}
		return r.printApp(res.App)
	}
	return fmt.Errorf("folio app: unknown subcommand %q: want create, list, rotate or delete", args[0])
}

// printApp prints one application, with its secret if it has one: the
// only time it is shown.
func (r *remote) printApp(app map[string]any) error {
	app["created_at"] = readableTime(app["created_at"])
	if r.asJSON {
		return r.print([]map[string]any{app})
	}
	w := tabwriter.NewWriter(r.out, 0, 4, 2, ' ', 0)
	keys := append([]string{}, appColumns...)
	if _, ok := app["secret"]; ok {
		keys = append(keys, "secret")
	}
	for _, k := range keys {
		fmt.Fprintf(w, "%s\t%s\n", k, cell(app[k]))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if _, ok := app["secret"]; ok {
		fmt.Fprintln(r.out, "\nThe secret is shown this once: keep it now.")
	}
	return nil
}

// readableTime turns Unix milliseconds into RFC 3339 for a person.
func readableTime(v any) any {
	if ms, ok := v.(float64); ok && ms > 0 {
		return time.UnixMilli(int64(ms)).UTC().Format(time.RFC3339)
	}
	return v
}

// namespaceCommand is `folio namespace`.
func namespaceCommand(args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: folio namespace create|list [flags]")
	}
	fs := flag.NewFlagSet("namespace "+args[0], flag.ContinueOnError)
	connect := remoteFlags(fs)
	switch args[0] {
	case "create":
		id := fs.Int64("id", 0, "its id (default: the next free one)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return errors.New("usage: folio namespace create [flags] NAME")
		}
		r, err := connect(out)
		if err != nil {
			return err
		}
		var res map[string]any
		if err := r.call("POST", "/v1/management/namespaces/"+url.PathEscape(fs.Arg(0))+"/create", map[string]int64{"id": *id}, &res); err != nil {
			return err
		}
		return r.print([]map[string]any{res}, "status", "message")
	case "list":
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		r, err := connect(out)
		if err != nil {
			return err
		}
		var res struct {
			Namespaces []map[string]any `json:"namespaces"`
		}
		if err := r.call("POST", "/v1/management/namespaces/list", nil, &res); err != nil {
			return err
		}
		return r.print(res.Namespaces, "id", "name")
	}
	return fmt.Errorf("folio namespace: unknown subcommand %q: want create or list", args[0])
}

// keyCommand is `folio key rotate`.
func keyCommand(args []string, out io.Writer) error {
	if len(args) == 0 || args[0] != "rotate" {
		return errors.New("usage: folio key rotate [flags]")
	}
	fs := flag.NewFlagSet("key rotate", flag.ContinueOnError)
	connect := remoteFlags(fs)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	r, err := connect(out)
	if err != nil {
		return err
	}
	var res map[string]any
	if err := r.call("POST", "/v1/management/keys/rotate", nil, &res); err != nil {
		return err
	}
	return r.print([]map[string]any{res}, "key_id")
}

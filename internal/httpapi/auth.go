package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/ops"
)

// The token endpoint and the management of namespaces, applications and
// signing keys (reference §1 and §10b for the paths).

type callerKey struct{}

// callerBox holds a request's caller, in its context from the start (see
// ServeHTTP): authentication fills it in place rather than adding a value
// to the context, which cost a copy of the request as well.
type callerBox struct {
	c ops.Caller
}

// withCallerBox returns ctx with box, for caller to find.
func withCallerBox(ctx context.Context, box *callerBox) context.Context {
	return context.WithValue(ctx, callerKey{}, box)
}

// authenticate authenticates a request from its Authorization header,
// once, for its handler; it returns r with a box of its own if it had
// none.
func (s *Server) authenticate(r *http.Request) *http.Request {
	c := s.ops.Authenticate(r.Context(), r.Header.Get("Authorization"))
	c.Transport = ops.TransportHTTP
	box, _ := r.Context().Value(callerKey{}).(*callerBox)
	if box == nil {
		return r.WithContext(withCallerBox(r.Context(), &callerBox{c: c}))
	}
	box.c = c
	return r
}

// caller is who makes the request, and (Projects) in which API's terms;
// the zero Caller before authentication.
func caller(r *http.Request) ops.Caller {
	var c ops.Caller
	if box, _ := r.Context().Value(callerKey{}).(*callerBox); box != nil {
		c = box.c
	}
	c.Projects = isProjectRoute(r)
	return c
}

// remoteHost is the address a request came from, for the limit on failed
// token requests (the peer's: a proxy in front makes every client one).
func remoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// token is POST /v1/auth/token: an OAuth2 token request, form-encoded.
func (s *Server) token(w http.ResponseWriter, r *http.Request) error {
	req := ops.TokenRequest{From: remoteHost(r)}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		req.Malformed = apierror.Errorf(apierror.InvalidArgument, "reading request body: %v", err)
	} else if isJSONBody(r, body) {
		req.Malformed = tokenRequestFromJSON(body, &req)
	} else if form, err := url.ParseQuery(string(body)); err != nil {
		req.Malformed = apierror.Errorf(apierror.InvalidArgument, "the token request must be form-encoded (application/x-www-form-urlencoded): %v", err)
	} else {
		req.GrantType, req.ClientID, req.ClientSecret, req.RefreshToken =
			form.Get("grant_type"), form.Get("client_id"), form.Get("client_secret"), form.Get("refresh_token")
	}
	t, err := s.ops.GetAccessToken(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	// Tokens are credentials: no cache may keep them (RFC 6749, 5.1).
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusOK, map[string]any{"access_token": t.Access, "refresh_token": t.Refresh,
		"token_type": "Bearer", "expires_in": int64(t.ExpiresIn.Seconds())})
	return nil
}

// isJSONBody tells a JSON token request from a form-encoded one (RFC
// 6749's): by its content type, or, without one, by its first byte.
func isJSONBody(r *http.Request, body []byte) bool {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, _ := strings.Cut(ct, ";")
		return strings.EqualFold(strings.TrimSpace(mt), "application/json")
	}
	t := bytes.TrimLeft(body, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// tokenRequestFromJSON reads a token request sent as JSON, as the gRPC
// gateway of the original took it: the grant type as the form's
// ("client_credentials") or as the protobuf enum's name
// ("CLIENT_CREDENTIALS").
func tokenRequestFromJSON(body []byte, req *ops.TokenRequest) error {
	var in struct {
		GrantType    string `json:"grant_type"`
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		RefreshToken string `json:"refresh_token"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return apierror.Errorf(apierror.InvalidArgument, "the token request's JSON body: %v (or send it form-encoded: application/x-www-form-urlencoded)", err)
	}
	switch in.GrantType {
	case "CLIENT_CREDENTIALS":
		in.GrantType = ops.GrantClientCredentials
	case "REFRESH_TOKEN":
		in.GrantType = ops.GrantRefreshToken
	}
	req.GrantType, req.ClientID, req.ClientSecret, req.RefreshToken = in.GrantType, in.ClientID, in.ClientSecret, in.RefreshToken
	return nil
}

// namespaceJSON is a namespace as the 2022 clients read it from
// /v1/admin (id, a number), with code (the same number) for the tools
// that read code there.
type namespaceJSON struct {
	ID   int64  `json:"id"`
	Code int64  `json:"code"`
	Name string `json:"name"`
}

// namespaceInfo is a namespace as the /v1/management calls answer it
// from October 2022 on (NamespaceInfo): its number is code, and its id a
// string, which in Folio is its name (Folio names a namespace by its name).
type namespaceInfo struct {
	Code int64  `json:"code"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

func infoOf(ns *ops.Namespace) namespaceInfo {
	return namespaceInfo{Code: ns.ID, ID: ns.Name, Name: ns.Name}
}

// createNamespaceNamedInBody is create namespace as the original's last
// /v1/databases release (beta.19) took it: the name in the body, the
// number as "code", and the namespace in the answer. Folio names a
// namespace by its name, which the answer gives as its "id" too.
func (s *Server) createNamespaceNamedInBody(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Name string      `json:"name"`
		Code json.Number `json:"code"`
		ID   string      `json:"id"`
	}
	req := ops.CreateNamespaceRequest{Malformed: decode(r, &body, nil)}
	if req.Malformed == nil {
		req.Name = body.Name
		switch {
		case body.Name == "":
			req.Malformed = apierror.Errorf(apierror.InvalidArgument, "'name' is required")
		case body.ID != "" && body.ID != body.Name:
			req.Malformed = apierror.Errorf(apierror.InvalidArgument, "'id' must be the namespace's name or left out: Folio names a namespace by its name")
		default:
			req.ID, req.Malformed = namespaceNumber("code", body.Code)
		}
	}
	ns, err := s.ops.CreateNamespace(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "created",
		"message":   fmt.Sprintf("Namespace created, with code=%d, and id=%s", ns.ID, ns.Name),
		"namespace": infoOf(ns)})
	return nil
}

// namespaceNumber reads the number a client chose for a new namespace
// (member field of its request); 0 when it chose none.
func namespaceNumber(field string, n json.Number) (int64, error) {
	if n == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return 0, apierror.Errorf(apierror.InvalidArgument, "'%s' must be an integer", field)
	}
	return id, nil
}

func (s *Server) createNamespace(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		ID json.Number `json:"id"`
	}
	req := ops.CreateNamespaceRequest{Malformed: decode(r, &body, nil), Name: r.PathValue("name")}
	if req.Malformed == nil {
		req.ID, req.Malformed = namespaceNumber("id", body.ID)
	}
	ns, err := s.ops.CreateNamespace(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, statusMessage{Status: "created",
		Message: fmt.Sprintf("Namespace created, with id=%d, and name=%s", ns.ID, ns.Name)})
	return nil
}

// listNamespaces is 2022's list, at /v1/admin: ids are numbers.
func (s *Server) listNamespaces(w http.ResponseWriter, r *http.Request) error {
	if err := decode(r, &struct{}{}, nil); err != nil {
		return err
	}
	list, err := s.ops.ListNamespaces(r.Context(), caller(r))
	if err != nil {
		return err
	}
	out := make([]namespaceJSON, len(list))
	for i, ns := range list {
		out[i] = namespaceJSON{ID: ns.ID, Code: ns.ID, Name: ns.Name}
	}
	writeJSON(w, http.StatusOK, map[string]any{"namespaces": out})
	return nil
}

// listNamespacesInfo is the list at /v1/management (POST .../list, and
// the final API's GET /v1/management/namespaces), or with a path's
// {namespace_id} that one namespace, in a list of one as the original
// answered (404 if there is none).
func (s *Server) listNamespacesInfo(w http.ResponseWriter, r *http.Request) error {
	if err := decode(r, &struct{}{}, nil); err != nil {
		return err
	}
	if d := r.URL.Query().Get("describe"); d != "" && d != "false" {
		return apierror.Errorf(apierror.Unimplemented, "describing namespaces (describe=%s) is not implemented by this server", d)
	}
	list, err := s.ops.ListNamespaces(r.Context(), caller(r))
	if err != nil {
		return err
	}
	one := r.PathValue("id")
	out := []namespaceInfo{}
	for i := range list {
		if one == "" || list[i].Name == one {
			out = append(out, infoOf(&list[i]))
		}
	}
	if one != "" && len(out) == 0 {
		return apierror.Errorf(apierror.NotFound, "namespace '%s' doesn't exist", one)
	}
	writeJSON(w, http.StatusOK, map[string]any{"namespaces": out})
	return nil
}

// deleteNamespace is the final API's DELETE /v1/management/namespaces/{id}:
// an empty namespace only (ops.DeleteNamespace).
func (s *Server) deleteNamespace(w http.ResponseWriter, r *http.Request) error {
	if err := decode(r, &struct{}{}, nil); err != nil {
		return err
	}
	name := r.PathValue("id")
	if err := s.ops.DeleteNamespace(r.Context(), caller(r), name); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, statusMessage{Status: "deleted", Message: fmt.Sprintf("Namespace: %s deleted successfully", name)})
	return nil
}

// applicationJSON is an application as the original sent it (times in
// Unix milliseconds), with Folio's namespace and role; an app key of the
// final API has its project instead of the namespace (appKeyOut).
type applicationJSON struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Secret      string `json:"secret,omitempty"`
	CreatedAt   int64  `json:"created_at"`
	CreatedBy   string `json:"created_by,omitempty"`
	UpdatedAt   int64  `json:"updated_at,omitempty"`
	UpdatedBy   string `json:"updated_by,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	Project     string `json:"project,omitempty"`
	Role        string `json:"role"`
}

func applicationOut(a *ops.Application) applicationJSON {
	out := applicationJSON{ID: a.ID, Name: a.Name, Description: a.Description, Secret: a.Secret,
		CreatedAt: a.CreatedAt.UnixMilli(), CreatedBy: a.CreatedBy, UpdatedBy: a.UpdatedBy,
		Namespace: a.Namespace.Name, Role: string(a.Role)}
	if !a.UpdatedAt.IsZero() {
		out.UpdatedAt = a.UpdatedAt.UnixMilli()
	}
	return out
}

func (s *Server) createApplication(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Name, Description, Role, Namespace string
	}
	malformed := decode(r, &body, nil)
	app, err := s.ops.CreateApplication(r.Context(), caller(r), ops.CreateApplicationRequest{Malformed: malformed,
		Name: body.Name, Description: body.Description, Role: body.Role, Namespace: body.Namespace})
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store") // it holds the secret
	writeJSON(w, http.StatusOK, map[string]any{"created_application": applicationOut(app)})
	return nil
}

func (s *Server) updateApplication(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		ID, Name, Description, Role string
	}
	malformed := decode(r, &body, nil)
	app, err := s.ops.UpdateApplication(r.Context(), caller(r), ops.UpdateApplicationRequest{Malformed: malformed,
		ID: body.ID, Name: body.Name, Description: body.Description, Role: body.Role})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"updated_application": applicationOut(app)})
	return nil
}

// applicationRequest decodes a body that names an application by id.
func applicationRequest(r *http.Request) ops.ApplicationRequest {
	var body struct{ ID string }
	malformed := decode(r, &body, nil)
	return ops.ApplicationRequest{Malformed: malformed, ID: body.ID}
}

func (s *Server) rotateApplicationSecret(w http.ResponseWriter, r *http.Request) error {
	app, err := s.ops.RotateApplicationSecret(r.Context(), caller(r), applicationRequest(r))
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{"application": applicationOut(app)})
	return nil
}

func (s *Server) deleteApplication(w http.ResponseWriter, r *http.Request) error {
	if err := s.ops.DeleteApplication(r.Context(), caller(r), applicationRequest(r)); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": true})
	return nil
}

func (s *Server) listApplications(w http.ResponseWriter, r *http.Request) error {
	if err := decode(r, &struct{}{}, nil); err != nil {
		return err
	}
	apps, err := s.ops.ListApplications(r.Context(), caller(r))
	if err != nil {
		return err
	}
	out := make([]applicationJSON, len(apps))
	for i, a := range apps {
		out[i] = applicationOut(a)
	}
	writeJSON(w, http.StatusOK, map[string]any{"applications": out})
	return nil
}

// rotateSigningKey is Folio's POST /v1/management/keys/rotate.
func (s *Server) rotateSigningKey(w http.ResponseWriter, r *http.Request) error {
	if err := decode(r, &struct{}{}, nil); err != nil {
		return err
	}
	id, err := s.ops.RotateSigningKey(r.Context(), caller(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"key_id": id})
	return nil
}

// backup is Folio's POST /v1/management/backup.
func (s *Server) backup(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Dir string `json:"dir"`
	}
	req := ops.BackupRequest{Malformed: decode(r, &body, nil)}
	req.Dir = body.Dir
	res, err := s.ops.Backup(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"dir": res.Dir, "position": uint64(res.Position), "bytes": res.Bytes,
		"files": res.Files, "created_at": res.CreatedAt.Format(time.RFC3339Nano), "duration_ms": res.Duration.Milliseconds()})
	return nil
}

package httpapi

import (
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/foliodb/folio/internal/apierror"
)

// What keeps a web page of another site from calling the API through its
// visitor's browser. A browser sends a cross-site POST without asking first
// (no CORS preflight) only with a "simple" content type (text/plain, a
// form) or none, and then says where the page came from (Origin). So a
// request that may change something and names an origin other than the
// server's is refused unless CORS allows that origin, and every request
// with a body must say it is JSON (a second guard, for a browser that
// sends no Origin). Same origin means a host of the server's too
// (Hosts): a page whose name was rebound to the server's address names its
// own host in both Origin and Host.

// tokenPath takes a form-encoded body by definition (OAuth2).
const tokenPath = "/v1/auth/token"

// checkContentType refuses a request with a body whose content type is not
// JSON. One without a body (an empty POST) needs none.
func checkContentType(r *http.Request) error {
	if r.ContentLength == 0 || r.URL.Path == tokenPath {
		return nil
	}
	ct := r.Header.Get("Content-Type")
	if ct == "application/json" {
		return nil // what clients send: no parameters to parse
	}
	if ct == "" {
		return apierror.Errorf(apierror.InvalidArgument, "a request with a body must have the header Content-Type: application/json")
	}
	media, _, err := mime.ParseMediaType(ct)
	if err != nil || (media != "application/json" && !strings.HasSuffix(media, "+json")) {
		return apierror.Errorf(apierror.InvalidArgument, "Content-Type must be application/json, not '%s'", ct)
	}
	return nil
}

// checkOrigin refuses a request of a page of another site: a method other
// than GET, HEAD and OPTIONS (POST reads too: the API reads by POST) whose
// Origin is neither the server's own nor one CORS allows. A request
// without Origin is not a browser's cross-site one. Nor is a request whose
// Host is not one of the server's names its own (DNS rebinding).
func (s *Server) checkOrigin(r *http.Request) error {
	origin := r.Header.Get("Origin")
	switch {
	case origin == "", r.Method == http.MethodGet, r.Method == http.MethodHead, r.Method == http.MethodOptions:
		return nil
	case s.corsAllows(origin):
		return nil
	case !s.cfg.Hosts.Known(r.Host):
		return unknownHost(r.Host)
	case s.sameOrigin(r, origin):
		return nil
	}
	return apierror.Errorf(apierror.PermissionDenied, "cross-origin request refused: the origin '%s' is not this server's, nor one --cors-origins allows", origin)
}

// sameOrigin reports whether origin is the server's as the request
// reached it: its scheme, host and port those of the request.
func (s *Server) sameOrigin(r *http.Request, origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || u.User != nil || u.Path != "" || u.RawQuery != "" {
		return false // "null", or not an origin
	}
	scheme := "http"
	if s.cfg.HTTPS || r.TLS != nil {
		scheme = "https"
	}
	return u.Scheme == scheme && strings.EqualFold(withPort(u.Host, scheme), withPort(r.Host, scheme))
}

// withPort is host:port with the scheme's port if host names none, as
// Origin and Host leave out the default one.
func withPort(host, scheme string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	port := "80"
	if scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), port)
}

// corsAllows reports whether --cors-origins lets pages of origin call.
func (s *Server) corsAllows(origin string) bool {
	return slices.Contains(s.cfg.CORSOrigins, "*") || slices.Contains(s.cfg.CORSOrigins, origin)
}

// cors adds the CORS headers for an allowed origin, and answers its
// preflight (OPTIONS with Access-Control-Request-Method); it reports
// whether it answered the request. Without configured origins it does
// nothing, and browsers keep other sites' pages out.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || !s.corsAllows(origin) {
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Expose-Headers", "Tigris-Tx-Id, Tigris-Tx-Origin, X-Request-Id")
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE")
	h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization, Tigris-Tx-Id, Tigris-Tx-Origin, Tigris-Schema-Sign-Off, X-Request-Id")
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}

package httpapi

import (
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/foliodb/folio/internal/status"
)

// What keeps a web page of another site from calling the API through its
// visitor's browser. A browser sends a cross-site POST without asking first
// (no CORS preflight) only with a "simple" content type (text/plain, a
// form), so every request with a body must say it is JSON: such a page can
// then not reach the API unless CORS allows its origin, which it does only
// for the configured origins.

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
		return status.Errorf(status.InvalidArgument, "a request with a body must have the header Content-Type: application/json")
	}
	media, _, err := mime.ParseMediaType(ct)
	if err != nil || (media != "application/json" && !strings.HasSuffix(media, "+json")) {
		return status.Errorf(status.InvalidArgument, "Content-Type must be application/json, not '%s'", ct)
	}
	return nil
}

// cors adds the CORS headers for an allowed origin, and answers its
// preflight (OPTIONS with Access-Control-Request-Method); it reports
// whether it answered the request. Without configured origins it does
// nothing, and browsers keep other sites' pages out.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || len(s.cfg.CORSOrigins) == 0 {
		return false
	}
	if !slices.Contains(s.cfg.CORSOrigins, "*") && !slices.Contains(s.cfg.CORSOrigins, origin) {
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
	h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization, Tigris-Tx-Id, Tigris-Tx-Origin, X-Request-Id")
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}

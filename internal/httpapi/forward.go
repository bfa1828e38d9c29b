package httpapi

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"github.com/foliodb/folio/internal/ops"
)

// Forwarding over HTTP: a request of a transaction that another live node
// holds is relayed there as it came (ops.ForwardTo), and the answer
// returned as it goes, streams included.

// forwardedHeader marks a request relayed by another node, whose id it
// holds: such a request is not relayed again.
const forwardedHeader = "Folio-Forwarded-By"

type forwardKey struct{}

// forwarding is what the relay of one request needs.
type forwarding struct {
	route     ops.Route
	requestID string
}

// newForwarder returns the relay, whose connections to the other nodes it
// keeps for later requests.
func (s *Server) newForwarder(tlsConfig *tls.Config) *httputil.ReverseProxy {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsConfig
	tr.MaxIdleConnsPerHost = 64
	return &httputil.ReverseProxy{
		Transport: tr,
		Rewrite: func(pr *httputil.ProxyRequest) {
			f := pr.In.Context().Value(forwardKey{}).(forwarding)
			scheme := "http"
			if f.route.TLS {
				scheme = "https"
			}
			pr.SetURL(&url.URL{Scheme: scheme, Host: f.route.Addr})
			pr.SetXForwarded()
			pr.Out.Header.Set(forwardedHeader, s.ops.NodeID())
			// This node checked the origin against itself (checkOrigin);
			// the next one would take its own for the page's and refuse it.
			pr.Out.Header.Del("Origin")
			// Both nodes log the request under one id.
			pr.Out.Header.Set(requestIDHeader, f.requestID)
		},
		// Streams (a read, events) go out as they come.
		FlushInterval: -1,
		ModifyResponse: func(res *http.Response) error {
			s.ops.NoteForward(true)
			res.Header.Del(requestIDHeader) // the same id, which this node's answer has already
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			s.ops.NoteForward(false)
			ending := strings.HasSuffix(r.URL.Path, "/transactions/commit") || strings.HasSuffix(r.URL.Path, "/transactions/rollback")
			route := r.Context().Value(forwardKey{}).(forwarding).route
			s.fail(w, r, s.ops.Unreachable(r.Context(), txRef(r), ending, route, err))
		},
	}
}

// forward relays r to the node that holds its transaction, if another
// node does; it reports whether it did.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, requestID string) bool {
	route, ok, err := s.ops.ForwardTo(r.Context(), txRef(r), r.Header.Get(forwardedHeader) != "")
	if err != nil {
		s.fail(w, r, err)
		return true
	}
	if !ok {
		return false
	}
	ctx := context.WithValue(r.Context(), forwardKey{}, forwarding{route: route, requestID: requestID})
	s.forwarder.ServeHTTP(w, r.WithContext(ctx))
	return true
}

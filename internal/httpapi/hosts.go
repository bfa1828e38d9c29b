package httpapi

import (
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/foliodb/folio/internal/apierror"
)

// What keeps a web page from reaching the server through DNS rebinding: a
// page of evil.example points its name at the server's address (127.0.0.1),
// and its visitor's browser then takes the server for evil.example's own,
// sending Origin and Host of evil.example and reading the answers. Only the
// Host header tells such a request: it names a host that is not the
// server's. An IP address cannot be rebound, nor localhost (browsers
// resolve it, and names under it, to loopback themselves).

// Hosts says which names a request's Host header may give.
type Hosts struct {
	// Names are the host names the server is reached by besides IP
	// addresses and localhost: its listen and advertise addresses' hosts
	// and --allowed-hosts. "*" lets any name through.
	Names []string
	// Every: every request that names another host is refused, not only a
	// browser's (one with an Origin, checkOrigin): where no client has a
	// reason to name another (a server listening on loopback only), or the
	// operator listed the names (--allowed-hosts).
	Every bool
}

// Known reports whether a Host header (host, or host:port) names the
// server. An empty one (HTTP/1.0) is no browser's.
func (h Hosts) Known(hostport string) bool {
	host := hostport
	if name, _, err := net.SplitHostPort(hostport); err == nil {
		host = name
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	return host == "" || host == "localhost" || strings.HasSuffix(host, ".localhost") ||
		slices.Contains(h.Names, "*") || slices.ContainsFunc(h.Names, func(name string) bool { return strings.EqualFold(name, host) })
}

// Refuses reports whether a request with this Host header is refused
// whether it came from a browser or not.
func (h Hosts) Refuses(hostport string) bool {
	return h.Every && !h.Known(hostport)
}

// checkHost refuses a request whose Host is not the server's where every
// such request is refused (Hosts.Every).
func (s *Server) checkHost(r *http.Request) error {
	if s.cfg.Hosts.Refuses(r.Host) {
		return unknownHost(r.Host)
	}
	return nil
}

func unknownHost(hostport string) error {
	host := hostport
	if name, _, err := net.SplitHostPort(hostport); err == nil {
		host = name
	}
	return apierror.Errorf(apierror.PermissionDenied, "request refused: the host '%s' is not a name of this server "+
		"(an IP address, localhost, the host of its listen or advertise address, or one --allowed-hosts lists)", host)
}

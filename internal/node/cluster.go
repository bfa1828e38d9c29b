package node

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"

	"github.com/foliodb/folio/internal/httpapi"
)

// Several nodes on one PostgreSQL database: each registers its id and the
// address the others reach it at (internal/cluster), and relays to the
// node that holds a transaction the requests of it that reach it.

// defaultNodeID is a node's id when none is configured: the host name and
// the API's port, so that two nodes on one host differ.
func defaultNodeID(addr string) string {
	host, _ := os.Hostname()
	if host == "" {
		host = "folio"
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" || port == "0" {
		// A port picked at start: no name to derive, so a random one.
		var b [3]byte
		rand.Read(b[:])
		port = hex.EncodeToString(b[:])
	}
	return host + "-" + port
}

// join registers the node, once its API listens, where the store is
// shared. A node whose id another live node holds does not start.
func (n *Node) join(ctx context.Context) error {
	if n.cluster == nil {
		return nil
	}
	addr, err := n.advertiseAddr()
	if err != nil {
		return err
	}
	if err := n.cluster.Join(ctx, n.cfg.Sessions.Origin, addr, n.tls != nil); err != nil {
		return err
	}
	n.log.Info("joined the nodes on this database", "node_id", n.cfg.Sessions.Origin, "advertise_addr", addr)
	return nil
}

// advertiseAddr is where the other nodes reach this one: AdvertiseAddr, or
// the address listened on, with the host name in place of an unspecified
// host (":8081", "0.0.0.0:8081").
func (n *Node) advertiseAddr() (string, error) {
	if n.cfg.AdvertiseAddr != "" {
		if _, _, err := net.SplitHostPort(n.cfg.AdvertiseAddr); err != nil {
			return "", fmt.Errorf("advertise address %q: want host:port: %w", n.cfg.AdvertiseAddr, err)
		}
		return n.cfg.AdvertiseAddr, nil
	}
	tcp := n.ln.Addr().(*net.TCPAddr)
	if !tcp.IP.IsUnspecified() {
		return tcp.String(), nil
	}
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("the API listens on every interface and the host name is unknown (%w): set the advertise address", err)
	}
	return net.JoinHostPort(host, fmt.Sprint(tcp.Port)), nil
}

// forwardTLS is the TLS configuration to reach other nodes that serve
// TLS: the system's roots and this node's own certificate, so that nodes
// sharing a self-signed certificate trust each other.
func (n *Node) forwardTLS() *tls.Config {
	if n.tls == nil {
		return nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	for _, c := range n.tls.Certificates {
		for _, der := range c.Certificate {
			if cert, err := x509.ParseCertificate(der); err == nil {
				pool.AddCert(cert)
			}
		}
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// hosts are the names the API answers requests for (httpapi.Hosts).
func (n *Node) hosts() httpapi.Hosts { return n.hostsOf(n.ln, n.cfg.Addr) }

// hostsOf are the names a listener of the node's (at addr, listening on
// ln) answers requests for: the hosts of addr, of the API's listen and
// advertise addresses, and AllowedHosts. It refuses every request that
// names another host when it listens on loopback only, where a client has
// no reason to (and a page that rebound its own name to 127.0.0.1 does),
// or when the operator listed the names.
func (n *Node) hostsOf(ln net.Listener, addr string) httpapi.Hosts {
	names := slices.Clone(n.cfg.AllowedHosts)
	for _, a := range []string{addr, n.cfg.Addr} {
		if host, _, err := net.SplitHostPort(a); err == nil && host != "" {
			names = append(names, host)
		}
	}
	if advertised, err := n.advertiseAddr(); err == nil {
		host, _, _ := net.SplitHostPort(advertised)
		names = append(names, host)
	}
	return httpapi.Hosts{Names: names, Every: !beyondLoopback(ln.Addr()) || len(n.cfg.AllowedHosts) > 0}
}

// checkingHost serves h on a listener of the node's own (the profiler's,
// the metrics') but for the requests hosts refuses, as the API refuses
// them: a page rebound to loopback would read the profiles (the command
// line among them) and the metrics too.
func checkingHost(hosts httpapi.Hosts, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hosts.Refuses(r.Host) {
			http.Error(w, "request refused: the host is not a name of this server (see --allowed-hosts)", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

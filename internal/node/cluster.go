package node

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"net"
	"os"
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

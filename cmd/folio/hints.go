package main

import (
	"crypto/tls"
	"errors"
	"net"
	"net/url"
	"time"

	"github.com/foliodb/folio/client"
)

// hint is a line for the person who ran a command whose error has a
// common cause they can fix: "" when there is none to give.
func hint(err error) string {
	var apiErr *client.Error
	if errors.As(err, &apiErr) && apiErr.Code == client.Unauthenticated {
		return "hint: this server asks for credentials: an application's --client-id and --client-secret " +
			"(or FOLIO_CLIENT_ID and FOLIO_CLIENT_SECRET), or --token; the owner's are in the owner file the " +
			"server wrote at its first start with --auth (<data-dir>/owner.json)"
	}
	// A request that got no answer names the URL it went to.
	var reqErr *url.Error
	if errors.As(err, &reqErr) {
		if u, perr := url.Parse(reqErr.URL); perr == nil && u.Scheme == "http" && speaksTLS(u.Host) {
			return "hint: this server speaks TLS: use https://" + u.Host +
				" (and --ca-cert for a certificate of your own)"
		}
	}
	return ""
}

// speaksTLS tells whether the server at host (an http:// URL's) completes
// a TLS handshake: a plain request to a TLS port ends without an answer.
func speaksTLS(host string) bool {
	if host == "" {
		return false
	}
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(host, "80")
	}
	d := &net.Dialer{Timeout: 2 * time.Second}
	// Only the handshake is wanted, not trust: nothing is sent over it.
	conn, err := tls.DialWithDialer(d, "tcp", host, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

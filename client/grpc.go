package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// grpcTransport carries calls over gRPC: HTTP/2 requests whose bodies are
// length-prefixed protobuf messages and whose status comes in trailers
// (the gRPC over HTTP/2 protocol), made with net/http, so that the client
// keeps to the standard library.
type grpcTransport struct {
	base string // "http://host:port" (cleartext HTTP/2) or "https://host:port"
	hc   *http.Client
}

// maxMessage bounds a message the server answers: a page of search hits
// or a document, with room to spare above the API's 16 MiB body limit.
const maxMessage = 64 << 20

func newGRPCTransport(host string, useTLS bool, tlsConf *tls.Config) *grpcTransport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Protocols = new(http.Protocols)
	base := "http://" + host
	if useTLS {
		base = "https://" + host
		tr.Protocols.SetHTTP2(true)
		if tlsConf != nil {
			tr.TLSClientConfig = tlsConf.Clone()
		}
	} else {
		tr.Protocols.SetUnencryptedHTTP2(true) // HTTP/2 with prior knowledge, as gRPC speaks it without TLS
	}
	// A stream may carry nothing for hours: pings find a connection that
	// died without a word, so that the stream can resume. Not more often
	// than gRPC servers allow by default (5 minutes): they hang up on a
	// client that pings more.
	tr.HTTP2 = &http.HTTP2Config{SendPingTimeout: 6 * time.Minute, PingTimeout: 20 * time.Second}
	return &grpcTransport{base: base, hc: &http.Client{Transport: tr}}
}

func (t *grpcTransport) close() { t.hc.CloseIdleConnections() }

func (t *grpcTransport) exchange(ctx context.Context, r *request, token string, each func(json.RawMessage) bool) error {
	if r.route.rpc == "" {
		return &Error{Code: Unimplemented, Message: fmt.Sprintf("%s has no gRPC call: make it over HTTP (an http:// or https:// URL)", r.route.path)}
	}
	var body []byte
	if r.body != nil {
		var err error
		if body, err = json.Marshal(r.body); err != nil {
			return fmt.Errorf("%s: encode the request: %w", r.route.rpc, err)
		}
	}
	msg, err := r.route.req.encode(body, r.params.values())
	if err != nil {
		return fmt.Errorf("%s: encode the request: %w", r.route.rpc, err)
	}
	md := map[string]string{}
	if token != "" {
		md["Authorization"] = "Bearer " + token
	}
	if r.tx != nil {
		md["Tigris-Tx-Id"], md["Tigris-Tx-Origin"] = r.tx.id, r.tx.origin
	}
	res, err := t.post(ctx, r.route.rpc, msg, md)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if r.opened != nil {
		r.opened()
	}
	wanted := true
	for {
		m, err := readMessage(res.Body)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", r.route.rpc, err)
		}
		if !wanted {
			continue
		}
		answer, err := r.route.res.decode(m)
		if err != nil {
			return fmt.Errorf("%s: decode the answer: %w", r.route.rpc, err)
		}
		if !each(answer) {
			if r.route.stream {
				return nil // closing the body cancels the call
			}
			// A call's one answer: read on to its status, so that the
			// call ends as it should rather than cancelled.
			wanted = false
		}
	}
	// The status comes in the trailers, once the messages are read.
	if res.Trailer.Get("Grpc-Status") == "" {
		return fmt.Errorf("%s: the answer ended without a status", r.route.rpc)
	}
	return statusError(res.Trailer)
}

// post sends one call with its request message and metadata, and returns
// the response once its headers have come; a call that failed before it
// answered anything (a trailers-only response) is its error.
func (t *grpcTransport) post(ctx context.Context, rpc string, msg []byte, md map[string]string) (*http.Response, error) {
	frame := make([]byte, 5, 5+len(msg)) // uncompressed, then the length
	binary.BigEndian.PutUint32(frame[1:], uint32(len(msg)))
	frame = append(frame, msg...)
	req, err := http.NewRequestWithContext(ctx, "POST", t.base+rpc, bytes.NewReader(frame))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	for k, v := range md {
		req.Header.Set(k, v)
	}
	res, err := t.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/grpc") {
		res.Body.Close()
		return nil, &Error{Code: Unknown, Message: fmt.Sprintf("%s: not a gRPC answer: %s, content type %q", rpc, res.Status, res.Header.Get("Content-Type"))}
	}
	if res.Header.Get("Grpc-Status") != "" {
		res.Body.Close()
		if err := statusError(res.Header); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: the server answered no message", rpc)
	}
	return res, nil
}

// readMessage reads one length-prefixed message; io.EOF when the
// messages end.
func readMessage(r io.Reader) ([]byte, error) {
	var prefix [5]byte
	if _, err := io.ReadFull(r, prefix[:]); err != nil {
		if err == io.ErrUnexpectedEOF {
			err = errors.New("a message cut short")
		}
		return nil, err
	}
	if prefix[0] != 0 {
		return nil, errors.New("a compressed message (the client asks for none)")
	}
	n := binary.BigEndian.Uint32(prefix[1:])
	if n > maxMessage {
		return nil, fmt.Errorf("a message of %d bytes, more than the client takes (%d)", n, maxMessage)
	}
	m := make([]byte, n)
	if _, err := io.ReadFull(r, m); err != nil {
		return nil, fmt.Errorf("a message cut short: %w", err)
	}
	return m, nil
}

func (t *grpcTransport) accessToken(ctx context.Context, id, secret string) (string, time.Duration, error) {
	var tok struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	const clientCredentials = 1 // the GrantType enum's
	body := map[string]any{"grant_type": clientCredentials, "client_id": id, "client_secret": secret}
	var decodeErr error
	err := t.exchange(ctx, &request{route: routeAccessToken, body: body}, "", func(answer json.RawMessage) bool {
		decodeErr = json.Unmarshal(answer, &tok)
		return false
	})
	if err == nil {
		err = decodeErr
	}
	return tok.AccessToken, time.Duration(tok.ExpiresIn) * time.Second, err
}

// values are the parameters as members of a gRPC request.
func (p params) values() map[string]string {
	v := map[string]string{}
	if p.db != "" {
		v["db"] = p.db
	}
	if p.collection != "" {
		v["collection"] = p.collection
	}
	if p.name != "" {
		v["name"] = p.name
	}
	if p.namespaceID != "" {
		v["namespace_id"] = p.namespaceID
	}
	return v
}

// grpcCodes are gRPC's status codes by number, named as the API names
// them: the API's codes up to UNAUTHENTICATED are gRPC's own.
var grpcCodes = []Code{"OK", "CANCELLED", Unknown, InvalidArgument, DeadlineExceeded, NotFound, AlreadyExists,
	PermissionDenied, ResourceExhausted, FailedPrecondition, Aborted, OutOfRange, Unimplemented, Internal,
	Unavailable, "DATA_LOSS", Unauthenticated}

// statusError is the API's error of a call's status (nil if OK): the
// code the ErrorInfo detail names (the server's API code, also those
// gRPC lacks), else the gRPC code's; the message; the RetryInfo's delay.
// HTTPStatus stays 0.
func statusError(md http.Header) error {
	n, err := strconv.Atoi(md.Get("Grpc-Status"))
	if err != nil {
		return fmt.Errorf("a gRPC status that is not a number: %q", md.Get("Grpc-Status"))
	}
	if n == 0 {
		return nil
	}
	e := &Error{Code: Unknown}
	if n > 0 && n < len(grpcCodes) {
		e.Code = grpcCodes[n]
	}
	e.Message = md.Get("Grpc-Message") // percent-encoded where not printable ASCII
	if m, err := url.PathUnescape(e.Message); err == nil {
		e.Message = m
	}
	if bin := md.Get("Grpc-Status-Details-Bin"); bin != "" {
		readDetails(e, bin)
	}
	return e
}

// readDetails reads what it knows of a status's details into e; details
// it cannot read are left out, as the code and message are enough.
func readDetails(e *Error, bin string) {
	b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(bin, "="))
	if err != nil {
		return
	}
	st, err := shapeStatus.decode(b)
	if err != nil {
		return
	}
	var status struct {
		Details []struct {
			TypeURL string `json:"type_url"`
			Value   []byte `json:"value"`
		} `json:"details"`
	}
	if json.Unmarshal(st, &status) != nil {
		return
	}
	for _, d := range status.Details {
		switch d.TypeURL[strings.LastIndex(d.TypeURL, "/")+1:] {
		case "google.rpc.ErrorInfo":
			var info struct{ Reason string }
			if j, err := shapeErrorInfo.decode(d.Value); err == nil && json.Unmarshal(j, &info) == nil && info.Reason != "" {
				e.Code = Code(info.Reason)
			}
		case "google.rpc.RetryInfo":
			var retry struct {
				Delay struct {
					Seconds int64 `json:"seconds"`
					Nanos   int64 `json:"nanos"`
				} `json:"retry_delay"`
			}
			if j, err := shapeRetryInfo.decode(d.Value); err == nil && json.Unmarshal(j, &retry) == nil {
				e.RetryDelay = time.Duration(retry.Delay.Seconds)*time.Second + time.Duration(retry.Delay.Nanos)
			}
		}
	}
}

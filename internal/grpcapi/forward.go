package grpcapi

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/foliodb/folio/internal/ops"
)

// Forwarding over gRPC: a call of a transaction that another live node
// holds is relayed there (ops.ForwardTo), unary and streaming alike, as the
// original forwarded its calls; the answer (messages, status) comes back
// unchanged.

// mdForwardedBy marks a call relayed by another node, whose id it holds:
// such a call is not relayed again.
const mdForwardedBy = "folio-forwarded-by"

// Forwarder keeps one client connection per node that calls are relayed
// to. The node owns it: one for its gRPC servers, closed at shutdown.
type Forwarder struct {
	tls *tls.Config // for nodes that serve TLS; nil: the system's roots

	mu    sync.Mutex
	conns map[string]*grpc.ClientConn // by "tls|addr"
}

// NewForwarder returns a Forwarder that reaches nodes serving TLS with
// tlsConfig.
func NewForwarder(tlsConfig *tls.Config) *Forwarder {
	return &Forwarder{tls: tlsConfig, conns: map[string]*grpc.ClientConn{}}
}

func (f *Forwarder) conn(r ops.Route) (*grpc.ClientConn, error) {
	key := fmt.Sprint(r.TLS, "|", r.Addr)
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.conns[key]; c != nil {
		return c, nil
	}
	creds := insecure.NewCredentials()
	if r.TLS {
		creds = credentials.NewTLS(f.tls)
	}
	c, err := grpc.NewClient(r.Addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return nil, err
	}
	f.conns[key] = c
	return c, nil
}

// Close closes the connections.
func (f *Forwarder) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, c := range f.conns {
		c.Close()
		delete(f.conns, k)
	}
}

// route reports where a call must be relayed, if anywhere.
func (s *Server) route(ctx context.Context) (ops.Route, bool, error) {
	if s.forwarder == nil {
		return ops.Route{}, false, nil
	}
	_, forwarded := mdFirst(ctx, mdForwardedBy)
	return s.ops.ForwardTo(ctx, txRef(ctx), forwarded)
}

// outgoing is the relayed call's context: the client's metadata (its
// token, its transaction), marked as forwarded, under the request's id.
func (s *Server) outgoing(ctx context.Context) context.Context {
	md, _ := metadata.FromIncomingContext(ctx)
	out := metadata.MD{}
	for k, v := range md {
		// The transport's own entries are the new call's to set.
		if strings.HasPrefix(k, ":") || strings.HasPrefix(k, "grpc-") && !strings.HasPrefix(k, gatewayMDPrefix) || k == "content-type" || k == "user-agent" || k == "te" {
			continue
		}
		out[k] = v
	}
	out.Set(mdForwardedBy, s.ops.NodeID())
	out.Set(requestIDKey, ops.RequestID(ctx))
	return metadata.NewOutgoingContext(ctx, out)
}

// forwardUnary relays a unary call, if another node must serve it.
func (s *Server) forwardUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	r, ok, err := s.route(ctx)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	if !ok {
		return handler(ctx, req)
	}
	out := relayed()
	conn, err := s.forwarder.conn(r)
	if err != nil {
		return nil, s.unreachable(ctx, r, err)
	}
	var header metadata.MD
	err = conn.Invoke(s.outgoing(ctx), info.FullMethod, req, out, grpc.Header(&header))
	if relayFailed(err) {
		return nil, s.unreachable(ctx, r, err)
	}
	s.ops.NoteForward(true)
	header.Delete(requestIDKey)
	grpc.SetHeader(ctx, header)
	if err != nil {
		s.ops.NoteFailure(ctx, apiCodeOf(grpcstatus.Convert(err)))
		return nil, err
	}
	return out, nil
}

// forwardStream relays a server-streaming call (read, search, events,
// subscribe), if another node must serve it.
func (s *Server) forwardStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx := ss.Context()
	r, ok, err := s.route(ctx)
	if err != nil {
		return s.fail(ctx, err)
	}
	if !ok {
		return handler(srv, ss)
	}
	in := relayed()
	if err := ss.RecvMsg(in); err != nil {
		return err
	}
	conn, err := s.forwarder.conn(r)
	if err != nil {
		return s.unreachable(ctx, r, err)
	}
	cs, err := conn.NewStream(s.outgoing(ctx), &grpc.StreamDesc{ServerStreams: true}, info.FullMethod)
	if err == nil {
		if err = cs.SendMsg(in); err == nil {
			err = cs.CloseSend()
		}
	}
	var header metadata.MD
	if err == nil {
		header, err = cs.Header()
	}
	if relayFailed(err) {
		return s.unreachable(ctx, r, err)
	}
	s.ops.NoteForward(true)
	header.Delete(requestIDKey)
	ss.SetHeader(header)
	for err == nil {
		msg := relayed()
		if err = cs.RecvMsg(msg); err == nil {
			err = ss.SendMsg(msg)
		}
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	s.ops.NoteFailure(ctx, apiCodeOf(grpcstatus.Convert(err)))
	return err
}

// relayFailed reports whether a relayed call failed to reach the other
// node, rather than being answered by it with an error.
func relayFailed(err error) bool {
	if err == nil {
		return false
	}
	// A Folio node's errors carry an ErrorInfo (toGRPC); gRPC's own for a
	// connection that failed carry nothing.
	st, ok := grpcstatus.FromError(err)
	return !ok || st.Code() == codes.Unavailable && len(st.Details()) == 0
}

func (s *Server) unreachable(ctx context.Context, r ops.Route, err error) error {
	s.ops.NoteForward(false)
	method, _ := grpc.Method(ctx)
	ending := strings.HasSuffix(method, "/CommitTransaction") || strings.HasSuffix(method, "/RollbackTransaction")
	return s.fail(ctx, s.ops.Unreachable(ctx, txRef(ctx), ending, r, err))
}

// relayed is a message to relay a call's messages in, whatever their
// type: a message without fields, which keeps every field it decodes as
// an unknown field and encodes them again byte for byte. The answer is
// relayed as the other node gave it, whichever message that was (a
// method may answer each API generation in its own: DescribeDatabase).
func relayed() proto.Message { return new(emptypb.Empty) }

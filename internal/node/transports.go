package node

import (
	"context"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	"github.com/foliodb/folio/internal/grpcapi"
)

// maxStreamsPerConnection bounds the calls one HTTP/2 connection (gRPC or
// h2c) may have open at once, on either listener: with the connection cap,
// it bounds the calls of the whole node.
const maxStreamsPerConnection = 250

// sniffTimeout bounds how long a new connection may take to show its
// protocol (see protocolMux), as the HTTP server's ReadHeaderTimeout bounds
// the headers of a request.
const sniffTimeout = 10 * time.Second

// grpcServing is a gRPC server serving a listener.
type grpcServing struct {
	srv    *grpc.Server
	ln     net.Listener
	served chan struct{} // closed when Serve has returned
}

// serveGRPCOn serves the gRPC API on ln; a failure of ln (named what)
// is the node's.
func (n *Node) serveGRPCOn(ln net.Listener, what string) *grpcServing {
	g := &grpcServing{srv: n.newGRPCServer(), ln: ln, served: make(chan struct{})}
	go func() {
		defer close(g.served)
		if err := g.srv.Serve(ln); err != nil {
			n.failures.fail(fmt.Errorf("%s: %w", what, err))
		}
	}()
	return g
}

// newGRPCServer returns a gRPC server with the API registered and the
// HTTP API's limits: a request message as large as an HTTP body at most
// and arriving within the body timeout, each message of a stream read by
// the client within the write timeout (grpcapi), at most maxStreamsPerConnection calls per connection, a new
// connection's handshake within sniffTimeout, idle connections closed as
// the HTTP server closes them. Deadlines are the operations' own (the
// request timeout), within any the client sets.
func (n *Node) newGRPCServer() *grpc.Server {
	api := grpcapi.New(grpcapi.Config{Ops: n.ops, Logger: n.log, WriteTimeout: n.cfg.WriteTimeout, BodyTimeout: n.cfg.BodyTimeout, Forwarder: n.forwarder})
	g := grpc.NewServer(append(api.ServerOptions(),
		grpc.MaxRecvMsgSize(int(n.cfg.MaxBodyBytes)),
		grpc.MaxConcurrentStreams(maxStreamsPerConnection),
		grpc.ConnectionTimeout(sniffTimeout),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: idleTimeout}),
	)...)
	api.Register(g)
	return g
}

// stop stops the server gracefully (no new calls; those in flight finish,
// the streams having been ended) until ctx is done, then forcibly:
// GracefulStop alone would wait for good on a call that never ends.
func (g *grpcServing) stop(ctx context.Context, n *Node) {
	n.endStreams()
	stopped := make(chan struct{})
	go func() {
		g.srv.GracefulStop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-ctx.Done():
		n.log.Warn("gRPC calls still running at the shutdown timeout were cut off", "addr", g.ln.Addr().String())
		g.srv.Stop()
		<-stopped
	}
	<-g.served
}

// serveGRPC serves the gRPC API alone on a listener of its own: for
// deployments that keep gRPC's traffic apart from HTTP's (docs/operations.md).
// The same connection cap applies, counted on its own.
func (n *Node) serveGRPC(addr string) error {
	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	n.grpcOwn = n.serveGRPCOn(n.withTLS(newLimitListener(tcp, n.cfg.MaxConnections, n.log)), "gRPC listener")
	n.log.Info("folio gRPC listening", "addr", tcp.Addr().String())
	return nil
}

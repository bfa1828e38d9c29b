package node

import (
	"net"
	"net/http"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	"github.com/foliodb/folio/internal/grpcapi"
)

// maxStreamsPerConnection bounds the calls one HTTP/2 connection (gRPC or
// h2c) may have open at once, on either listener: with the connection cap,
// it bounds the calls of the whole node.
const maxStreamsPerConnection = 250

// byProtocol sends gRPC calls (HTTP/2 requests whose content type is
// application/grpc, with or without a codec suffix such as +proto) to
// grpcHandler and everything else to the HTTP API.
func byProtocol(api, grpcHandler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && isGRPC(r.Header.Get("Content-Type")) {
			grpcHandler.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

func isGRPC(contentType string) bool {
	rest, ok := strings.CutPrefix(contentType, "application/grpc")
	return ok && (rest == "" || rest[0] == '+' || rest[0] == ';')
}

// newGRPCServer returns a gRPC server with the API registered and the
// node's limits: a request message as large as an HTTP body at most.
// Deadlines are the operations' own (the request timeout), within any
// the client sets.
func (n *Node) newGRPCServer() *grpc.Server {
	api := grpcapi.New(grpcapi.Config{Ops: n.ops, Logger: n.log})
	g := grpc.NewServer(append(api.ServerOptions(),
		grpc.MaxRecvMsgSize(int(n.cfg.MaxBodyBytes)),
		grpc.MaxConcurrentStreams(maxStreamsPerConnection),
		// Only the listener of its own uses these; through the HTTP
		// server, its timeouts apply.
		grpc.ConnectionTimeout(10*time.Second),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: 2 * time.Minute}),
	)...)
	api.Register(g)
	return g
}

// serveGRPC serves the gRPC API alone on a listener of its own with gRPC's
// native transport: for deployments that keep gRPC's traffic apart from
// HTTP's, or want its lower cost per call (docs/benchmarks.md). The same
// connection cap applies, counted on its own.
func (n *Node) serveGRPC(addr string) error {
	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	n.grpcLn = newLimitListener(tcp, n.cfg.MaxConnections, n.log)
	n.grpcNative = n.newGRPCServer()
	n.grpcServed = make(chan struct{})
	go func() {
		defer close(n.grpcServed)
		n.grpcServeErr = n.grpcNative.Serve(n.grpcLn)
	}()
	n.log.Info("folio gRPC listening", "addr", n.grpcLn.Addr().String())
	return nil
}

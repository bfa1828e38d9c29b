package node

import "testing"

func TestIsGRPC(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/grpc":             true,
		"application/grpc+proto":       true,
		"application/grpc;charset=x":   true,
		"application/grpc-web":         false, // a browser protocol Folio does not serve
		"application/grpc-web+proto":   false,
		"application/json":             false,
		"":                             false,
		"application/grpcx":            false,
		"text/plain; application/grpc": false,
	} {
		if got := isGRPC(ct); got != want {
			t.Errorf("isGRPC(%q) = %v, want %v", ct, got, want)
		}
	}
}

package node

import (
	"net"
	"testing"
)

func TestBeyondLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:8081", false},
		{"127.0.0.2:8081", false},
		{"[::1]:8081", false},
		{"0.0.0.0:8081", true},
		{"[::]:8081", true},
		{"10.1.2.3:8081", true},
		{"[2001:db8::1]:8081", true},
	} {
		a, err := net.ResolveTCPAddr("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := beyondLoopback(a); got != tc.want {
			t.Errorf("beyondLoopback(%s) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}

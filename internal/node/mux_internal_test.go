package node

import (
	"io"
	"strings"
	"testing"

	"golang.org/x/net/http2"
)

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

// The filter passes the preface and every frame through but the first
// SETTINGS acknowledgement, whichever read sizes the server uses.
func TestAckFilter(t *testing.T) {
	frame := func(typ, flags byte, payload string) string {
		n := len(payload)
		return string([]byte{byte(n >> 16), byte(n >> 8), byte(n), typ, flags, 0, 0, 0, 1}) + payload
	}
	settings := frame(0x4, 0, "\x00\x03\x00\x00\x00\x64")
	ack := frame(0x4, 0x1, "")
	headers := frame(0x1, 0x4, "headers-block")
	data := frame(0x0, 0x1, strings.Repeat("d", 300))
	in := http2.ClientPreface + settings + headers + ack + data + ack
	want := http2.ClientPreface + settings + headers + data + ack
	for _, size := range []int{1, 7, 9, 64, 4096} {
		f := &ackFilter{r: strings.NewReader(in), prefaceLeft: len(http2.ClientPreface)}
		var out []byte
		buf := make([]byte, size)
		for {
			n, err := f.Read(buf)
			out = append(out, buf[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if string(out) != want {
			t.Errorf("reads of %d: got %q, want %q", size, out, want)
		}
	}
}

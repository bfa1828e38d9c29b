//go:build !amd64

package vector

// useAVX2 is false off amd64: the portable kernels serve.
var useAVX2 = false

// usePrefetch: there is no prefetch instruction here (prefetch does nothing).
var usePrefetch = false

func dotAVX2(a, b *float32, n int) float32  { panic("vector: no AVX2 kernel on this architecture") }
func l2sqAVX2(a, b *float32, n int) float32 { panic("vector: no AVX2 kernel on this architecture") }

func prefetch(p *float32, n int) {}

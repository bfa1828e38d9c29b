package vector

import "golang.org/x/sys/cpu"

// useAVX2 picks the assembly kernels (distance_amd64.s: AVX2 and FMA, 32
// floats a step) where the CPU and the OS support them; a variable so
// that the tests can run both kernels on the same machine.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func dotAVX2(a, b *float32, n int) float32

//go:noescape
func l2sqAVX2(a, b *float32, n int) float32

package vector

import "golang.org/x/sys/cpu"

// useAVX2 picks the assembly kernels (distance_amd64.s: AVX2 and FMA, 32
// floats a step) where the CPU and the OS support them; a variable so
// that the tests can run both kernels on the same machine.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// usePrefetch has searchLayer ask for vectors before it reads them; a
// variable so that BenchmarkSearchPrefetch can compare both in one run.
var usePrefetch = true

//go:noescape
func dotAVX2(a, b *float32, n int) float32

//go:noescape
func l2sqAVX2(a, b *float32, n int) float32

// prefetch asks the CPU to bring the n floats at p into its caches
// (distance_amd64.s): searchLayer issues it for a node's unvisited
// neighbours before computing their distances, so that their loads,
// which miss the caches in an index larger than them, overlap.
//
//go:noescape
func prefetch(p *float32, n int)

package tensor

import "unsafe"

// hugeMin is the size from which MakeHuge asks for huge pages: below two
// of them there is no aligned 2 MiB page to gain.
const hugeMin = 4 << 20

// MakeHuge returns a zeroed slice of n floats that the kernel is asked to
// back with 2 MiB transparent huge pages when it is large enough. Use it
// for big buffers that are filled a little at a time (KV caches, decoder
// rings): with 4 KiB pages every first write to fresh memory faults, which
// costs about 4 ms per MiB on virtual machines, in the middle of a request.
// Failure only means the advice is not taken; the memory is ordinary Go
// memory either way.
func MakeHuge(n int) []float32 {
	x := make([]float32, n)
	if n*4 >= hugeMin {
		adviseHuge(x)
	}
	return x
}

// MakeHuge16 is MakeHuge for n 16-bit values (bfloat16 rings).
func MakeHuge16(n int) []uint16 {
	x := MakeHuge((n + 1) / 2)
	if len(x) == 0 {
		return make([]uint16, n)
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&x[0])), n)
}

// MakeHuge8 is MakeHuge for n bytes (int8 KV caches).
func MakeHuge8(n int) []int8 {
	x := MakeHuge((n + 3) / 4)
	if len(x) == 0 {
		return make([]int8, n)
	}
	return unsafe.Slice((*int8)(unsafe.Pointer(&x[0])), n)
}

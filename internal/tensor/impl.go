package tensor

// impl names one set of kernels. The best one the CPU supports is chosen at
// start-up; tests switch between them to check each against the portable one.
type impl int

const (
	implGeneric impl = iota // portable Go
	implAVX2                // amd64 AVX2 + FMA
	implAVX512              // amd64 AVX-512 F/BW/VL/DQ
)

func (i impl) String() string {
	switch i {
	case implAVX2:
		return "avx2"
	case implAVX512:
		return "avx512"
	}
	return "generic"
}

// active is the kernel set in use. It is only changed by tests (and never
// while kernels run).
var active = detectImpl()

// Kernels returns the name of the kernel set in use: "avx512", "avx2" or
// "generic" (pure Go, also selected by the purego build tag).
func Kernels() string { return active.String() }

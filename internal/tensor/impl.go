package tensor

import "fmt"

// impl names one set of kernels. The best one the CPU supports is chosen at
// start-up; tests switch between them to check each against the portable one.
type impl int

const (
	implGeneric impl = iota // portable Go
	implAVX2                // amd64 AVX2 + FMA
	implAVX512              // amd64 AVX-512 F/BW/VL/DQ
	implNEON                // arm64 Advanced SIMD (every arm64 CPU)
)

// allImpls lists every kernel set of every architecture, generic first;
// implAvailable says which of them this CPU and build run.
var allImpls = []impl{implGeneric, implAVX2, implAVX512, implNEON}

func (i impl) String() string {
	switch i {
	case implAVX2:
		return "avx2"
	case implAVX512:
		return "avx512"
	case implNEON:
		return "neon"
	}
	return "generic"
}

// active is the kernel set in use. It is only changed by tests (and never
// while kernels run).
var active = detectImpl()

// Kernels returns the name of the kernel set in use: "avx512" or "avx2"
// (amd64), "neon" (arm64), or "generic" (pure Go, also selected by the
// purego build tag).
func Kernels() string { return active.String() }

// SetKernels chooses the kernel set by name ("avx512", "avx2", "neon",
// "generic") instead of the best one the CPU supports: to measure what a smaller CPU
// would run, or to rule the SIMD code out when looking into a result. It
// must be called before any matrix is packed or any kernel runs, and fails
// for a set this CPU (or build) cannot run. Every set computes the same
// values; only speed changes (and which of the bfloat16 and int8 product
// modes are available: see HasBF16Dot, HasInt8Dot).
func SetKernels(name string) error {
	for _, i := range allImpls {
		if i.String() != name {
			continue
		}
		if !implAvailable(i) {
			return fmt.Errorf("kernels %q: not supported by this CPU or build", name)
		}
		active = i
		return nil
	}
	return fmt.Errorf("kernels %q: want avx512, avx2, neon or generic", name)
}

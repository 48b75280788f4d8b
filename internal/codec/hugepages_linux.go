package codec

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// adviseHugePages asks the kernel to back x with transparent huge pages
// where it allows them (THP "madvise" mode, the common default). The rings
// of a new Decoder are tens of megabytes of fresh memory written a little
// per frame: with 4 KiB pages each first write faults, which costs ~100 ms
// of CPU per decoder on virtual machines; 2 MiB pages make that negligible.
// Failure only means the advice is not taken.
func adviseHugePages(x []float32) {
	if len(x) == 0 {
		return
	}
	_ = unix.Madvise(unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), len(x)*4), unix.MADV_HUGEPAGE)
}

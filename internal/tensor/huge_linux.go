package tensor

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// adviseHuge asks the kernel to back x with transparent huge pages where it
// allows them (THP "madvise" mode, the common default).
func adviseHuge(x []float32) {
	_ = unix.Madvise(unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), len(x)*4), unix.MADV_HUGEPAGE)
}

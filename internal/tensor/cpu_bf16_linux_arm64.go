//go:build gc && !purego

package tensor

import "golang.org/x/sys/unix"

// cpuHasBF16 reads FEAT_BF16 from the kernel's HWCAP2 word in the auxiliary
// vector: golang.org/x/sys/cpu (v0.50) has no flag for it.
func cpuHasBF16() bool {
	const (
		atHWCAP2   = 26      // AT_HWCAP2, linux/auxvec.h
		hwcap2BF16 = 1 << 14 // HWCAP2_BF16, arch/arm64/include/uapi/asm/hwcap.h
	)
	auxv, err := unix.Auxv()
	if err != nil {
		return false
	}
	for _, kv := range auxv {
		if kv[0] == atHWCAP2 {
			return kv[1]&hwcap2BF16 != 0
		}
	}
	return false
}

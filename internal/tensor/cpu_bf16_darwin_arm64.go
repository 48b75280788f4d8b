//go:build gc && !purego

package tensor

import "golang.org/x/sys/unix"

// cpuHasBF16 asks the kernel for FEAT_BF16 (Apple M2 and later): macOS
// reports the Arm features as hw.optional.arm.FEAT_* sysctls, absent on
// older systems and chips.
func cpuHasBF16() bool {
	v, err := unix.SysctlUint32("hw.optional.arm.FEAT_BF16")
	return err == nil && v == 1
}

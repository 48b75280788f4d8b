package bench

import "golang.org/x/sys/unix"

// cpuModel asks the kernel for the brand string ("Apple M2", say).
// x/sys/cpu detects the features; it has no bfloat16 flag on arm64, and
// the hw.optional.arm.FEAT_BF16 sysctl supplies it.
func cpuModel() (string, map[string]bool) {
	model, err := unix.Sysctl("machdep.cpu.brand_string")
	if err != nil {
		model = ""
	}
	flags := map[string]bool{}
	if v, err := unix.SysctlUint32("hw.optional.arm.FEAT_BF16"); err == nil && v == 1 {
		flags["bf16"] = true
	}
	return model, flags
}

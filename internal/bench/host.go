package bench

import (
	"bufio"
	"bytes"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/cpu"
)

// Host describes the machine a benchmark ran on, so that a report can be
// compared with the per-CPU plan in docs/performance.md.
type Host struct {
	OS   string `json:"os"`
	Arch string `json:"arch"`
	// CPU is the processor's model name where the system tells it
	// (/proc/cpuinfo on Linux, the machdep.cpu.brand_string sysctl on
	// macOS), else empty.
	CPU  string `json:"cpu,omitempty"`
	CPUs int    `json:"cpus"`
	// Kernels is the kernel set the matrix products ran on
	// (tensor.Kernels: "avx512", "avx2", "generic", ...).
	Kernels string `json:"kernels"`
	// Features lists the instruction-set extensions detected that the
	// kernels can use (whether or not this build uses them).
	Features []string `json:"features"`
}

// HostInfo describes this machine; kernels is the kernel set in use.
func HostInfo(kernels string) Host {
	model, extra := cpuModel()
	return Host{
		OS: runtime.GOOS, Arch: runtime.GOARCH, CPU: model, CPUs: runtime.NumCPU(),
		Kernels: kernels, Features: features(runtime.GOARCH, extra),
	}
}

// String is the one-line form of the human-readable header.
func (h Host) String() string {
	cpuName := h.CPU
	if cpuName == "" {
		cpuName = "unknown CPU"
	}
	feat := strings.Join(h.Features, " ")
	if feat == "" {
		feat = "none detected"
	}
	return h.OS + "/" + h.Arch + ", " + cpuName + " (" + strconv.Itoa(h.CPUs) + " CPUs), kernels " + h.Kernels + ", features " + feat
}

// features lists the extensions of arch that matter to the kernels, from
// golang.org/x/sys/cpu; extra holds feature names the system reported
// beside it (/proc/cpuinfo's arm64 "bf16", which x/sys/cpu does not have).
func features(arch string, extra map[string]bool) []string {
	var fs []struct {
		name string
		has  bool
	}
	switch arch {
	case "amd64", "386":
		x := cpu.X86
		fs = append(fs, []struct {
			name string
			has  bool
		}{
			{"avx2", x.HasAVX2}, {"fma", x.HasFMA},
			{"avx512f", x.HasAVX512F}, {"avx512bw", x.HasAVX512BW}, {"avx512vl", x.HasAVX512VL}, {"avx512dq", x.HasAVX512DQ},
			{"avx512_bf16", x.HasAVX512BF16}, {"avx512_vnni", x.HasAVX512VNNI}, {"avx_vnni", x.HasAVXVNNI},
		}...)
	case "arm64":
		a := cpu.ARM64
		fs = append(fs, []struct {
			name string
			has  bool
		}{
			{"asimd", a.HasASIMD}, {"asimddp", a.HasASIMDDP}, {"i8mm", a.HasI8MM}, {"bf16", extra["bf16"]},
			{"sve", a.HasSVE}, {"sve2", a.HasSVE2},
		}...)
	}
	out := []string{}
	for _, f := range fs {
		if f.has {
			out = append(out, f.name)
		}
	}
	return out
}

// armParts names the arm64 cores /proc/cpuinfo identifies only by
// implementer and part number (Arm Ltd's, 0x41), from Arm's technical
// reference manuals: the ones nanovox's performance plan covers.
var armParts = map[string]string{
	"0xd0b": "Arm Cortex-A76",  // Raspberry Pi 5
	"0xd0c": "Arm Neoverse N1", // AWS Graviton2
	"0xd40": "Arm Neoverse V1", // AWS Graviton3
	"0xd4f": "Arm Neoverse V2", // AWS Graviton4
	"0xd49": "Arm Neoverse N2",
}

// parseCPUInfo reads the processor's model and the feature flags from the
// text of /proc/cpuinfo: x86's "model name"; on arm64, which has none, the
// first core's implementer and part ("Arm Neoverse V1" where known, else
// "arm64 implementer 0x41 part 0xd40"), and the "Features" line.
func parseCPUInfo(data []byte) (model string, flags map[string]bool) {
	flags = map[string]bool{}
	var impl, part string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch key {
		case "model name", "Model Name":
			if model == "" {
				model = val
			}
		case "CPU implementer":
			if impl == "" {
				impl = val
			}
		case "CPU part":
			if part == "" {
				part = val
			}
		case "Features", "flags":
			if len(flags) == 0 {
				for _, f := range strings.Fields(val) {
					flags[f] = true
				}
			}
		}
	}
	if model == "" && part != "" {
		if name, ok := armParts[part]; ok && impl == "0x41" {
			model = name
		} else {
			model = "arm64 implementer " + impl + " part " + part
		}
	}
	return model, flags
}

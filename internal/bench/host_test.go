package bench

import (
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestParseCPUInfo(t *testing.T) {
	for _, tc := range []struct {
		name, text, model string
		flags             []string // some that must be set
	}{
		{"x86", "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9R14\nflags\t\t: fpu avx2 fma avx512_bf16\n\nprocessor\t: 1\nmodel name\t: other\n",
			"AMD EPYC 9R14", []string{"avx2", "avx512_bf16"}},
		{"graviton3", "processor\t: 0\nBogoMIPS\t: 2100.00\nFeatures\t: fp asimd asimddp sve i8mm bf16\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd40\n",
			"Arm Neoverse V1", []string{"asimd", "i8mm", "bf16"}},
		{"unknown arm", "Features\t: fp asimd\nCPU implementer\t: 0x61\nCPU part\t: 0x032\n",
			"arm64 implementer 0x61 part 0x032", []string{"asimd"}},
		{"arm part of another implementer", "CPU implementer\t: 0x51\nCPU part\t: 0xd40\n", "arm64 implementer 0x51 part 0xd40", nil},
		{"empty", "", "", nil},
		{"no colons", "garbage\nmore garbage", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model, flags := parseCPUInfo([]byte(tc.text))
			if model != tc.model {
				t.Errorf("model %q, want %q", model, tc.model)
			}
			for _, f := range tc.flags {
				if !flags[f] {
					t.Errorf("flag %q missing from %v", f, flags)
				}
			}
		})
	}
}

func TestFeatures(t *testing.T) {
	// x/sys/cpu reports nothing for another architecture, so only the
	// flags passed in can show there.
	other := "arm64"
	if runtime.GOARCH == "arm64" {
		other = "amd64"
	}
	got := features(other, map[string]bool{"bf16": true})
	want := []string{}
	if other == "arm64" {
		want = []string{"bf16"}
	}
	if !slices.Equal(got, want) {
		t.Errorf("features(%s) = %v, want %v", other, got, want)
	}
	if features("riscv64", nil) == nil {
		t.Error("features of an architecture without a list is nil; JSON would say null")
	}
}

func TestHostInfo(t *testing.T) {
	h := HostInfo("generic")
	if h.OS != runtime.GOOS || h.Arch != runtime.GOARCH || h.Kernels != "generic" || h.CPUs < 1 {
		t.Fatalf("HostInfo = %+v", h)
	}
	if runtime.GOOS == "linux" && h.CPU == "" {
		t.Error("no CPU model from /proc/cpuinfo")
	}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"os":`, `"arch":`, `"cpus":`, `"kernels":"generic"`, `"features":[`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("JSON %s lacks %s", b, k)
		}
	}
	if s := h.String(); !strings.Contains(s, runtime.GOOS+"/"+runtime.GOARCH) || !strings.Contains(s, "kernels generic") {
		t.Errorf("String() = %q", s)
	}
}

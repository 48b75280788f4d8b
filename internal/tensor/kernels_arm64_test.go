//go:build gc && !purego

package tensor

import "testing"

// TestNEONSelected guards the emulated arm64 runs (scripts/test-arm64): the
// impl-vs-generic tests only check the NEON kernels if the set is picked.
func TestNEONSelected(t *testing.T) {
	if detectImpl() != implNEON || !implAvailable(implNEON) {
		t.Fatalf("detectImpl() = %v on arm64, want neon", detectImpl())
	}
	found := false
	for _, i := range impls() {
		found = found || i == implNEON
	}
	if !found {
		t.Fatalf("impls() = %v lacks neon", impls())
	}
}

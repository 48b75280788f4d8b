//go:build !linux

package tensor

// adviseHuge is a no-op where transparent huge pages do not exist.
func adviseHuge(x []float32) {}

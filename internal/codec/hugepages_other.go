//go:build !linux

package codec

// adviseHugePages is a no-op where transparent huge pages do not exist.
func adviseHugePages(x []float32) {}

package engine

// SetFreeOSMemory replaces the call that returns memory to the system
// after an idle release, for tests; the returned func restores it.
func SetFreeOSMemory(f func()) (restore func()) {
	old := freeOSMemory
	freeOSMemory = f
	return func() { freeOSMemory = old }
}

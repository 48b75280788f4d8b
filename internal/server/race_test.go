//go:build race

package server

// raceEnabled scales the load test down under the race detector, which
// slows the model ~20×; the concurrency it checks is the same.
const raceEnabled = true

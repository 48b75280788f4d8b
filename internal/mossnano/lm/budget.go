package lm

import "time"

// phase is a part of a frame step, for frameBudget.
type phase int

const (
	phaseGlue   phase = iota // embeddings, bookkeeping, final norms
	phaseGlobal              // the global stack's forward
	phaseLocal               // the local transformer's 17 forwards and norms
	phaseHeads               // the text head's two rows and the 16 audio heads
	phaseSample              // repetition penalty and sampling
	numPhases
)

// frameBudget accumulates the wall time of a Stepper's steps by phase. It
// exists for the per-frame budget benchmark (docs/performance.md): a
// Stepper's budget is nil outside it, and every method is a no-op on a nil
// receiver, so a serving step pays one nil check per phase.
type frameBudget struct {
	last time.Time
	d    [numPhases]time.Duration
}

// start begins timing a step.
func (b *frameBudget) start() {
	if b != nil {
		b.last = time.Now()
	}
}

// lap charges the time since the last lap (or start) to p.
func (b *frameBudget) lap(p phase) {
	if b == nil {
		return
	}
	now := time.Now()
	b.d[p] += now.Sub(b.last)
	b.last = now
}

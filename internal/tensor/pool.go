package tensor

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The worker pool is process-wide: Threads()-1 goroutines that sleep on a
// channel and help whichever caller posts work. A parallel operation is cut
// into chunks that the caller and any idle helper grab with an atomic
// counter, so a busy helper (serving another caller) never delays anyone:
// the caller then simply does the chunks itself. How work is cut never
// changes results: chunks are disjoint sets of output elements.

// chunker is one parallel operation: run(c, scratch) does chunk c. scratch
// is private to the goroutine running the chunk, for kernels that need a
// temporary buffer.
type chunker interface {
	run(c int, scratch *[]float32)
}

type job struct {
	work chunker
	n    int32
	next atomic.Int32
	done atomic.Int32
	wake chan struct{}
	// refs counts the holders of the job: the caller and every post to
	// the helpers' channel, taken or not yet. The last to let go returns
	// the job to jobPool, so a helper that takes a post after the job has
	// finished (it then finds no chunk) never sees it reused.
	refs atomic.Int32
}

// jobPool recycles jobs and their wake channels, so that steady frames do
// not allocate two objects per parallel call.
var jobPool = sync.Pool{New: func() any { return &job{wake: make(chan struct{}, 1)} }}

// release drops one holder of j.
func (j *job) release() {
	if j.refs.Add(-1) == 0 {
		j.work = nil
		jobPool.Put(j)
	}
}

// runChunks runs chunks until none is left; the goroutine finishing the last
// chunk of the job signals wake exactly once.
func (j *job) runChunks(scratch *[]float32) {
	for {
		c := j.next.Add(1) - 1
		if c >= j.n {
			return
		}
		j.work.run(int(c), scratch)
		if j.done.Add(1) == j.n {
			j.wake <- struct{}{}
		}
	}
}

// PoolWorkerFunction is the function every helper goroutine of the pool
// runs. The helpers live for the whole process (blocked when idle), so tests
// that check for leaked goroutines should ignore them:
//
//	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction(tensor.PoolWorkerFunction))
//
// or call SetThreads(1) first, which stops them.
const PoolWorkerFunction = "github.com/nanovox/nanovox/internal/tensor.(*poolState).worker"

type poolState struct {
	threads int
	jobs    chan *job
	quit    chan struct{}
	wg      sync.WaitGroup
}

var (
	poolMu  sync.Mutex
	poolCur atomic.Pointer[poolState]
)

// SetThreads sets how many threads (the calling goroutine included) Linear
// and Attend may use; n < 1 means 1. The default is GOMAXPROCS at first use.
// Shrinking stops the surplus workers before SetThreads returns, so
// SetThreads(1) leaves no goroutine of this package running.
func SetThreads(n int) {
	n = max(n, 1)
	poolMu.Lock()
	defer poolMu.Unlock()
	if old := poolCur.Load(); old != nil {
		if old.threads == n {
			return
		}
		close(old.quit)
		old.wg.Wait()
	}
	st := &poolState{threads: n, jobs: make(chan *job, 4*n), quit: make(chan struct{})}
	for range n - 1 {
		st.wg.Add(1)
		go st.worker()
	}
	poolCur.Store(st)
}

// Threads returns the number of threads parallel operations may use.
func Threads() int { return pool().threads }

func pool() *poolState {
	if st := poolCur.Load(); st != nil {
		return st
	}
	poolMu.Lock()
	st := poolCur.Load()
	poolMu.Unlock()
	if st == nil {
		SetThreads(runtime.GOMAXPROCS(0))
		st = poolCur.Load()
	}
	return st
}

// spinFor is how long an idle helper keeps polling for work before it
// blocks. Waking a blocked goroutine on an idle core takes tens of
// microseconds on virtual machines, longer than many Linear calls; the
// calls of one forward pass come microseconds apart, so a short spin keeps
// the helper hot through a whole frame step. The spin yields the processor
// to other goroutines on every round.
const spinFor = 200 * time.Microsecond

// worker helps with posted jobs until quit is closed.
func (st *poolState) worker() {
	defer st.wg.Done()
	var scratch []float32
	for {
		select {
		case j := <-st.jobs:
			j.runChunks(&scratch)
			j.release()
			continue
		case <-st.quit:
			return
		default:
		}
		if j := st.spin(); j != nil {
			j.runChunks(&scratch)
			j.release()
			continue
		}
		select {
		case j := <-st.jobs:
			j.runChunks(&scratch)
			j.release()
		case <-st.quit:
			return
		}
	}
}

// spin polls for a job for up to spinFor.
func (st *poolState) spin() *job {
	start := time.Now()
	for {
		for range 64 {
			select {
			case j := <-st.jobs:
				return j
			default:
			}
		}
		if time.Since(start) > spinFor {
			return nil
		}
		runtime.Gosched()
	}
}

// growScratch returns a chunk's scratch *sp with at least n floats. It
// grows by a quarter more than asked: the needs of the attention calls grow
// a little every step (a window filling frame by frame, a cache one key
// longer), and an exact size would be reallocated at every step.
func growScratch(sp *[]float32, n int) []float32 {
	if len(*sp) < n {
		*sp = make([]float32, n+n/4)
	}
	return *sp
}

// parallel runs work's n chunks on up to Threads() goroutines and returns
// when all are done. scratch is the caller's own buffer for run.
func parallel(work chunker, n int, scratch *[]float32) {
	st := pool()
	if n <= 1 || st.threads == 1 {
		for c := range n {
			work.run(c, scratch)
		}
		return
	}
	j := jobPool.Get().(*job)
	j.work, j.n = work, int32(n)
	j.next.Store(0)
	j.done.Store(0)
	j.refs.Store(1)
	for range min(st.threads-1, n-1) {
		j.refs.Add(1) // before the post: a helper may release it at once
		select {
		case st.jobs <- j:
		default: // every helper is busy: the caller does the rest
			j.refs.Add(-1)
		}
	}
	j.runChunks(scratch)
	// The last chunks are usually microseconds from done: poll before
	// blocking, for the same reason helpers spin.
	for i := 0; j.done.Load() != j.n && i < 1<<14; i++ {
		if i%64 == 63 {
			runtime.Gosched()
		}
	}
	<-j.wake
	j.release()
}

// forJob is one For call: chunk c is items [c·grain, min((c+1)·grain, n)).
// scratch is the caller's scratch for parallel.
type forJob struct {
	fn       func(lo, hi int)
	n, grain int
	scratch  []float32
}

func (j *forJob) run(c int, _ *[]float32) {
	lo := c * j.grain
	j.fn(lo, min(lo+j.grain, j.n))
}

// forJobs recycles For's jobs: parallel hands them to the helpers, so they
// live on the heap, and no helper touches one after parallel returns.
var forJobs = sync.Pool{New: func() any { return new(forJob) }}

// For runs fn over the items [0, n), cut into runs of grain items (the last
// shorter), spread over the worker pool when there is more than one run.
// fn must only write what belongs to the items it is given, so that results
// never depend on how the items were cut or on the threads.
func For(n, grain int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	grain = max(grain, 1)
	chunks := (n + grain - 1) / grain
	if chunks == 1 || Threads() == 1 {
		fn(0, n)
		return
	}
	fj := forJobs.Get().(*forJob)
	fj.fn, fj.n, fj.grain = fn, n, grain
	parallel(fj, chunks, &fj.scratch)
	fj.fn = nil // drop the caller's closure
	forJobs.Put(fj)
}

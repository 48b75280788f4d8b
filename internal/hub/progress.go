package hub

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// ProgressBar renders download progress as one self-overwriting line per file:
//
//	model.safetensors   42% [==========>              ] 168.2 MB / 400.1 MB  21.3 MB/s
//
// Use its Update method as Client.Progress when the output is a terminal (the
// caller decides; the bar writes carriage returns). Redraws are throttled.
type ProgressBar struct {
	w   io.Writer
	now func() time.Time

	mu        sync.Mutex
	file      string
	start     time.Time
	startDone int64 // bytes already present when this file started (resumed)
	done      int64
	last      time.Time
	lastLen   int
	open      bool // a line for file is on screen without its newline
	finished  bool // file's final line is drawn
}

const (
	progressInterval = 100 * time.Millisecond
	progressBarWidth = 24
	progressNameMax  = 28
)

// NewProgressBar returns a ProgressBar writing to w (typically os.Stderr).
func NewProgressBar(w io.Writer) *ProgressBar { return &ProgressBar{w: w, now: time.Now} }

// Update records that done of total bytes of file are downloaded (total -1:
// unknown). It has the signature of Client.Progress and is safe for concurrent use.
func (p *ProgressBar) Update(file string, done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if file != p.file || p.finished || done < p.done { // a new transfer
		if p.open {
			fmt.Fprintln(p.w)
		}
		p.file, p.start, p.startDone, p.open, p.finished = file, now, done, false, false
		p.last, p.lastLen = time.Time{}, 0
	}
	p.done = done
	finished := total >= 0 && done >= total
	if !finished && !p.last.IsZero() && now.Sub(p.last) < progressInterval {
		return
	}
	p.last = now
	line := p.render(file, done, total, now.Sub(p.start))
	pad := ""
	width := utf8.RuneCountInString(line)
	if n := p.lastLen - width; n > 0 {
		pad = strings.Repeat(" ", n)
	}
	p.lastLen = width
	fmt.Fprintf(p.w, "\r%s%s", line, pad)
	p.open, p.finished = !finished, finished
	if finished {
		fmt.Fprintln(p.w)
	}
}

// Finish ends a progress line left open by an interrupted or unsized download,
// so that what is printed next starts on a line of its own.
func (p *ProgressBar) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open {
		fmt.Fprintln(p.w)
		p.open, p.finished = false, true
	}
}

func (p *ProgressBar) render(file string, done, total int64, elapsed time.Duration) string {
	if r := []rune(file); len(r) > progressNameMax {
		file = "…" + string(r[len(r)-progressNameMax+1:])
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s ", progressNameMax, file)
	if total > 0 {
		frac := min(float64(done)/float64(total), 1)
		filled := int(frac * progressBarWidth)
		bar := strings.Repeat("=", filled)
		if filled < progressBarWidth {
			bar += ">" + strings.Repeat(" ", progressBarWidth-filled-1)
		}
		fmt.Fprintf(&b, "%3d%% [%s] %s / %s", int(frac*100), bar, formatBytes(done), formatBytes(total))
	} else {
		b.WriteString(formatBytes(done))
	}
	if secs := elapsed.Seconds(); secs >= 0.05 && done > p.startDone {
		fmt.Fprintf(&b, "  %s/s", formatBytes(int64(float64(done-p.startDone)/secs)))
	}
	return b.String()
}

// formatBytes formats n with decimal units, as huggingface_hub's bars do.
func formatBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, i := float64(n), 0
	for f >= unit && i < 4 {
		f /= unit
		i++
	}
	return fmt.Sprintf("%.1f %cB", f, " kMGT"[i])
}

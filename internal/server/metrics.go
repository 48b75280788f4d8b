package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the Prometheus metrics of a server and its engine. It
// implements engine.Observer.
type Metrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.CounterVec
	ttfa      prometheus.Histogram
	rtf       prometheus.Histogram
	active    prometheus.Gauge
	queued    prometheus.Gauge
	frames    prometheus.Counter
	audio     prometheus.Counter
	streams   *prometheus.CounterVec
	stepSecs  prometheus.Histogram
	batchSize prometheus.Histogram
	// Before admission (admit.go).
	bodyMem      prometheus.Gauge
	bodyWaiting  prometheus.Gauge
	clipDecodes  prometheus.Gauge
	clipWaiting  prometheus.Gauge
	bodiesCut    prometheus.Counter
	connsOpen    prometheus.Gauge
	connsRefused prometheus.Counter
}

// NewMetrics registers the metrics in a fresh registry (with Go and process
// collectors).
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := &Metrics{
		reg: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "nanovox_http_requests_total", Help: "HTTP requests by route and status code.",
		}, []string{"route", "code"}),
		ttfa: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "nanovox_time_to_first_audio_seconds", Help: "Time from request admission to the first audio chunk handed to the client.",
			Buckets: []float64{0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 2, 5, 10},
		}),
		rtf: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "nanovox_real_time_factor", Help: "Compute time divided by audio duration, per completed stream.",
			Buckets: []float64{0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 5},
		}),
		active: prometheus.NewGauge(prometheus.GaugeOpts{Name: "nanovox_active_streams", Help: "Requests holding a generation slot."}),
		queued: prometheus.NewGauge(prometheus.GaugeOpts{Name: "nanovox_queue_depth", Help: "Requests waiting for a generation slot."}),
		frames: prometheus.NewCounter(prometheus.CounterOpts{Name: "nanovox_frames_generated_total", Help: "Codec frames generated (80 ms of audio each)."}),
		audio:  prometheus.NewCounter(prometheus.CounterOpts{Name: "nanovox_audio_seconds_total", Help: "Seconds of audio produced."}),
		streams: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "nanovox_streams_total", Help: "Finished streams by outcome (completed, cancelled).",
		}, []string{"outcome"}),
		stepSecs: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "nanovox_step_seconds", Help: "Duration of one scheduler step (one frame for every ready stream).",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
		}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "nanovox_step_batch_size", Help: "Streams advanced together in one step.",
			Buckets: []float64{1, 2, 3, 4, 6, 8, 12, 16, 32},
		}),
	}
	m.bodyMem = prometheus.NewGauge(prometheus.GaugeOpts{Name: "nanovox_body_memory_bytes", Help: "Bytes of the request body memory budget (--body-memory-mb) reserved by requests reading or holding their body."})
	m.bodyWaiting = prometheus.NewGauge(prometheus.GaugeOpts{Name: "nanovox_body_memory_waiting", Help: "Requests waiting for the body memory budget before reading their body."})
	m.clipDecodes = prometheus.NewGauge(prometheus.GaugeOpts{Name: "nanovox_clip_decodes", Help: "Requests holding a decoded inline clip (at most --clip-decodes)."})
	m.clipWaiting = prometheus.NewGauge(prometheus.GaugeOpts{Name: "nanovox_clip_decodes_waiting", Help: "Requests waiting to decode their inline clip."})
	m.bodiesCut = prometheus.NewCounter(prometheus.CounterOpts{Name: "nanovox_request_bodies_cut_total", Help: "Request bodies not received within --body-timeout (the connection is closed)."})
	m.connsOpen = prometheus.NewGauge(prometheus.GaugeOpts{Name: "nanovox_connections_open", Help: "Open client connections (at most --max-connections)."})
	m.connsRefused = prometheus.NewCounter(prometheus.CounterOpts{Name: "nanovox_connections_refused_total", Help: "Connections answered 503 and closed because --max-connections were open."})
	reg.MustRegister(m.requests, m.ttfa, m.rtf, m.active, m.queued, m.frames, m.audio, m.streams, m.stepSecs, m.batchSize,
		m.bodyMem, m.bodyWaiting, m.clipDecodes, m.clipWaiting, m.bodiesCut, m.connsOpen, m.connsRefused)
	return m
}

// ObserveStreamLimit exports how many requests may hold a slot now (the
// real-time limit, or --max-streams).
func (m *Metrics) ObserveStreamLimit(limit func() int) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "nanovox_stream_limit", Help: "Requests that may hold a generation slot now: the real-time limit learned from step times, at most --max-streams."},
		func() float64 { return float64(limit()) }))
}

// ObservePrefixCache exports the engine's prefix-cache statistics.
func (m *Metrics) ObservePrefixCache(stats func() (entries int, bytes int64, hits, misses uint64)) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "nanovox_prefix_cache_entries", Help: "Voice prompt prefixes cached."},
			func() float64 { e, _, _, _ := stats(); return float64(e) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "nanovox_prefix_cache_bytes", Help: "Memory held by cached voice prefixes."},
			func() float64 { _, b, _, _ := stats(); return float64(b) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "nanovox_prefix_cache_hits_total", Help: "Requests whose voice prefix was cached."},
			func() float64 { _, _, h, _ := stats(); return float64(h) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "nanovox_prefix_cache_misses_total", Help: "Requests that computed their voice prefix."},
			func() float64 { _, _, _, mi := stats(); return float64(mi) }),
	)
}

// Handler serves /metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Registry exposes the registry (for extra collectors).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

func (m *Metrics) request(route string, status int) {
	if status == 0 {
		status = http.StatusOK
	}
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
}

// SlotsChanged implements engine.Observer.
func (m *Metrics) SlotsChanged(active, queued int) {
	m.active.Set(float64(active))
	m.queued.Set(float64(queued))
}

// FirstAudio implements engine.Observer.
func (m *Metrics) FirstAudio(d time.Duration) { m.ttfa.Observe(d.Seconds()) }

// StreamDone implements engine.Observer.
func (m *Metrics) StreamDone(compute time.Duration, audioSeconds float64, frames int, completed bool) {
	m.frames.Add(float64(frames))
	m.audio.Add(audioSeconds)
	if completed {
		m.streams.WithLabelValues("completed").Inc()
		if audioSeconds > 0 {
			m.rtf.Observe(compute.Seconds() / audioSeconds)
		}
	} else {
		m.streams.WithLabelValues("cancelled").Inc()
	}
}

// Step implements engine.Observer.
func (m *Metrics) Step(n int, d time.Duration) {
	m.stepSecs.Observe(d.Seconds())
	m.batchSize.Observe(float64(n))
}

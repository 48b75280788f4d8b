//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestReplicas runs two nanovox serve processes on one voice store (a
// shared directory, or S3 when NANOVOX_S3_ENDPOINT is set) behind a real
// nginx in round-robin, and checks what a scaled-out deployment relies on:
// a voice saved through one replica is spoken by the other; concurrent
// saves, replacements and deletions across replicas answer only documented
// codes and leave both replicas with the same voices; a replica killed
// mid-stream gives its client a clean error while the other keeps serving;
// a rolling restart through /readyz draining loses no request.
//
// It needs nginx (the Debian package nginx) and runs only with
// NANOVOX_REPLICA_TESTS=1; NANOVOX_REPLICA_REPORT=FILE writes the rolling
// restart's numbers there as JSON.
func TestReplicas(t *testing.T) {
	if os.Getenv("NANOVOX_REPLICA_TESTS") == "" {
		t.Skip("multi-replica test; set NANOVOX_REPLICA_TESTS=1 (needs nginx)")
	}
	if _, err := findNginx(); err != nil {
		t.Fatal(err) // asked for explicitly: a missing proxy is a failure, not a skip
	}
	// --drain-grace is what a rolling restart relies on: the replica keeps
	// its port open and answers 503 (also on /readyz) so the proxy moves
	// new requests away before the port closes.
	c := startReplicaCluster(t, "--drain-grace", "1s", "--shutdown-timeout", "30s", "--max-streams", "4", "--queue", "16")
	rep := &replicaReport{Store: c.store.desc, Proxy: "nginx " + c.proxy.version}
	t.Run("SaveOnOneSpeakOnOther", func(t *testing.T) { testSaveSpeak(t, c, rep) })
	t.Run("Races", func(t *testing.T) { testRaces(t, c, rep) })
	t.Run("ReplaceAndDeleteSeenByOther", func(t *testing.T) { testStaleness(t, c, rep) })
	t.Run("KillMidStream", func(t *testing.T) { testKillMidStream(t, c, rep) })
	t.Run("RollingRestart", func(t *testing.T) { testRollingRestart(t, c, rep) })
	b, _ := json.MarshalIndent(rep, "", "  ")
	t.Logf("report:\n%s", b)
	if path := os.Getenv("NANOVOX_REPLICA_REPORT"); path != "" {
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// replicaReport is what the test measured, for CI's log and the docs.
type replicaReport struct {
	Store string `json:"store"`
	Proxy string `json:"proxy"`
	// VisibleAfterMS is how long after the save's answer the other
	// replica listed the voice.
	VisibleAfterMS float64        `json:"save_visible_on_other_replica_ms"`
	RaceOps        int            `json:"race_ops"`
	RaceAnswers    map[string]int `json:"race_answers"`
	// ConvergedAfterMS is how long after the last racing request both
	// replicas listed the same voices.
	ConvergedAfterMS float64 `json:"race_lists_equal_after_ms"`
	// ReplacedAfterMS and DeletedAfterMS are how long after a replacement
	// or deletion on one replica the other still spoke the old voice: the
	// staleness bound across replicas, prompt-prefix cache included.
	ReplacedAfterMS float64        `json:"replaced_voice_spoken_by_other_after_ms"`
	DeletedAfterMS  float64        `json:"deleted_voice_404_on_other_after_ms"`
	KilledStream    string         `json:"killed_stream"`
	Rolling         *rollingReport `json:"rolling_restart,omitempty"`
}

// rollingReport is the load loop's account of a rolling restart: the
// requests sent from the first SIGTERM until the second replica served
// again, and those of a baseline just before with both replicas up.
type rollingReport struct {
	Workers  int `json:"workers"`
	Requests int `json:"requests"`
	// Failed counts failures of the restart and of the baseline.
	Failed int `json:"failed"`
	// Rerouted counts requests nginx passed to the second replica after
	// the first answered 503 or refused the connection.
	Rerouted  int            `json:"rerouted"`
	ByReplica map[string]int `json:"by_replica"`
	TTFAp50MS float64        `json:"ttfa_p50_ms"`
	TTFAp95MS float64        `json:"ttfa_p95_ms"`
	TTFAMaxMS float64        `json:"ttfa_max_ms"`
	Seconds   float64        `json:"seconds"`
	// The same load before the restart, both replicas up.
	BaselineRequests  int     `json:"baseline_requests"`
	BaselineTTFAp50MS float64 `json:"baseline_ttfa_p50_ms"`
	BaselineTTFAp95MS float64 `json:"baseline_ttfa_p95_ms"`
	// Drained lists the long streams in flight on each replica when it got
	// SIGTERM, which it finished before exiting.
	Drained []string `json:"in_flight_streams_finished"`
}

// hangGuard bounds a single request of the test: a hang fails it instead of
// stalling the run. It is not a timing assertion.
const hangGuard = 30 * time.Second

// millis is d in milliseconds, for the report.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// pollUntil polls cond until it holds, up to hangGuard.
func pollUntil(what string, cond func() (bool, error)) (time.Duration, error) {
	start := time.Now()
	for {
		ok, err := cond()
		if ok {
			return time.Since(start), nil
		}
		if time.Since(start) > hangGuard {
			return 0, fmt.Errorf("%s: not within %v (last error: %v)", what, hangGuard, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// wavProblem reports what is wrong with a buffered WAV answer, "" if
// nothing: the plain 16-bit PCM layout parseWAV checks, with samples in it
// (it does not stop the test, so goroutines may call it).
func wavProblem(b []byte) string {
	le := binary.LittleEndian
	switch {
	case len(b) < 44 || string(b[0:4]) != "RIFF" || string(b[8:16]) != "WAVEfmt " || string(b[36:40]) != "data":
		return fmt.Sprintf("not a plain RIFF WAV header: % x", b[:min(len(b), 44)])
	case le.Uint32(b[4:]) != uint32(len(b)-8) || le.Uint32(b[40:]) != uint32(len(b)-44):
		return fmt.Sprintf("RIFF sizes %d/%d do not match the file (%d bytes)", le.Uint32(b[4:]), le.Uint32(b[40:]), len(b))
	case le.Uint16(b[20:]) != 1 || le.Uint16(b[34:]) != 16:
		return fmt.Sprintf("format %d, %d bits; want PCM 16", le.Uint16(b[20:]), le.Uint16(b[34:]))
	case len(b) == 44:
		return "no samples"
	}
	return ""
}

// testSaveSpeak saves a voice through the proxy and speaks it on both
// replicas: directly on the one that did not save it, and round-robin.
func testSaveSpeak(t *testing.T, c *replicaCluster, rep *replicaReport) {
	ctx := context.Background()
	save := exchange(ctx, c.client, http.MethodPost, c.base+"/v1/audio/voices", c.saveJSON("shared1", false))
	saved := time.Now()
	if save.err != nil || save.status != http.StatusCreated {
		t.Fatalf("save through the proxy: %d %v %s", save.status, save.err, save.body)
	}
	saver := c.byAddr(save.upstream)
	if saver == nil {
		t.Fatalf("X-Upstream %q names no replica", save.upstream)
	}
	other := c.replicas[0]
	if other == saver {
		other = c.replicas[1]
	}
	// The other replica learns of the voice from the store; how soon is
	// the store's business (the directory store re-reads a changed
	// directory at most once a second), so measure it.
	_, err := pollUntil("the other replica lists the voice", func() (bool, error) {
		a := exchange(ctx, c.client, http.MethodGet, "http://"+other.addr+"/v1/audio/voices/shared1", nil)
		return a.status == http.StatusOK, a.err
	})
	if err != nil {
		t.Fatal(err)
	}
	rep.VisibleAfterMS = millis(time.Since(saved))
	t.Logf("saved on %s; %s lists it %.0f ms after the save answered", saver.name, other.name, rep.VisibleAfterMS)

	direct := exchange(ctx, c.client, http.MethodPost, "http://"+other.addr+"/v1/audio/speech", speechJSON("shared1", "Spoken by the other replica.", "wav", false, nil))
	if direct.err != nil || direct.status != http.StatusOK || wavProblem(direct.body) != "" {
		t.Fatalf("speak on %s, which did not save the voice: %d %v %s %s", other.name, direct.status, direct.err, wavProblem(direct.body), direct.body[:min(len(direct.body), 300)])
	}
	const n = 8
	served := map[string]int{}
	for i := range n {
		a := exchange(ctx, c.client, http.MethodPost, c.base+"/v1/audio/speech", speechJSON("shared1", fmt.Sprintf("Request number %d, through the proxy.", i), "wav", false, nil))
		if a.err != nil || a.status != http.StatusOK {
			t.Fatalf("speak %d through the proxy: %d %v %s", i, a.status, a.err, a.body[:min(len(a.body), 300)])
		}
		if msg := wavProblem(a.body); msg != "" {
			t.Fatalf("speak %d through the proxy (%s): %s", i, a.upstream, msg)
		}
		if r := c.byAddr(a.upstream); r != nil {
			served[r.name]++
		}
	}
	if served["A"] == 0 || served["B"] == 0 {
		t.Errorf("round-robin: replicas served %v of %d requests; want both", served, n)
	}
	t.Logf("%d speech requests through the proxy, all 200 with a valid WAV: %v", n, served)
}

// raceOp is one kind of request in the race.
type raceOp int

const (
	opReplace raceOp = iota // POST replace=true
	opCreate                // POST replace=false
	opDelete
	opSpeak
)

// raceAllowed lists the documented answers to each racing request: a create
// of an existing voice is a 409, a deletion or use of a missing voice a
// 404; nothing else, and never a 5xx.
var raceAllowed = map[raceOp][]int{
	opReplace: {http.StatusCreated},
	opCreate:  {http.StatusCreated, http.StatusConflict},
	opDelete:  {http.StatusOK, http.StatusNotFound},
	opSpeak:   {http.StatusOK, http.StatusNotFound},
}

func (o raceOp) String() string {
	return [...]string{"replace", "create", "delete", "speak"}[o]
}

// testRaces races saves, replacements, deletions and speech on two names
// through the proxy, then creations of one new name on both replicas at
// once, and checks the answers and that both replicas end up alike.
func testRaces(t *testing.T, c *replicaCluster, rep *replicaReport) {
	ctx := context.Background()
	names := []string{"race0", "race1"}
	const workers, ops = 6, 12
	var mu sync.Mutex
	answers := map[string]int{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 22))
			for range ops {
				name := names[rng.IntN(len(names))]
				var op raceOp
				switch p := rng.IntN(100); {
				case p < 35:
					op = opReplace
				case p < 55:
					op = opCreate
				case p < 80:
					op = opDelete
				default:
					op = opSpeak
				}
				var a reply
				switch op {
				case opReplace, opCreate:
					a = exchange(ctx, c.client, http.MethodPost, c.base+"/v1/audio/voices", c.saveJSON(name, op == opReplace))
				case opDelete:
					a = exchange(ctx, c.client, http.MethodDelete, c.base+"/v1/audio/voices/"+name, nil)
				case opSpeak:
					a = exchange(ctx, c.client, http.MethodPost, c.base+"/v1/audio/speech", speechJSON(name, "A racing request.", "pcm", false, nil))
				}
				mu.Lock()
				answers[fmt.Sprintf("%s %d", op, a.status)]++
				mu.Unlock()
				if a.err != nil || !slices.Contains(raceAllowed[op], a.status) {
					t.Errorf("%s %s via %s: %d %v %s; want one of %v", op, name, a.upstream, a.status, a.err, a.body[:min(len(a.body), 300)], raceAllowed[op])
				}
			}
		}()
	}
	wg.Wait()

	// Two replicas creating the same new name at once: one wins, the
	// other answers 409, whichever order the store's lock puts them in.
	for round := range 4 {
		name := fmt.Sprintf("duel%d", round)
		var got [2]reply
		start := make(chan struct{})
		var dw sync.WaitGroup
		for i, r := range c.replicas {
			dw.Add(1)
			go func() {
				defer dw.Done()
				<-start
				got[i] = exchange(ctx, c.client, http.MethodPost, "http://"+r.addr+"/v1/audio/voices", c.saveJSON(name, false))
			}()
		}
		close(start)
		dw.Wait()
		codes := []int{got[0].status, got[1].status}
		slices.Sort(codes)
		mu.Lock()
		answers[fmt.Sprintf("duel %d+%d", codes[0], codes[1])]++
		mu.Unlock()
		if !slices.Equal(codes, []int{http.StatusCreated, http.StatusConflict}) {
			t.Errorf("%s created on A and B at once: A %d %s, B %d %s; want one 201 and one 409", name, got[0].status, got[0].body, got[1].status, got[1].body)
		}
	}
	rep.RaceOps = workers*ops + 8
	rep.RaceAnswers = answers
	t.Logf("answers: %v", answers)

	// Both replicas must end with the same voices; how soon they agree is
	// the store's refresh bound, measured.
	done := time.Now()
	var la, lb []string
	_, err := pollUntil("both replicas list the same voices", func() (bool, error) {
		var err error
		if la, err = voiceList(ctx, c.client, "http://"+c.replicas[0].addr); err != nil {
			return false, err
		}
		if lb, err = voiceList(ctx, c.client, "http://"+c.replicas[1].addr); err != nil {
			return false, err
		}
		return slices.Equal(la, lb), nil
	})
	if err != nil {
		t.Fatalf("%v: A %v, B %v", err, la, lb)
	}
	rep.ConvergedAfterMS = millis(time.Since(done))
	t.Logf("both replicas list %v (%.0f ms after the last request)", la, rep.ConvergedAfterMS)
	// And both speak exactly the voices they list.
	for _, name := range append(names, "duel0") {
		listed := slices.ContainsFunc(la, func(s string) bool { return strings.HasPrefix(s, name+"@") })
		for _, r := range c.replicas {
			a := exchange(ctx, c.client, http.MethodPost, "http://"+r.addr+"/v1/audio/speech", speechJSON(name, "After the race.", "pcm", false, nil))
			want := http.StatusNotFound
			if listed {
				want = http.StatusOK
			}
			if a.err != nil || a.status != want {
				t.Errorf("speak %s on %s after the race: %d %v; want %d (listed: %v)", name, r.name, a.status, a.err, want, listed)
			}
		}
	}
}

// smallBufferClient reads through a small socket buffer and keeps no
// connections, so a client that stops reading holds the replica's stream
// back soon: the replica is still generating when it is killed.
func smallBufferClient() *http.Client {
	d := &net.Dialer{Control: func(network, address string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 16<<10)
		}); err != nil {
			return err
		}
		return serr
	}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, ReadBufferSize: 4 << 10, DisableKeepAlives: true}}
}

// testStaleness replaces a voice on one replica with a different clip,
// then deletes it, and measures how long the other replica goes on
// speaking the old version. The answers tell the versions apart: the same
// request with the same seed gives the same audio on both replicas (the
// test checks that first), and a different reference gives different audio.
func testStaleness(t *testing.T, c *replicaCluster, rep *replicaReport) {
	ctx := context.Background()
	a, b := c.replicas[0], c.replicas[1]
	speak := func(r *replica) reply {
		return exchange(ctx, c.client, http.MethodPost, "http://"+r.addr+"/v1/audio/speech", speechJSON("swap", "Which version of the voice is this?", "pcm", false, nil))
	}
	if s := exchange(ctx, c.client, http.MethodPost, "http://"+a.addr+"/v1/audio/voices", saveClipJSON("swap", c.refB64, true)); s.status != http.StatusCreated {
		t.Fatalf("save on A: %d %v %s", s.status, s.err, s.body)
	}
	if err := waitListed(ctx, c, "swap"); err != nil {
		t.Fatal(err)
	}
	oldA, oldB := speak(a), speak(b)
	if oldA.status != http.StatusOK || oldB.status != http.StatusOK || len(oldA.body) == 0 {
		t.Fatalf("speak the first version: A %d %v, B %d %v", oldA.status, oldA.err, oldB.status, oldB.err)
	}
	if !bytes.Equal(oldA.body, oldB.body) {
		t.Fatalf("the same request with the same seed and voice gave different audio on A (%d bytes) and B (%d bytes); the versions cannot be told apart", len(oldA.body), len(oldB.body))
	}
	if s := exchange(ctx, c.client, http.MethodPost, "http://"+a.addr+"/v1/audio/voices", saveClipJSON("swap", c.shortB64, true)); s.status != http.StatusCreated {
		t.Fatalf("replace on A: %d %v %s", s.status, s.err, s.body)
	}
	replaced := time.Now()
	newA := speak(a)
	if newA.status != http.StatusOK || bytes.Equal(newA.body, oldA.body) {
		t.Fatalf("A after its own replacement: %d, same audio as before: %v", newA.status, bytes.Equal(newA.body, oldA.body))
	}
	var polls, stale int
	if _, err := pollUntil("B speaks the replaced voice", func() (bool, error) {
		r := speak(b)
		polls++
		switch {
		case r.err != nil || r.status != http.StatusOK:
			return false, fmt.Errorf("B: %d %v %s", r.status, r.err, r.body)
		case bytes.Equal(r.body, newA.body):
			return true, nil
		case bytes.Equal(r.body, oldA.body):
			stale++
			return false, nil
		}
		return false, fmt.Errorf("B's audio (%d bytes) is neither version", len(r.body))
	}); err != nil {
		t.Fatal(err)
	}
	rep.ReplacedAfterMS = millis(time.Since(replaced))
	if s := exchange(ctx, c.client, http.MethodDelete, "http://"+a.addr+"/v1/audio/voices/swap", nil); s.status != http.StatusOK {
		t.Fatalf("delete on A: %d %v %s", s.status, s.err, s.body)
	}
	deleted := time.Now()
	if r := speak(a); r.status != http.StatusNotFound {
		t.Fatalf("A after its own deletion: %d; want 404", r.status)
	}
	if _, err := pollUntil("B answers 404 for the deleted voice", func() (bool, error) {
		r := speak(b)
		switch {
		case r.status == http.StatusNotFound:
			return true, nil
		case r.status == http.StatusOK && bytes.Equal(r.body, newA.body):
			return false, nil
		}
		return false, fmt.Errorf("B: %d %v (%d bytes)", r.status, r.err, len(r.body))
	}); err != nil {
		t.Fatal(err)
	}
	rep.DeletedAfterMS = millis(time.Since(deleted))
	t.Logf("after a replacement on A, B spoke the old version %d of %d times, for %.0f ms; after the deletion, B spoke it for %.0f ms more", stale, polls, rep.ReplacedAfterMS, rep.DeletedAfterMS)
}

// testKillMidStream kills (SIGKILL) the replica generating a long stream:
// the client sees the stream cut, a stream on the other replica at the
// same time completes, the proxy goes on with the other replica, and the
// killed one restarts on the same store.
func testKillMidStream(t *testing.T, c *replicaCluster, rep *replicaReport) {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	if save := exchange(ctx, c.client, http.MethodPost, c.base+"/v1/audio/voices", c.saveJSON("killme", true)); save.status != http.StatusCreated {
		t.Fatalf("save: %d %v %s", save.status, save.err, save.body)
	}
	if err := waitListed(ctx, c, "killme"); err != nil {
		t.Fatal(err)
	}
	h, err := holdStream(ctx, c, "killme", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.resp.Body.Close()
	victim, n, resp := h.replica, h.read, h.resp
	survivor := c.replicas[0]
	if survivor == victim {
		survivor = c.replicas[1]
	}
	// A stream on the survivor spans the kill; it must not notice.
	other, err := holdStream(ctx, c, "killme", survivor)
	if err != nil {
		t.Fatal(err)
	}
	defer other.resp.Body.Close()
	if err := victim.signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if err := victim.wait(hangGuard); err == nil {
		t.Fatalf("replica %s exited cleanly after SIGKILL", victim.name)
	}
	// The client reads on: what the buffers held, then an error, not a
	// hang (the context's guard would end a hang with a different error).
	rest, err := io.Copy(io.Discard, resp.Body)
	took := time.Since(killed)
	switch {
	case err == nil:
		t.Fatalf("the stream through the killed replica %s ended cleanly after %d+%d bytes; want a truncated stream", victim.name, n, rest)
	case ctx.Err() != nil:
		t.Fatalf("the stream through the killed replica hung until the test's guard: %v", err)
	case !errors.Is(err, io.ErrUnexpectedEOF):
		t.Errorf("the stream's error is %v; want an unexpected EOF (a chunked body cut short)", err)
	}
	rep.KilledStream = fmt.Sprintf("replica %s killed after %d bytes; the client read %d more, then %q after %.0f ms", victim.name, n, rest, err, millis(took))
	t.Log(rep.KilledStream)
	if more, err := io.Copy(io.Discard, other.resp.Body); err != nil {
		t.Errorf("the stream on the survivor %s during the kill: %v after %d bytes; want it complete", survivor.name, err, int64(other.read)+more)
	}

	// The proxy keeps serving from the survivor.
	for i := range 4 {
		a := exchange(ctx, c.client, http.MethodPost, c.base+"/v1/audio/speech", speechJSON("killme", "After the kill.", "wav", false, nil))
		if a.err != nil || a.status != http.StatusOK || wavProblem(a.body) != "" || a.upstream != survivor.addr {
			t.Errorf("request %d after the kill: %d %v via %v; want 200 with a WAV from %s", i, a.status, a.err, a.tried, survivor.name)
		}
	}
	// The killed replica comes back on the same store.
	if err := victim.start(); err != nil {
		t.Fatal(err)
	}
	if a := exchange(ctx, c.client, http.MethodPost, "http://"+victim.addr+"/v1/audio/speech", speechJSON("killme", "Back again.", "wav", false, nil)); a.status != http.StatusOK {
		t.Errorf("restarted replica %s: %d %v %s", victim.name, a.status, a.err, a.body)
	}
	// nginx takes it back once fail_timeout has passed and a request to it
	// succeeded; until then, a failure of the other replica would leave
	// nginx with no live upstream (502), as it would in production.
	if err := c.waitRouted(); err != nil {
		t.Fatal(err)
	}
}

// waitListed waits until both replicas know the voice.
func waitListed(ctx context.Context, c *replicaCluster, name string) error {
	_, err := pollUntil("the replicas list "+name, func() (bool, error) {
		for _, r := range c.replicas {
			if a := exchange(ctx, c.client, http.MethodGet, "http://"+r.addr+"/v1/audio/voices/"+name, nil); a.status != http.StatusOK {
				return false, a.err
			}
		}
		return true, nil
	})
	return err
}

// heldStream is a long streamed answer its client has stopped reading.
type heldStream struct {
	resp    *http.Response
	replica *replica // the replica generating it
	read    int      // bytes read so far
}

// holdStream opens a long streamed speech request through the proxy (on
// replica want, if not nil: round-robin gets there within a few tries,
// whatever other requests run meanwhile), reads its first bytes and stops.
// Many sentences at a quarter of the speed make megabytes of PCM, far more
// than the small socket buffers on the way hold, so the replica is still
// writing it until the client reads on. The caller closes resp.Body.
func holdStream(ctx context.Context, c *replicaCluster, voice string, want *replica) (*heldStream, error) {
	long := strings.Repeat("This stream is held open while its replica is stopped in the middle of it. ", 50)
	body := speechJSON(voice, long, "pcm", true, map[string]any{"speed": 0.25})
	client := smallBufferClient()
	for try := 0; try < 20; try++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/v1/audio/speech", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("long stream: %w", err)
		}
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return nil, fmt.Errorf("long stream: %s %s", resp.Status, b)
		}
		h := &heldStream{resp: resp}
		if tried := triedUpstreams(resp.Header); len(tried) > 0 {
			h.replica = c.byAddr(tried[len(tried)-1])
		}
		if h.replica == nil {
			resp.Body.Close()
			return nil, fmt.Errorf("X-Upstream %q names no replica", resp.Header.Get("X-Upstream"))
		}
		if want != nil && h.replica != want {
			resp.Body.Close()
			continue
		}
		first := make([]byte, 8<<10)
		if h.read, err = io.ReadFull(resp.Body, first); err != nil {
			resp.Body.Close()
			return nil, fmt.Errorf("first %d bytes of the long stream: %w", h.read, err)
		}
		// The replica must still be generating it (held back by this
		// client), or stopping it mid-stream tests nothing.
		if _, err := pollUntil("the replica reports the stream active", func() (bool, error) {
			r, _, err := fetchReadyz(ctx, c.client, h.replica.addr)
			return r.ActiveStreams > 0, err
		}); err != nil {
			resp.Body.Close()
			return nil, err
		}
		return h, nil
	}
	return nil, fmt.Errorf("no long stream landed on replica %s in 20 tries", want.name)
}

// loadResult is one request of the rolling restart's load loop.
type loadResult struct {
	reply
	at time.Time
}

// testRollingRestart restarts A, then B, with SIGTERM under a streaming
// load loop through the proxy: no request may fail, and a stream in flight
// on each replica when it is told to stop must finish.
func testRollingRestart(t *testing.T, c *replicaCluster, rep *replicaReport) {
	ctx := context.Background()
	if save := exchange(ctx, c.client, http.MethodPost, c.base+"/v1/audio/voices", c.saveJSON("rolling", true)); save.status != http.StatusCreated {
		t.Fatalf("save: %d %v %s", save.status, save.err, save.body)
	}
	if err := waitListed(ctx, c, "rolling"); err != nil {
		t.Fatal(err)
	}

	// The load: streamed requests back to back, bounded by the restart's
	// end (and a count, should the restart hang).
	const workers, maxRequests = 2, 2000
	body := speechJSON("rolling", "The rolling restart must not lose this request. Nor this sentence.", "pcm", true, nil)
	var mu sync.Mutex
	var results []loadResult
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				rctx, cancel := context.WithTimeout(ctx, hangGuard)
				at := time.Now()
				a := exchange(rctx, c.client, http.MethodPost, c.base+"/v1/audio/speech", body)
				cancel()
				mu.Lock()
				results = append(results, loadResult{a, at})
				full := len(results) >= maxRequests
				mu.Unlock()
				if full {
					return
				}
				if a.err != nil || a.status != http.StatusOK {
					time.Sleep(50 * time.Millisecond) // a failure fails the test; do not spin on it
				}
			}
		}()
	}
	// servedSince counts successful answers from addr sent after t0.
	servedSince := func(addr string, t0 time.Time) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, r := range results {
			if r.at.After(t0) && r.upstream == addr && r.status == http.StatusOK {
				n++
			}
		}
		return n
	}
	began := time.Now()
	var drained []string
	restart := func(r *replica) error {
		// A long stream in flight on r when it is told to stop: draining
		// must let it finish.
		hctx, cancel := context.WithTimeout(ctx, hangGuard)
		defer cancel()
		h, err := holdStream(hctx, c, "rolling", r)
		if err != nil {
			return err
		}
		defer h.resp.Body.Close()
		if err := r.signal(syscall.SIGTERM); err != nil {
			return err
		}
		// While it drains, /readyz says so (for --drain-grace, and on until
		// the held stream is done).
		if _, err := pollUntil("/readyz 503 while draining", func() (bool, error) {
			_, code, err := fetchReadyz(ctx, c.client, r.addr)
			return code == http.StatusServiceUnavailable, err
		}); err != nil {
			return fmt.Errorf("replica %s: %w", r.name, err)
		}
		rest, err := io.Copy(io.Discard, h.resp.Body)
		if err != nil {
			return fmt.Errorf("the stream in flight on %s when it was told to stop: %v after %d bytes; want it finished", r.name, err, int64(h.read)+rest)
		}
		drained = append(drained, fmt.Sprintf("%s: %d bytes", r.name, int64(h.read)+rest))
		if err := r.wait(processGuard); err != nil {
			return fmt.Errorf("replica %s after SIGTERM: %v (want exit status 0)", r.name, err)
		}
		back := time.Now()
		if err := r.start(); err != nil {
			return err
		}
		// Rolled: the proxy sends it requests again and they succeed.
		_, err = pollUntil("the proxy routes to the restarted replica", func() (bool, error) {
			return servedSince(r.addr, back) >= 2, nil
		})
		return err
	}
	// A baseline first: the same load with both replicas up, for
	// comparison (its length is a choice of sample size, not a timeout).
	var rerr error
	if _, err := pollUntil("load running", func() (bool, error) {
		return servedSince(c.replicas[0].addr, began)+servedSince(c.replicas[1].addr, began) >= 4, nil
	}); err != nil {
		rerr = err
	}
	time.Sleep(1500 * time.Millisecond)
	rolling := time.Now()
	for _, r := range c.replicas {
		if rerr != nil {
			break
		}
		rerr = restart(r)
	}
	close(stop)
	wg.Wait()
	elapsed := time.Since(rolling)
	if rerr != nil {
		t.Error(rerr)
	}

	rr := &rollingReport{Workers: workers, ByReplica: map[string]int{}, Seconds: elapsed.Seconds(), Drained: drained}
	var ttfa, base []time.Duration
	for i, r := range results {
		during := !r.at.Before(rolling)
		if during {
			rr.Requests++
		} else {
			rr.BaselineRequests++
		}
		if r.err != nil || r.status != http.StatusOK || len(r.body) == 0 || len(r.body)%2 != 0 {
			rr.Failed++
			if rr.Failed <= 5 {
				t.Errorf("request %d (sent %+.3fs from the first SIGTERM) via %v: %d %v, %d bytes: %s", i, r.at.Sub(rolling).Seconds(), r.tried, r.status, r.err, len(r.body), r.body[:min(len(r.body), 200)])
			}
			continue
		}
		if !during {
			base = append(base, r.ttfa)
			continue
		}
		if len(r.tried) > 1 {
			rr.Rerouted++
		}
		if rp := c.byAddr(r.upstream); rp != nil {
			rr.ByReplica[rp.name]++
		}
		ttfa = append(ttfa, r.ttfa)
	}
	// Nearest rank: the smallest value that p of the requests do not exceed.
	pct := func(d []time.Duration, p float64) float64 {
		if len(d) == 0 {
			return 0
		}
		slices.Sort(d)
		return millis(d[max(0, int(math.Ceil(p*float64(len(d))))-1)])
	}
	rr.TTFAp50MS, rr.TTFAp95MS, rr.TTFAMaxMS = pct(ttfa, 0.50), pct(ttfa, 0.95), pct(ttfa, 1)
	rr.BaselineTTFAp50MS, rr.BaselineTTFAp95MS = pct(base, 0.50), pct(base, 0.95)
	rep.Rolling = rr
	t.Logf("rolling restart of A then B in %.1fs under %d streaming workers: %d requests, %d failed (baseline included), %d rerouted by nginx, served %v; TTFA p50 %.0f ms, p95 %.0f ms, max %.0f ms (baseline before it, %d requests: p50 %.0f ms, p95 %.0f ms); in-flight streams finished while draining: %v",
		rr.Seconds, workers, rr.Requests, rr.Failed, rr.Rerouted, rr.ByReplica, rr.TTFAp50MS, rr.TTFAp95MS, rr.TTFAMaxMS, rr.BaselineRequests, rr.BaselineTTFAp50MS, rr.BaselineTTFAp95MS, drained)
	if rr.Failed > 0 {
		t.Errorf("%d of %d requests failed; want none", rr.Failed, rr.Requests+rr.BaselineRequests)
	}
}

package audio

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestPrepareReferenceRealClips(t *testing.T) {
	tests := []struct {
		file     string
		rate     int
		frames   int
		outLen   int
		format   string
		duration time.Duration
	}{
		{"en_2.wav", 44100, 347287, 378000, "WAV PCM 16-bit", 7874988662},
		{"en_6.wav", 44100, 343980, 374400, "FLAC 16-bit", 7800 * time.Millisecond},
		{"jp_2.wav", 44100, 113778, 123840, "WAV PCM 16-bit", 2580 * time.Millisecond},
		{"zh_3.wav", 16000, 125568, 376704, "WAV PCM 16-bit", 7848 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			data := readTestdata(t, "../../testdata/real/clips/"+tc.file)
			ref, err := PrepareReference(data, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if ref.SampleRate != 48000 || ref.SourceRate != tc.rate || ref.SourceChannels != 1 ||
				ref.SourceFrames != tc.frames || ref.SourceFormat != tc.format || ref.Duration() != tc.duration {
				t.Errorf("got %+v (duration %v)", *ref, ref.Duration())
			}
			if want := int(math.Ceil(48000 * float64(tc.frames) / float64(tc.rate))); ref.Frames() != want || want != tc.outLen {
				t.Errorf("frames %d, want %d", ref.Frames(), want)
			}
			// Mono is repeated to both channels, as separate copies.
			if !slices.Equal(ref.Samples[0], ref.Samples[1]) {
				t.Error("left and right differ for a mono source")
			}
			if &ref.Samples[0][0] == &ref.Samples[1][0] {
				t.Error("left and right share memory")
			}
			clip, _ := Decode(data)
			want, _ := Resample(clip.Samples[0], tc.rate, 48000)
			if !slices.Equal(ref.Samples[0], want) {
				t.Error("reference is not the resampled decode")
			}
			inter := ref.Interleaved()
			if len(inter) != 2*ref.Frames() || inter[2000] != ref.Samples[0][1000] || inter[2001] != ref.Samples[1][1000] {
				t.Error("Interleaved layout wrong")
			}
		})
	}
}

func TestPrepareReferenceStereo(t *testing.T) {
	// The fixtures' 48 kHz stereo clip passes through unchanged.
	data := readTestdata(t, "../../testdata/tiny-a/ref.wav")
	ref, err := PrepareReference(data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	clip, _ := Decode(data)
	if clip.SampleRate != 48000 || clip.Channels() != 2 {
		t.Fatalf("fixture is %d Hz × %d", clip.SampleRate, clip.Channels())
	}
	if !slices.Equal(ref.Samples[0], clip.Samples[0]) || !slices.Equal(ref.Samples[1], clip.Samples[1]) {
		t.Error("48 kHz stereo was altered")
	}

	// A 44.1 kHz stereo clip has each channel resampled on its own.
	l, r := sine(44100, 440, 44100, 0.5), sine(44100, 660, 44100, 0.3)
	var v []int16
	for i := range l {
		v = append(v, Quantize16(l[i]), Quantize16(r[i]))
	}
	ref, err = PrepareReference(simpleWAV(44100, 2, v), Options{})
	if err != nil {
		t.Fatal(err)
	}
	clip, _ = Decode(simpleWAV(44100, 2, v))
	wl, _ := Resample(clip.Samples[0], 44100, 48000)
	wr, _ := Resample(clip.Samples[1], 44100, 48000)
	if !slices.Equal(ref.Samples[0], wl) || !slices.Equal(ref.Samples[1], wr) {
		t.Error("stereo channels not resampled independently")
	}
	if ref.SourceChannels != 2 || ref.Frames() != 48000 {
		t.Errorf("got %d channels, %d frames", ref.SourceChannels, ref.Frames())
	}

	// Another target rate.
	ref, err = PrepareReference(simpleWAV(44100, 2, v), Options{TargetRate: 24000})
	if err != nil || ref.SampleRate != 24000 || ref.Frames() != 24000 {
		t.Errorf("TargetRate 24000: %v, %+v", err, ref)
	}
}

func TestPrepareReferenceErrors(t *testing.T) {
	_, err := PrepareReference(simpleWAV(44100, 1, make([]int16, 1000)), Options{})
	checkAudioError(t, nil, err, KindDuration, "ref_audio is 0.02 s; must be 0.5–30 s")
	_, err = PrepareReference([]byte("nope"), Options{})
	checkAudioError(t, nil, err, KindNotAudio, "ref_audio is not a recognised audio file…")
	if _, err := ReferenceFromClip(&Clip{SampleRate: 8000}, 48000); err == nil {
		t.Error("a clip without channels was accepted")
	}
	if _, err := ReferenceFromClip(&Clip{SampleRate: 8000, Samples: [][]float32{{1, 2}, {1}}}, 48000); err == nil {
		t.Error("ragged channels were accepted")
	}
}

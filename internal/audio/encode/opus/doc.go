// Package opus encodes speech to Ogg Opus (RFC 7845 container, RFC 6716
// codec): the response_format "opus" of the speech endpoint, playable by
// browsers, WebRTC stacks and voice-note apps.
//
// # Stream layout
//
// An OpusHead page (pre-skip 312, the encoder's 6.5 ms lookahead; input sample
// rate; mapping family 0), an OpusTags page, then one Opus packet per 20 ms
// frame, whole packets only, at most one second per page. Granule positions
// count 48 kHz samples including the pre-skip; the last page carries the
// end-of-stream flag and a granule position that trims the silence padding the
// last frame, so a conforming decoder outputs exactly the samples written
// (Delay is 0). Flush ends the current page, so a streamed HTTP body delivers
// audio after every chunk, and every prefix of pages is itself decodable; the
// concatenation of everything written is one valid .opus file.
//
// # Rates and bitrates
//
// Opus codes 8, 12, 16, 24 and 48 kHz input natively (SupportedRate); resample
// other rates to 48 kHz first. The default bitrate, 32 kbit/s mono and 64
// kbit/s stereo, codes speech in hybrid or fullband mode close to transparent;
// constrained VBR, complexity 10 (libopus defaults). Encoding 48 kHz mono
// costs about 1.5 % of one core (BenchmarkEncode, real-time factor ≈ 0.015).
//
// # Codec: github.com/thesyncim/gopus
//
// Writing an Opus encoder is out of scope, so the codec is gopus v0.1.1
// (BSD-3-Clause, pure Go, no dependencies, go 1.25), a port of libopus 1.6.1
// with SILK, CELT and hybrid modes. We import only its root package, which has
// no cgo. The alternative, github.com/tphakala/go-opus v0.1.2 (BSD-3-Clause,
// fixed-point libopus port), is 2.5 times faster and 1.7 MB smaller in the
// binary, but its encoder is CELT-only and it pulls in a second module
// (github.com/tphakala/simd). On our speech clips gopus matches libopus to
// within 0.1 dB, and at low bitrates and narrow input rates SILK and hybrid
// beat CELT clearly (log-spectral distance to the input at 8 kHz / 12 kbit/s:
// 4.4 dB against 10.7 dB; at 16 kHz / 32 kbit/s: 3.0 dB against 5.6 dB).
// gopus costs 2.3 MB of binary and ≈ 0.015 RTF, both acceptable for a TTS
// server whose model costs far more.
//
// # Quality measure
//
// Tests decode with ffmpeg's libopus decoder and compare with the input by a
// band log-spectral distance: 40 ms Hann-windowed frames, power summed in
// bands one quarter of a Bark wide... (see quality_test.go). A waveform SNR is
// not used, because hybrid and SILK coding do not preserve the waveform and
// different conforming decoders give SNRs 7 dB apart on the same packets.
package opus

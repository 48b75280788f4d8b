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
// concatenation of everything written is one valid .opus file. Each stream
// gets a random serial number, so two files may be chained (RFC 3533), though
// ffmpeg 5 decodes chained Opus poorly; serve one stream per response.
//
// # Rates and bitrates
//
// Opus codes 8, 12, 16, 24 and 48 kHz input natively (SupportedRate); resample
// other rates to 48 kHz first. The default bitrate, 32 kbit/s mono and 64
// kbit/s stereo, codes speech in hybrid or fullband mode close to transparent;
// constrained VBR and complexity 10 (the libopus defaults), application
// "audio", signal "voice". Encoding 48 kHz mono costs about 2 % of one core
// (BenchmarkEncode: CPU real-time factor 0.015–0.02).
//
// # Codec: github.com/thesyncim/gopus
//
// Writing an Opus encoder is out of scope, so the codec is gopus v0.1.1
// (BSD-3-Clause, pure Go, no dependencies, go 1.25), a port of libopus 1.6.1
// with SILK, CELT and hybrid modes. We import only its root package, which has
// no cgo. The alternative, github.com/tphakala/go-opus v0.1.2 (BSD-3-Clause,
// fixed-point libopus port), is 2.5 times faster and 1.7 MB smaller in the
// binary, but its encoder is CELT-only and it pulls in a second module
// (github.com/tphakala/simd). On our speech clips gopus's packets score within
// 0.05 dB of libopus's own (segmental SNR at 32 kbit/s, both through the same
// decoder), and at low bitrates and narrow input rates its SILK and hybrid
// modes beat CELT clearly (log-spectral distance to the input, all bins to
// 8 kHz, at 8 kHz / 12 kbit/s: 4.4 dB against 10.7 dB; at 16 kHz / 32 kbit/s:
// 3.0 dB against 5.6 dB).
// gopus costs 2.3 MB of binary and ≈ 0.02 RTF, both acceptable for a TTS
// server whose model costs far more.
//
// # Quality measure
//
// The tests decode with ffmpeg's libopus decoder and compare with the input by
// a band log-spectral distance: Hann-windowed frames of 20–32 ms, power summed
// in critical bands from 100 Hz to 7.7 kHz, the RMS over bands of the dB
// difference (bands more than 40 dB below the frame's loudest ignored),
// averaged over the frames within 40 dB of the loudest. Speech at the default
// bitrate measures 0.6–1.7 dB, at 12 kbit/s 2.1 dB, at 128 kbit/s 0.3 dB;
// a 6 dB level error measures 6 dB, dropping one frame in five 3–5 dB, one
// frame of delay 7–10 dB, swapped stereo channels 12–16 dB. A cross-correlation
// lag of at most 1 ms checks the alignment as well. A waveform SNR is not
// used: SILK and hybrid coding do not keep the waveform, and ffmpeg's two
// conforming Opus decoders give SNRs 7 dB apart on the same packets.
package opus

// Package mp3 encodes PCM audio as MPEG audio Layer III ("MP3"), the
// default response format of the OpenAI-compatible speech endpoint.
//
// It is a small constant-bitrate encoder written from ISO/IEC 11172-3
// (MPEG-1: 32, 44.1 and 48 kHz) and ISO/IEC 13818-3 (MPEG-2 low sampling
// frequencies: 16, 22.05 and 24 kHz), mono or stereo. Other rates,
// including the MPEG-2.5 rates 8, 11.025 and 12 kHz, must be resampled
// first; SupportedRate tells which. No pure-Go encoder under a permissive
// licence was available as a module (the shine ports are LGPL-derived), so
// the package implements the well-known baseline structure:
//
//   - the standard polyphase analysis filterbank (512-tap window C[i] =
//     D[i]/32 of Table B.3, 32 subbands);
//   - a long-block MDCT (36-point, sine window, 18 lines per subband) with
//     the decoder's frequency inversion undone and the alias-reduction
//     butterflies applied in the encoder sense;
//   - a power-law quantizer (|x|^(3/4), rounding offset 0.4054) with a
//     rate loop over global_gain: first the finest step that, used for all
//     granules and channels of the frame, fits the frame's bits (equal
//     noise across the frame), then each granule in turn takes a finer
//     step with the bits the others left;
//   - big_values/count1 partitioning with an exhaustive search over the
//     region0/region1 split and the cheapest table per region (tables are
//     derived from github.com/hajimehoshi/go-mp3's decoder trees by
//     gen_tables.go);
//   - no scalefactors (scalefac_compress = 0), no short blocks, no joint
//     stereo (stereo is coded as independent left and right channels), and
//     no bit reservoir: every frame's main_data_begin is 0, so each frame
//     decodes on its own and is written as soon as its input is complete.
//
// The noise is therefore spectrally flat at each granule's level (no
// psychoacoustic model); a low-pass that depends on the bitrate per channel
// keeps low bitrates from spending bits above the speech band (15 kHz at
// 64 kbit/s per channel).
//
// # Defaults
//
// With bitrate 0, NewEncoder uses 64 kbit/s for mono and 128 kbit/s for
// stereo (DefaultMonoBitrate, DefaultStereoBitrate): at 48 kHz that is 192
// or 384 bytes per 24 ms frame. Other bitrates must be one of the table
// values (SupportedBitrates); 44.1 and 22.05 kHz streams use the padding
// bit so that the average rate is exact.
//
// # Stream shape
//
// The output is bare frames: no ID3 tag, no Xing/LAME header, no trailer.
// Bodies encoded separately can therefore be concatenated (as a streaming
// server does when it sends one sentence after another) and decode as one
// stream whose duration is the sum. Players estimate the duration of a
// headerless CBR stream from its size, which is exact for CBR.
//
// # Delay
//
// Decoded output lags the input by Delay() = 1057 samples per channel:
// the analysis and synthesis filterbanks (481 samples) plus the MDCT
// overlap of one granule (576). Without a LAME tag, decoders such as
// ffmpeg's and browsers' do not trim anything, so a client that needs
// sample alignment drops the first 1057 samples. Close pads the input with
// silence until the last input sample, delayed, is inside a complete
// frame; a decoded stream is thus n+1057 samples rounded up to whole
// frames (1152 samples, or 576 at the MPEG-2 rates), and at least two
// frames, because ffmpeg does not recognize a file of one frame.
//
// # Quality
//
// Tests measure the segmental SNR of the ffmpeg decode after removing the
// delay: the mean over 20 ms segments of each segment's SNR, clamped to
// [-10, 40] dB, skipping segments quieter than -50 dBFS, worst channel of
// a stereo pair. On the 48 kHz speech test clip the default 64 kbit/s mono
// stream scores 30.6 dB (threshold 28 dB); half amplitude (5.9 dB), a
// -2 dB gain error (13.1 dB), a dropped frame (11.4 dB), a delay off by a
// granule or a frame (below 0 dB), inverted polarity and swapped stereo
// channels all fail the threshold.
//
// # Cost
//
// BenchmarkEncode: encoding 48 kHz mono speech at the default bitrate
// takes under 1 % of one core (real-time factor about 0.008 in CPU time)
// and Write does not allocate in steady state. An Encoder holds about
// 100 kB of state.
package mp3

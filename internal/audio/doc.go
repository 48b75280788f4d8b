// Package audio does nanovox's audio input and output: it sniffs and decodes
// the reference clips users upload (WAV, FLAC, MP3), validates them, resamples
// them to the codec rate exactly like torchaudio.functional.resample, and
// writes 16-bit PCM and WAV output.
//
// Layout conventions:
//   - A decoded Clip is planar: Clip.Samples[ch][i] is sample i of channel ch.
//   - A Reference (the codec input) is planar stereo at 48 kHz.
//   - Output helpers take interleaved float32 (L, R, L, R, … for stereo), the
//     layout of the codec's waveform and of the golden .f32 files.
//
// Sample values follow torchaudio/soundfile: an N-bit integer sample x becomes
// x / 2^(N-1) (8-bit unsigned: (x-128)/128); float samples pass through.
package audio

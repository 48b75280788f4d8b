// Package flac writes 16-bit FLAC, mono or stereo, as a stream: for the
// speech API's response_format "flac".
//
// # Format choices
//
// The encoder is small and written here rather than taken from
// github.com/mewkiz/flac (which the module uses for decoding): that
// library's encoder writes each frame in many small writes, allocates per
// frame, closes a writer that is an io.Closer, and leaves the write offset
// after STREAMINFO when it patches a seekable writer. This one builds each
// frame in a reused buffer and writes it with one Write call.
//
// Each channel of a block is coded with a fixed polynomial predictor of
// order 0–4 (chosen by the smallest sum of absolute residuals, as libFLAC
// estimates it), Rice-coded residuals with the partition order (0–8) and
// per-partition parameters chosen by estimated size, or as a constant or
// verbatim subframe when that is smaller. Stereo blocks are coded as
// left/right, left/side, side/right or mid/side, whichever estimate is
// smallest. There is no LPC: on testdata/en_2.wav (2.5 s of 48 kHz speech)
// the frames take 123 345 bytes, 51 % of 16-bit PCM, against 123 185 for
// ffmpeg's FLAC encoder limited to fixed predictors and 118 237 (4 % less)
// at its default level with LPC (ffmpeg 5.1).
//
// # Streaming
//
// Samples are quantized with audio.Quantize16, so decoding yields exactly
// round(clip(x, −1, 1)·32767). Blocks hold up to BlockSize (4096) samples per
// channel; Write emits every full block at once, and Flush emits the samples
// buffered so far as a shorter block, so nothing is held back after a Flush
// (except fewer than 16 samples per channel, FLAC's smallest block, which
// wait for the next Write or Close). Blocks of varying size need FLAC's
// variable-blocksize framing: every frame header carries its first sample's
// number instead of a frame number. The delay is always 0.
//
// The header is written by NewEncoder. Its STREAMINFO says "unknown" where
// a streamed body cannot know yet, as the format allows: total samples 0,
// frame sizes 0, MD5 all zero, block sizes 16–4096. If w is an io.Seeker
// (a file), Close rewrites STREAMINFO with the real values and seeks back
// to the end.
package flac

import (
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/nanovox/nanovox/internal/audio"
)

// BlockSize is the number of samples per channel in a full block (85 ms at
// 48 kHz), libFLAC's default for 16-bit audio.
const BlockSize = 4096

// minBlockSize is FLAC's smallest block (except a stream's last one).
const minBlockSize = 16

// MaxSampleRate is the highest rate a FLAC frame header can carry.
const MaxSampleRate = 655350

// SupportedRate reports whether NewEncoder accepts sampleRate: any rate
// from 1 Hz to 655350 Hz.
func SupportedRate(sampleRate int) bool {
	return sampleRate >= 1 && sampleRate <= MaxSampleRate
}

// ErrClosed is returned by Write and Flush after Close.
var ErrClosed = errors.New("flac: encoder is closed")

// headerSize is the size of "fLaC" and the STREAMINFO block.
const headerSize = 4 + 4 + 34

// Encoder writes a FLAC stream. It is not safe for concurrent use.
type Encoder struct {
	w        io.Writer
	seeker   io.WriteSeeker // w, if it can seek; start is where "fLaC" is
	start    int64
	rate     int
	channels int

	block [2][]int32 // samples not yet encoded, per channel
	next  int        // channel of the next incoming sample

	sample             uint64 // number of the next frame's first sample
	minBlock, maxBlock int    // over frames before the last, for Close
	lastBlock          int
	minFrame, maxFrame int
	md5                hash.Hash
	md5buf             []byte

	an     analyzer
	sub    [4]subframe // per signal: L or mono, R, mid, side
	side   []int32
	mid    []int32
	bw     bitWriter
	closed bool
	err    error // sticky write error
}

// NewEncoder returns an encoder that writes FLAC to w and writes the stream
// header. sampleRate is the input rate in Hz (see SupportedRate); channels is
// 1 or 2; bitrate must be 0, since FLAC is lossless and has no bitrate to
// choose.
func NewEncoder(w io.Writer, sampleRate, channels, bitrate int) (*Encoder, error) {
	if !SupportedRate(sampleRate) {
		return nil, fmt.Errorf("flac: sample rate %d Hz is outside 1–%d Hz", sampleRate, MaxSampleRate)
	}
	if channels != 1 && channels != 2 {
		return nil, fmt.Errorf("flac: %d channels; must be 1 or 2", channels)
	}
	if bitrate != 0 {
		return nil, fmt.Errorf("flac: bitrate %d; FLAC is lossless, so it must be 0", bitrate)
	}
	e := &Encoder{w: w, rate: sampleRate, channels: channels, md5: md5.New()}
	for c := range channels {
		e.block[c] = make([]int32, 0, BlockSize)
	}
	if channels == 2 {
		e.side = make([]int32, BlockSize)
		e.mid = make([]int32, BlockSize)
	}
	e.bw.buf = make([]byte, 0, 2*BlockSize*channels+64)
	// Only a writer that can report its position is patched at Close; a
	// pipe's Seek fails here.
	if ws, ok := w.(io.WriteSeeker); ok {
		if pos, err := ws.Seek(0, io.SeekCurrent); err == nil {
			e.seeker, e.start = ws, pos
		}
	}
	hdr := e.header(minBlockSize, BlockSize, 0, 0, 0, [16]byte{})
	if _, err := w.Write(hdr); err != nil {
		return nil, fmt.Errorf("flac: write header: %w", err)
	}
	return e, nil
}

// header returns "fLaC" and a STREAMINFO block, the only metadata block.
func (e *Encoder) header(minBlock, maxBlock, minFrame, maxFrame int, total uint64, sum [16]byte) []byte {
	b := make([]byte, headerSize)
	copy(b, "fLaC")
	binary.BigEndian.PutUint32(b[4:], 1<<31|34) // last block, type 0, length 34
	si := b[8:]
	binary.BigEndian.PutUint16(si[0:], uint16(minBlock))
	binary.BigEndian.PutUint16(si[2:], uint16(maxBlock))
	putUint24(si[4:], minFrame)
	putUint24(si[7:], maxFrame)
	v := uint64(e.rate)<<44 | uint64(e.channels-1)<<41 | uint64(16-1)<<36 | total&(1<<36-1)
	binary.BigEndian.PutUint64(si[10:], v)
	copy(si[18:], sum[:])
	return b
}

func putUint24(b []byte, v int) {
	if v >= 1<<24 {
		v = 0 // unknown
	}
	b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v)
}

// Delay is 0: FLAC decodes exactly the samples written, from the first.
func (e *Encoder) Delay() int { return 0 }

// Write encodes interleaved samples (float32, nominal range [-1, 1], values
// outside are clipped, NaN becomes 0). Every block completed by these
// samples is written to w before Write returns. samples may end in the
// middle of a frame; the next Write continues it.
func (e *Encoder) Write(samples []float32) error {
	if e.closed {
		return ErrClosed
	}
	if e.err != nil {
		return e.err
	}
	for _, x := range samples {
		e.block[e.next] = append(e.block[e.next], int32(audio.Quantize16(x)))
		e.next++
		if e.next < e.channels {
			continue
		}
		e.next = 0
		if len(e.block[0]) == BlockSize {
			if err := e.writeFrame(false); err != nil {
				return err
			}
		}
	}
	return nil
}

// Flush writes the whole frames buffered so far as one (shorter) block, so
// the bytes written are a complete stream up to here. Fewer than 16 buffered
// samples per channel stay buffered. It is cheap when nothing is buffered.
func (e *Encoder) Flush() error {
	if e.closed {
		return ErrClosed
	}
	if e.err != nil {
		return e.err
	}
	if e.frames() < minBlockSize {
		return nil
	}
	return e.writeFrame(false)
}

// frames is the number of whole frames buffered.
func (e *Encoder) frames() int { return len(e.block[e.channels-1]) }

// Close encodes the buffered remainder as the last block (an incomplete
// trailing frame is dropped), and if w is an io.Seeker rewrites STREAMINFO
// with the total sample count, MD5, block and frame sizes. It does not close
// w. Write after Close is an error.
func (e *Encoder) Close() error {
	if e.closed {
		return nil
	}
	e.closed = true
	if e.err != nil {
		return e.err
	}
	if e.frames() > 0 {
		if err := e.writeFrame(true); err != nil {
			return err
		}
	}
	if e.seeker == nil {
		return nil
	}
	minBlock, maxBlock := e.minBlock, e.maxBlock
	if maxBlock == 0 { // one block or none: it is the last, the only size
		minBlock, maxBlock = e.lastBlock, e.lastBlock
	}
	var sum [16]byte
	e.md5.Sum(sum[:0])
	hdr := e.header(minBlock, maxBlock, e.minFrame, e.maxFrame, e.sample, sum)
	end, err := e.seeker.Seek(0, io.SeekCurrent)
	if err == nil {
		_, err = e.seeker.Seek(e.start, io.SeekStart)
	}
	if err == nil {
		_, err = e.seeker.Write(hdr)
	}
	if err == nil {
		_, err = e.seeker.Seek(end, io.SeekStart)
	}
	if err != nil {
		return fmt.Errorf("flac: rewrite STREAMINFO: %w", err)
	}
	return nil
}

// writeFrame encodes the buffered whole frames as one block and writes it.
func (e *Encoder) writeFrame(last bool) error {
	n := e.frames()
	bw := &e.bw
	bw.reset(bw.buf)
	if e.channels == 1 {
		x := e.block[0][:n]
		e.an.analyze(&e.sub[0], x, 16)
		e.frameHeader(n, chanIndependent)
		e.an.writeSubframe(bw, &e.sub[0], x, 16)
	} else {
		assign := e.chooseStereo(n)
		e.frameHeader(n, assign)
		e.writeStereo(n, assign)
	}
	bw.align()
	crc := crc16(bw.buf)
	bw.buf = append(bw.buf, byte(crc>>8), byte(crc))

	e.hashSamples(n)
	if _, err := e.w.Write(bw.buf); err != nil {
		e.err = fmt.Errorf("flac: write frame: %w", err)
		return e.err
	}
	size := len(bw.buf)
	if e.minFrame == 0 || size < e.minFrame {
		e.minFrame = size
	}
	e.maxFrame = max(e.maxFrame, size)
	if !last {
		if e.minBlock == 0 || n < e.minBlock {
			e.minBlock = n
		}
		e.maxBlock = max(e.maxBlock, n)
	}
	e.lastBlock = n
	e.sample += uint64(n)
	// Keep an incomplete trailing frame (a left sample without its right).
	for c := range e.channels {
		e.block[c] = e.block[c][:copy(e.block[c], e.block[c][n:])]
	}
	return nil
}

// hashSamples adds the first n frames to the MD5 of the stream: interleaved
// signed 16-bit little-endian samples, as STREAMINFO defines it.
func (e *Encoder) hashSamples(n int) {
	b := e.md5buf[:0]
	for i := range n {
		for c := range e.channels {
			v := uint16(e.block[c][i])
			b = append(b, byte(v), byte(v>>8))
		}
	}
	e.md5.Write(b)
	e.md5buf = b
}

// Channel assignments of the frame header (for mono and left/right it is
// the channel count minus one).
const (
	chanIndependent = -1
	chanLeftSide    = 8
	chanSideRight   = 9
	chanMidSide     = 10
)

// chooseStereo analyzes left, right, mid and side of an n-sample block and
// returns the cheapest channel assignment.
func (e *Encoder) chooseStereo(n int) int {
	l, r := e.block[0][:n], e.block[1][:n]
	side, mid := e.side[:n], e.mid[:n]
	for i := range n {
		side[i] = l[i] - r[i]
		mid[i] = (l[i] + r[i]) >> 1
	}
	e.an.analyze(&e.sub[0], l, 16)
	e.an.analyze(&e.sub[1], r, 16)
	e.an.analyze(&e.sub[2], mid, 16)
	e.an.analyze(&e.sub[3], side, 17) // side needs one more bit
	bl, br, bm, bs := e.sub[0].bits, e.sub[1].bits, e.sub[2].bits, e.sub[3].bits
	assign, best := chanIndependent, bl+br
	if b := bl + bs; b < best {
		assign, best = chanLeftSide, b
	}
	if b := bs + br; b < best {
		assign, best = chanSideRight, b
	}
	if bm+bs < best {
		assign = chanMidSide
	}
	return assign
}

// writeStereo writes the two subframes of the chosen assignment. The
// analyses are kept in e.sub; writeSubframe recomputes the residuals.
func (e *Encoder) writeStereo(n, assign int) {
	l, r := e.block[0][:n], e.block[1][:n]
	side, mid := e.side[:n], e.mid[:n]
	bw := &e.bw
	switch assign {
	case chanIndependent:
		e.an.writeSubframe(bw, &e.sub[0], l, 16)
		e.an.writeSubframe(bw, &e.sub[1], r, 16)
	case chanLeftSide:
		e.an.writeSubframe(bw, &e.sub[0], l, 16)
		e.an.writeSubframe(bw, &e.sub[3], side, 17)
	case chanSideRight:
		e.an.writeSubframe(bw, &e.sub[3], side, 17)
		e.an.writeSubframe(bw, &e.sub[1], r, 16)
	case chanMidSide:
		e.an.writeSubframe(bw, &e.sub[2], mid, 16)
		e.an.writeSubframe(bw, &e.sub[3], side, 17)
	}
}

// frameHeader appends the header of an n-sample frame and its CRC-8. The
// framing is variable-blocksize: the header carries the first sample's
// number.
func (e *Encoder) frameHeader(n, assign int) {
	if assign == chanIndependent {
		assign = e.channels - 1
	}
	bsCode, bsExtra, bsBits := blockSizeCode(n)
	srCode, srExtra, srBits := sampleRateCode(e.rate)
	b := e.bw.buf
	start := len(b)
	b = append(b, 0xFF, 0xF9, byte(bsCode<<4|srCode), byte(assign<<4|4<<1)) // 4<<1: 16-bit samples
	b = appendUTF8(b, e.sample)
	for i := bsBits - 8; i >= 0; i -= 8 {
		b = append(b, byte(bsExtra>>i))
	}
	for i := srBits - 8; i >= 0; i -= 8 {
		b = append(b, byte(srExtra>>i))
	}
	b = append(b, crc8(b[start:]))
	e.bw.buf = b
}

// blockSizeCode returns the header's 4-bit block-size code and the extra
// field (bits long) that follows the frame number.
func blockSizeCode(n int) (code, extra, bits int) {
	switch n {
	case 192:
		return 1, 0, 0
	case 576, 1152, 2304, 4608:
		return 2 + log2(n/576), 0, 0
	case 256, 512, 1024, 2048, 4096, 8192, 16384, 32768:
		return 8 + log2(n/256), 0, 0
	}
	if n <= 256 {
		return 6, n - 1, 8
	}
	return 7, n - 1, 16
}

func log2(n int) int {
	k := 0
	for n > 1 {
		n >>= 1
		k++
	}
	return k
}

// sampleRateCode returns the header's 4-bit sample-rate code and its extra
// field; code 0 defers to STREAMINFO for rates the header cannot spell.
func sampleRateCode(rate int) (code, extra, bits int) {
	switch rate {
	case 88200:
		return 1, 0, 0
	case 176400:
		return 2, 0, 0
	case 192000:
		return 3, 0, 0
	case 8000:
		return 4, 0, 0
	case 16000:
		return 5, 0, 0
	case 22050:
		return 6, 0, 0
	case 24000:
		return 7, 0, 0
	case 32000:
		return 8, 0, 0
	case 44100:
		return 9, 0, 0
	case 48000:
		return 10, 0, 0
	case 96000:
		return 11, 0, 0
	}
	switch {
	case rate%1000 == 0 && rate/1000 <= 255:
		return 12, rate / 1000, 8
	case rate <= 65535:
		return 13, rate, 16
	case rate%10 == 0 && rate/10 <= 65535:
		return 14, rate / 10, 16
	}
	return 0, 0, 0
}

// appendUTF8 appends v in FLAC's extended UTF-8 coding (up to 36 bits in
// seven bytes), used for the frame or sample number.
func appendUTF8(b []byte, v uint64) []byte {
	if v < 0x80 {
		return append(b, byte(v))
	}
	// n continuation bytes of 6 bits; the lead byte holds 6−n bits.
	n := 1
	for v >= 1<<(6-n+6*n) && n < 6 {
		n++
	}
	lead := byte(0xFF << (7 - n)) // n+1 leading ones
	b = append(b, lead|byte(v>>(6*n)))
	for i := n - 1; i >= 0; i-- {
		b = append(b, 0x80|byte(v>>(6*i))&0x3F)
	}
	return b
}

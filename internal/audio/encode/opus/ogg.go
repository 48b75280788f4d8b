package opus

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Ogg page layer (RFC 3533) for a single logical stream. We write it ourselves
// rather than use the codec module's container because the server's streaming
// contract needs exact control over when a page ends (Flush) and over the final
// page's granule position (end trimming); the whole thing is a header, a lacing
// table and a CRC.

const (
	pageHeaderLen = 27
	maxSegments   = 255

	flagBOS = 0x02 // first page of a logical stream
	flagEOS = 0x04 // last page of a logical stream
)

// crcTable is the lookup table for the Ogg CRC-32: polynomial 0x04c11db7,
// most significant bit first, initial value 0, no final inversion (RFC 3533
// §6). This is not the IEEE CRC of hash/crc32, which is bit-reflected.
var crcTable = func() (t [256]uint32) {
	for i := range t {
		r := uint32(i) << 24
		for range 8 {
			if r&0x80000000 != 0 {
				r = r<<1 ^ 0x04c11db7
			} else {
				r <<= 1
			}
		}
		t[i] = r
	}
	return t
}()

func oggCRC(crc uint32, p []byte) uint32 {
	for _, b := range p {
		crc = crc<<8 ^ crcTable[byte(crc>>24)^b]
	}
	return crc
}

// pageWriter collects whole packets into one pending Ogg page and writes it on
// demand. Packets never span pages: an Opus packet is at most 1275 bytes per
// 20 ms frame (RFC 6716 §3.2.1), which needs at most 6 lacing values.
type pageWriter struct {
	serial uint32
	seq    uint32 // page sequence number of the next page
	segs   []byte // lacing values of the pending page
	body   []byte // packet data of the pending page
	n      int    // packets on the pending page
	buf    []byte // header + lacing + body of the page being written, reused
}

// fits reports whether a packet of size bytes still fits on the pending page.
func (p *pageWriter) fits(size int) bool {
	return len(p.segs)+size/255+1 <= maxSegments
}

// add appends a packet to the pending page; the caller checks fits first.
func (p *pageWriter) add(packet []byte) {
	size := len(packet)
	for size >= 255 {
		p.segs = append(p.segs, 255)
		size -= 255
	}
	// A final lacing value below 255 (possibly 0) ends the packet.
	p.segs = append(p.segs, byte(size))
	p.body = append(p.body, packet...)
	p.n++
}

// flush writes the pending page with the given header flags and granule
// position and starts an empty one. Callers write a page only when it holds at
// least one packet.
func (p *pageWriter) flush(w io.Writer, flags byte, granule int64) error {
	b := p.buf[:0]
	b = append(b, "OggS"...)
	b = append(b, 0, flags) // stream structure version 0
	b = binary.LittleEndian.AppendUint64(b, uint64(granule))
	b = binary.LittleEndian.AppendUint32(b, p.serial)
	b = binary.LittleEndian.AppendUint32(b, p.seq)
	b = append(b, 0, 0, 0, 0) // CRC, filled in below
	b = append(b, byte(len(p.segs)))
	b = append(b, p.segs...)
	b = append(b, p.body...)
	binary.LittleEndian.PutUint32(b[22:], oggCRC(0, b))
	p.buf = b
	p.seq++
	p.segs = p.segs[:0]
	p.body = p.body[:0]
	p.n = 0
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("opus: write Ogg page %d: %w", p.seq-1, err)
	}
	return nil
}

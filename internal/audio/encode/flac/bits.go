package flac

// bitWriter appends big-endian bit fields to a byte slice, MSB first, as
// FLAC frames are laid out.
type bitWriter struct {
	buf  []byte
	acc  uint64 // pending bits, right-aligned
	nacc uint   // number of pending bits (< 8 between calls)
}

func (b *bitWriter) reset(buf []byte) {
	b.buf, b.acc, b.nacc = buf[:0], 0, 0
}

// write appends the low n bits of v (n ≤ 56).
func (b *bitWriter) write(v uint64, n uint) {
	b.acc = b.acc<<n | v&(1<<n-1)
	b.nacc += n
	for b.nacc >= 8 {
		b.nacc -= 8
		b.buf = append(b.buf, byte(b.acc>>b.nacc))
	}
}

// writeSigned appends v as an n-bit two's complement field.
func (b *bitWriter) writeSigned(v int32, n uint) {
	b.write(uint64(uint32(v)), n)
}

// writeZeros appends n zero bits.
func (b *bitWriter) writeZeros(n uint) {
	for n > 32 {
		b.write(0, 32)
		n -= 32
	}
	b.write(0, n)
}

// align pads with zero bits to a byte boundary.
func (b *bitWriter) align() {
	if b.nacc > 0 {
		b.write(0, 8-b.nacc)
	}
}

// writeRice appends the Rice code of zig-zag value u with parameter k: u>>k
// zeros, a one, and the low k bits of u.
func (b *bitWriter) writeRice(u uint32, k uint) {
	q := uint(u >> k)
	if q+1+k <= 48 {
		b.write(uint64(1)<<k|uint64(u)&(1<<k-1), q+1+k)
		return
	}
	b.writeZeros(q)
	b.write(uint64(1)<<k|uint64(u)&(1<<k-1), 1+k)
}

// crc8 is FLAC's frame-header CRC: polynomial x⁸+x²+x+1 (0x07), initial
// value 0, no reflection.
func crc8(b []byte) byte {
	var c byte
	for _, x := range b {
		c = crc8Table[c^x]
	}
	return c
}

// crc16 is FLAC's frame CRC: polynomial x¹⁶+x¹⁵+x²+1 (0x8005), initial
// value 0, no reflection.
func crc16(b []byte) uint16 {
	var c uint16
	for _, x := range b {
		c = c<<8 ^ crc16Table[byte(c>>8)^x]
	}
	return c
}

var (
	crc8Table  [256]byte
	crc16Table [256]uint16
)

func init() {
	for i := range 256 {
		c8 := byte(i)
		for range 8 {
			if c8&0x80 != 0 {
				c8 = c8<<1 ^ 0x07
			} else {
				c8 <<= 1
			}
		}
		crc8Table[i] = c8
		c16 := uint16(i) << 8
		for range 8 {
			if c16&0x8000 != 0 {
				c16 = c16<<1 ^ 0x8005
			} else {
				c16 <<= 1
			}
		}
		crc16Table[i] = c16
	}
}

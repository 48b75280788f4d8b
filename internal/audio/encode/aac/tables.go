package aac

// sampleRates lists the sampling frequencies in the order of
// sampling_frequency_index (ISO/IEC 14496-3, table 1.18); index 12 (7350 Hz)
// and above are not supported by this encoder.
var sampleRates = [...]int{96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000}

// Scalefactor band offsets for long windows (1024 spectral lines), from
// ISO/IEC 14496-3 subpart 4, tables 4.129 to 4.131 (swb_offset_long_window),
// checked against the Apache-2.0 VisualOn encoder's sfBandTabLong. Each table
// starts at 0 and ends at 1024; tables_test.go checks that they increase and
// have the number of bands the standard gives (num_swb_long_window).
var (
	swbOffset96 = []uint16{
		0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52,
		56, 64, 72, 80, 88, 96, 108, 120, 132, 144, 156, 172, 188, 212,
		240, 276, 320, 384, 448, 512, 576, 640, 704, 768, 832, 896, 960, 1024,
	}
	swbOffset64 = []uint16{
		0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 64,
		72, 80, 88, 100, 112, 124, 140, 156, 172, 192, 216, 240, 268, 304, 344, 384,
		424, 464, 504, 544, 584, 624, 664, 704, 744, 784, 824, 864, 904, 944, 984, 1024,
	}
	swbOffset48 = []uint16{
		0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 48, 56, 64, 72, 80, 88,
		96, 108, 120, 132, 144, 160, 176, 196, 216, 240, 264, 292, 320, 352, 384, 416, 448,
		480, 512, 544, 576, 608, 640, 672, 704, 736, 768, 800, 832, 864, 896, 928, 1024,
	}
	swbOffset32 = []uint16{
		0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 48, 56, 64, 72, 80, 88, 96,
		108, 120, 132, 144, 160, 176, 196, 216, 240, 264, 292, 320, 352, 384, 416, 448, 480, 512,
		544, 576, 608, 640, 672, 704, 736, 768, 800, 832, 864, 896, 928, 960, 992, 1024,
	}
	swbOffset24 = []uint16{
		0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 52, 60, 68, 76,
		84, 92, 100, 108, 116, 124, 136, 148, 160, 172, 188, 204, 220, 240, 260, 284,
		308, 336, 364, 396, 432, 468, 508, 552, 600, 652, 704, 768, 832, 896, 960, 1024,
	}
	swbOffset16 = []uint16{
		0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 100, 112, 124,
		136, 148, 160, 172, 184, 196, 212, 228, 244, 260, 280, 300, 320, 344, 368,
		396, 424, 456, 492, 532, 572, 616, 664, 716, 772, 832, 896, 960, 1024,
	}
	swbOffset8 = []uint16{
		0, 12, 24, 36, 48, 60, 72, 84, 96, 108, 120, 132, 144, 156,
		172, 188, 204, 220, 236, 252, 268, 288, 308, 328, 348, 372, 396, 420,
		448, 476, 508, 544, 580, 620, 664, 712, 764, 820, 880, 944, 1024,
	}
)

// swbOffsets maps sampling_frequency_index to its long-window band table.
var swbOffsets = [...][]uint16{
	swbOffset96, swbOffset96, swbOffset64, swbOffset48, swbOffset48, swbOffset32,
	swbOffset24, swbOffset24, swbOffset16, swbOffset16, swbOffset16, swbOffset8,
}

// numSwbLong is num_swb_long_window per sampling_frequency_index
// (ISO/IEC 14496-3 subpart 4, table 4.129 onwards); it is checked against the
// offset tables in tables_test.go.
var numSwbLong = [...]int{41, 41, 47, 49, 49, 51, 47, 47, 43, 43, 43, 40}

// huffBook describes one spectral Huffman codebook (ISO/IEC 14496-3 subpart
// 4, table 4.152): tuple size, whether values are coded as magnitudes followed
// by sign bits, and the largest magnitude it codes (16 in book 11 means
// "escape").
type huffBook struct {
	dim      int // 4 or 2 values per codeword
	unsigned bool
	maxAbs   int
	mod      int // values per dimension: 2*maxAbs+1 (signed) or maxAbs+1 (unsigned)
	codes    []uint16
	lens     []uint8
	cost     []uint8 // lens plus the sign bits of unsigned books
}

func init() {
	for cb := 1; cb < len(books); cb++ {
		bk := &books[cb]
		bk.cost = make([]uint8, len(bk.lens))
		for idx, l := range bk.lens {
			signs := 0
			if bk.unsigned {
				for i, v := 0, idx; i < bk.dim; i, v = i+1, v/bk.mod {
					if v%bk.mod != 0 {
						signs++
					}
				}
			}
			bk.cost[idx] = l + uint8(signs)
		}
	}
}

var books = [12]huffBook{
	{}, // book 0: ZERO_HCB, nothing transmitted
	{dim: 4, maxAbs: 1, mod: 3, codes: book1Codes[:], lens: book1Lens[:]},
	{dim: 4, maxAbs: 1, mod: 3, codes: book2Codes[:], lens: book2Lens[:]},
	{dim: 4, unsigned: true, maxAbs: 2, mod: 3, codes: book3Codes[:], lens: book3Lens[:]},
	{dim: 4, unsigned: true, maxAbs: 2, mod: 3, codes: book4Codes[:], lens: book4Lens[:]},
	{dim: 2, maxAbs: 4, mod: 9, codes: book5Codes[:], lens: book5Lens[:]},
	{dim: 2, maxAbs: 4, mod: 9, codes: book6Codes[:], lens: book6Lens[:]},
	{dim: 2, unsigned: true, maxAbs: 7, mod: 8, codes: book7Codes[:], lens: book7Lens[:]},
	{dim: 2, unsigned: true, maxAbs: 7, mod: 8, codes: book8Codes[:], lens: book8Lens[:]},
	{dim: 2, unsigned: true, maxAbs: 12, mod: 13, codes: book9Codes[:], lens: book9Lens[:]},
	{dim: 2, unsigned: true, maxAbs: 12, mod: 13, codes: book10Codes[:], lens: book10Lens[:]},
	{dim: 2, unsigned: true, maxAbs: 16, mod: 17, codes: book11Codes[:], lens: book11Lens[:]},
}

package mp3

//go:generate go run gen_tables.go

// pairCode is a big_values Huffman table for value pairs 0..size-1.
type pairCode struct {
	size int
	code []uint32
	len  []uint8
}

// quadCode is a count1 Huffman table.
type quadCode struct {
	code [16]uint8
	len  [16]uint8
}

// Bitrates in kbit/s by bitrate_index (1..14) for Layer III, ISO/IEC
// 11172-3 Table 3-B.2 (MPEG-1) and ISO/IEC 13818-3 (MPEG-2 LSF).
var (
	bitratesMPEG1 = [15]int{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320}
	bitratesLSF   = [15]int{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160}
)

// sfBandLong gives the long-block scalefactor band boundaries (22 bands) for
// each supported sample rate, ISO/IEC 11172-3 Table B.8 and ISO/IEC 13818-3
// Table B.2. The encoder needs them only to place the Huffman region
// boundaries, which the decoder derives from the same tables.
var sfBandLong = map[int]*[23]int{
	44100: {0, 4, 8, 12, 16, 20, 24, 30, 36, 44, 52, 62, 74, 90, 110, 134, 162, 196, 238, 288, 342, 418, 576},
	48000: {0, 4, 8, 12, 16, 20, 24, 30, 36, 42, 50, 60, 72, 88, 106, 128, 156, 190, 230, 276, 330, 384, 576},
	32000: {0, 4, 8, 12, 16, 20, 24, 30, 36, 44, 54, 66, 82, 102, 126, 156, 194, 240, 296, 364, 448, 550, 576},
	22050: {0, 6, 12, 18, 24, 30, 36, 44, 54, 66, 80, 96, 116, 140, 168, 200, 238, 284, 336, 396, 464, 522, 576},
	24000: {0, 6, 12, 18, 24, 30, 36, 44, 54, 66, 80, 96, 114, 136, 162, 194, 232, 278, 332, 394, 464, 540, 576},
	16000: {0, 6, 12, 18, 24, 30, 36, 44, 54, 66, 80, 96, 116, 140, 168, 200, 238, 284, 336, 396, 464, 522, 576},
}

// rateIndex is the header's sampling_frequency field; MPEG-2 LSF reuses the
// codes at half the rate.
var rateIndex = map[int]int{44100: 0, 48000: 1, 32000: 2, 22050: 0, 24000: 1, 16000: 2}

// linbits of big_values tables 16..31, ISO/IEC 11172-3 Table B.7.
var linbits = [32]int{16: 1, 2, 3, 4, 6, 8, 10, 13, 4, 5, 6, 7, 8, 9, 11, 13}

// smallTables are the big_values tables without linbits, with the largest
// value each can code.
var smallTables = [...]struct{ table, max int }{
	{1, 1}, {2, 2}, {3, 2}, {5, 3}, {6, 3}, {7, 5}, {8, 5}, {9, 5},
	{10, 7}, {11, 7}, {12, 7}, {13, 15}, {15, 15},
}

// Alias-reduction coefficients: c[i] of ISO/IEC 11172-3 Table B.9 give
// cs = 1/sqrt(1+c^2) and ca = c/sqrt(1+c^2).
var aliasC = [8]float64{-0.6, -0.535, -0.33, -0.185, -0.095, -0.041, -0.0142, -0.0037}

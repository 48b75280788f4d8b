//go:build (amd64 || arm64) && gc && !purego

package tensor

import "math"

// The tile driver of AttendWindows' vector kernels, shared by the
// architectures that have them: each architecture provides its kernel sets
// (windowKernelsFor) and how it cuts rows into tiles (windowTileShape), in
// window_amd64.go and window_arm64.go.

// windowKernels are the kernels for one vector width and tile width (see
// _asm/windows.go): pv[g-1] and pvMask[g-1] accumulate g output dimensions.
type windowKernels struct {
	scores  func(qT, k *float32, stride, n, hd int, scale float32, sT *float32, pf *float32)
	softmax func(sT *float32, n, stride int, win *int32)
	pv      []func(oT, pT, v *float32, stride, n int)
	pvMask  []func(oT, pT, v *float32, stride, n int, win *int32, j0 int)
	// The same for bfloat16 keys and values (KV.K16), widened exactly in
	// the kernels.
	scoresBF func(qT *float32, k *uint16, stride, n, hd int, scale float32, sT *float32, pf *uint16)
	// Scores as bfloat16 dot products (KV.BF16Scores; AVX512_BF16), nil for 8×2.
	// pf: rows prefetched with the keys (the same rows' values).
	scoresDot func(qT *float32, k *uint16, stride, n, hd int, scale float32, sT *float32, pf *uint16)
	pvBF      []func(oT, pT *float32, v *uint16, stride, n int)
	pvMaskBF  []func(oT, pT *float32, v *uint16, stride, n int, win *int32, j0 int)
	// Weighted sums as bfloat16 dot products over value pairs (KV.BF16Sums;
	// AVX512_BF16), nil for 8×2: the probabilities' conversion to pairs
	// and the sums over pairs (_asm/pvdot.go), pvDot[g/2−1] for an even
	// number g of dimensions (head sizes are even with BF16Scores).
	pairsDot  func(pT, sT *float32, n int, win *int32, j0 int)
	pvDot     []func(oT, pT *float32, v *uint16, stride, n int)
	pvDotMask []func(oT, pT *float32, v *uint16, stride, n int, win *int32, j0 int)
}

// windowTiles cuts nq rows into tiles of the shapes windowTileShape
// chooses, or 8-row chunks of the portable code.
func windowTiles(dst []windowTile, nq int) []windowTile {
	for r0 := 0; r0 < nq; {
		rem := nq - r0
		t := windowTile{r0: r0}
		t.lanes, t.vectors = windowTileShape(rem)
		t.n = min(rem, 8)
		if t.lanes > 0 {
			t.n = min(rem, t.lanes*t.vectors)
		}
		dst = append(dst, t)
		r0 += t.n
	}
	return dst
}

// dotQueries writes the tile's queries of one head (at column off) into qT
// as the pairs of the dot-product scores: [hd/2][R] lanes of two bfloat16
// values (rounded as the products round their inputs), lanes past the
// tile's rows zero.
func dotQueries(qT []float32, j *windowsJob, t *windowTile, off, R int) {
	hd := j.hd
	var b [256]uint16
	for r := range R {
		if r >= t.n {
			for p := range hd / 2 {
				qT[p*R+r] = 0
			}
			continue
		}
		i := t.r0 + r
		qr := j.q[i*j.ldq+off : i*j.ldq+off+hd]
		for c0 := 0; c0 < hd; c0 += len(b) {
			part := qr[c0:min(c0+len(b), hd)]
			RoundBF16(b[:len(part)], part)
			for c := 0; c+1 < len(part); c += 2 {
				qT[(c0+c)/2*R+r] = math.Float32frombits(uint32(b[c]) | uint32(b[c+1])<<16)
			}
		}
	}
}

// windowKeyBlock is how many keys the weighted sums take per pass over the
// head's dimension groups, so that a block of probabilities stays in L1
// across the groups. Splitting the keys into blocks keeps every output one
// chain over the keys in order, so the block size never changes a result.
const windowKeyBlock = 256

// windowTileSIMD computes head h of tile t with the vector kernels. The
// tile's scratch, from *sp: qT and oT [hd][R], sT [keys][R], R = the tile's
// lanes × vectors.
func windowTileSIMD(j *windowsJob, t *windowTile, h int, sp *[]float32) {
	L, V := t.lanes, t.vectors
	R := L * V
	hd, kv := j.hd, &j.kv
	off, koff := h*hd, h*kv.headStride(hd)
	if t.kmax == t.kmin {
		for i := t.r0; i < t.r0+t.n; i++ {
			clear(j.out[i*j.ldo+off : i*j.ldo+off+hd])
		}
		return
	}
	kn := windowKernelsFor(L, V)
	n := t.kmax - t.kmin
	// With BF16Sums the scores have a slot before and after the tile's keys
	// (a pair's key outside the tile), then come the pairs.
	pad, np, j0 := 0, t.np, t.pj0
	if kv.BF16Sums {
		pad = 1
	}
	need := 2*hd*R + (n+2*pad)*R + np*R
	buf := growScratch(sp, need)
	qT, oT := buf[:hd*R], buf[hd*R:2*hd*R]
	sT := buf[2*hd*R+pad*R : 2*hd*R+(n+pad)*R]
	bf := kv.bf16() // bfloat16 keys and values: the BF kernels
	if kv.BF16Scores {
		dotQueries(qT, j, t, off, R)
	} else {
		for r := range R {
			if r >= t.n {
				for c := range hd {
					qT[c*R+r] = 0
				}
				continue
			}
			i := t.r0 + r
			qr := j.q[i*j.ldq+off : i*j.ldq+off+hd]
			for c, v := range qr {
				qT[c*R+r] = v
			}
		}
	}
	for _, r := range t.runs {
		if kv.BF16Scores {
			k := kv.K16[r.row*kv.Stride+koff:]
			if HasBF16Dot() && kn.scoresDot != nil {
				// The values of the same rows (pairs of rows with BF16Sums:
				// the same bytes) are prefetched for the weighted sums.
				kn.scoresDot(&qT[0], &k[0], kv.Stride, r.n, hd, j.scale, &sT[r.j0*R], &kv.V16[r.row*kv.Stride+koff])
			} else {
				scoresDotGo(qT, k, kv.Stride, r.n, hd, j.scale, sT[r.j0*R:], R)
			}
			continue
		}
		// The score kernels prefetch the same rows' values (pf) for the
		// weighted sums.
		if bf {
			kn.scoresBF(&qT[0], &kv.K16[r.row*kv.Stride+koff], kv.Stride, r.n, hd, j.scale, &sT[r.j0*R], &kv.V16[r.row*kv.Stride+koff])
			continue
		}
		kn.scores(&qT[0], &kv.K[r.row*kv.Stride+koff], kv.Stride, r.n, hd, j.scale, &sT[r.j0*R], &kv.V[r.row*kv.Stride+koff])
	}
	for v := range V {
		kn.softmax(&sT[v*L], n, R, &t.win[v*2*L])
	}
	clear(oT)
	if kv.BF16Sums {
		sTp := buf[2*hd*R : 2*hd*R+(n+2)*R]
		pT := buf[2*hd*R+(n+2)*R : need]
		windowPVDot(j, t, kn, koff, oT, sTp[(1+j0)*R:], pT)
	} else {
		windowPV(j, t, kn, koff, oT, sT)
	}
	for r := range t.n {
		i := t.r0 + r
		o := j.out[i*j.ldo+off : i*j.ldo+off+hd]
		for c := range o {
			o[c] = oT[c*R+r]
		}
	}
}

// windowPV accumulates the tile's weighted sums of one head into oT from
// the probabilities sT.
func windowPV(j *windowsJob, t *windowTile, kn *windowKernels, koff int, oT, sT []float32) {
	R, hd, kv, n := t.lanes*t.vectors, j.hd, &j.kv, t.kmax-t.kmin
	bf := kv.bf16()
	win := &t.win[0]
	G := len(kn.pv)
	for b0 := 0; b0 < n; b0 += windowKeyBlock {
		b1 := min(b0+windowKeyBlock, n)
		for g := 0; g < hd; g += G {
			gs := min(G, hd-g)
			for _, r := range t.runs {
				a, e := max(r.j0, b0), min(r.j0+r.n, b1)
				if a >= e {
					continue
				}
				o := (r.row+a-r.j0)*kv.Stride + koff + g
				switch {
				case bf && r.masked:
					kn.pvMaskBF[gs-1](&oT[g*R], &sT[a*R], &kv.V16[o], kv.Stride, e-a, win, a)
				case bf:
					kn.pvBF[gs-1](&oT[g*R], &sT[a*R], &kv.V16[o], kv.Stride, e-a)
				case r.masked:
					kn.pvMask[gs-1](&oT[g*R], &sT[a*R], &kv.V[o], kv.Stride, e-a, win, a)
				default:
					kn.pv[gs-1](&oT[g*R], &sT[a*R], &kv.V[o], kv.Stride, e-a)
				}
			}
		}
	}
}

// windowPVDot is windowPV for KV.BF16Sums: the probabilities sT from the
// tile's key pj0 (0 or −1 so that pairs start on even rows) become the np
// pairs pT, then the kernels sum over the pairs in key blocks and runs.
func windowPVDot(j *windowsJob, t *windowTile, kn *windowKernels, koff int, oT, sT, pT []float32) {
	L, R, hd, kv := t.lanes, t.lanes*t.vectors, j.hd, &j.kv
	np, j0 := t.np, t.pj0
	simd := HasBF16Dot() && kn.pairsDot != nil
	if simd {
		kn.pairsDot(&pT[0], &sT[0], np, &t.win[0], j0)
	} else {
		pairsDotGo(pT, sT, np, R, L, t.win[:], j0)
	}
	G := 2 * len(kn.pvDot)
	if !simd {
		G = 16
	}
	for b0 := 0; b0 < np; b0 += windowKeyBlock / 2 {
		b1 := min(b0+windowKeyBlock/2, np)
		for g := 0; g < hd; g += G {
			gs := min(G, hd-g) // even: so are G and hd
			for _, r := range t.pruns {
				a, e := max(r.j0, b0), min(r.j0+r.n, b1)
				if a >= e {
					continue
				}
				o := koff + (r.row+2*(a-r.j0))*hd + 2*g
				switch {
				case !simd && r.masked:
					pvDotGo(oT[g*R:], pT[a*R:], kv.V16[o:], kv.Stride, e-a, gs, R, L, t.win[:], j0+2*a)
				case !simd:
					pvDotGo(oT[g*R:], pT[a*R:], kv.V16[o:], kv.Stride, e-a, gs, R, L, nil, 0)
				case r.masked:
					kn.pvDotMask[gs/2-1](&oT[g*R], &pT[a*R], &kv.V16[o], kv.Stride, e-a, &t.win[0], j0+2*a)
				default:
					kn.pvDot[gs/2-1](&oT[g*R], &pT[a*R], &kv.V16[o], kv.Stride, e-a)
				}
			}
		}
	}
}

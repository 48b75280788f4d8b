package codec

// SetMLPRows sets the MLP's row block (see mlpRows) and returns a function
// that restores it.
func SetMLPRows(n int) (restore func()) {
	old := mlpRows
	mlpRows = n
	return func() { mlpRows = old }
}

// F32Attention returns o with Int8's non-int8 products kept in float32, as
// on CPUs without AVX512_BF16.
func F32Attention(o Options) Options {
	o.f32Attention = true
	return o
}

// UsesBF16Dot reports whether o's non-int8 products are bfloat16 dot products.
func UsesBF16Dot(o Options) bool { return o.dot() }

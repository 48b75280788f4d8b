package codec

// SetMLPRows sets the MLP's row block (see mlpRows) and returns a function
// that restores it.
func SetMLPRows(n int) (restore func()) {
	old := mlpRows
	mlpRows = n
	return func() { mlpRows = old }
}

//go:build !unix

package weights

import "os"

func mapFile(path string) ([]byte, func() error, error) {
	b, err := os.ReadFile(path)
	return b, nil, err
}

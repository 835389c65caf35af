package datafile

import "fmt"

// recoverError turns a panic inside arrow-go (which panics on some corrupt
// input) into an error, so that a bad file never takes the process down.
func recoverError(err *error, what string) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%s: corrupt or unsupported parquet data: %v", what, r)
	}
}

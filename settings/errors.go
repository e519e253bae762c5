package settings

import (
	"errors"
	"fmt"
)

// InputError is a problem with a file the user gave: config, streams file,
// state or catalog. The tap exits 2 on it.
type InputError struct {
	File string
	Err  error
}

func (e *InputError) Error() string { return fmt.Sprintf("%s: %v", e.File, e.Err) }
func (e *InputError) Unwrap() error { return e.Err }

// inputErr wraps err as an *InputError about file, unless it already is one.
func inputErr(file string, err error) error {
	var ie *InputError
	if errors.As(err, &ie) {
		return err
	}
	return &InputError{File: file, Err: err}
}

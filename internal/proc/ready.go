package proc

import (
	"errors"

	"github.com/batonhq/baton"
)

// ReadyFailure builds a readiness error of a launch: it reads base's
// message followed by detail, and matches base and each of also (nil
// entries are skipped).
func ReadyFailure(base *baton.Error, detail string, also ...error) error {
	return &readyError{base: base, also: also, msg: base.Error() + ": " + detail}
}

type readyError struct {
	base *baton.Error
	also []error
	msg  string
}

func (e *readyError) Error() string { return e.msg }
func (e *readyError) Unwrap() error { return e.base }
func (e *readyError) Is(t error) bool {
	if e.base.Is(t) {
		return true
	}
	for _, a := range e.also {
		if a != nil && errors.Is(a, t) {
			return true
		}
	}
	return false
}

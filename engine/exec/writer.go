package exec

import "github.com/batonhq/baton/internal/tlog"

// writer is one session's transcript writer, shared by the session's
// launches (refs counts them: a launch keeps its reference until its exit
// sync is done).
type writer struct {
	*tlog.Writer
	refs int
}

func openWriter(path string) (*writer, error) {
	w, err := tlog.Open(path)
	if err != nil {
		return nil, err
	}
	return &writer{Writer: w}, nil
}

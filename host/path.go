package host

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/batonhq/baton"
)

// canonicalPath returns the canonical form of a session path: absolute,
// cleaned, with every symbolic link resolved. For a file that does not
// exist yet, its directory is resolved and the file name kept, so two
// spellings of one future file agree. It returns ErrInvalidPath for an
// empty or relative path, a path with a NUL byte, a path whose directory
// does not exist, or one that cannot be resolved (a symbolic link loop).
// It touches nothing.
func canonicalPath(p string) (string, error) {
	if p == "" || strings.IndexByte(p, 0) >= 0 {
		return "", baton.Errorf(ErrInvalidPath, "empty or NUL in %q", p)
	}
	if !filepath.IsAbs(p) {
		return "", baton.Errorf(ErrInvalidPath, "%q is not absolute", p)
	}
	clean := filepath.Clean(p)
	resolved, err := filepath.EvalSymlinks(clean)
	if err == nil {
		return resolved, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", baton.Errorf(ErrInvalidPath, "%q: %v", p, err)
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(clean))
	if err != nil {
		return "", baton.Errorf(ErrInvalidPath, "directory of %q: %v", p, err)
	}
	return filepath.Join(dir, filepath.Base(clean)), nil
}

// Package safefile writes documents into a directory tree that a caller
// names as a root, the way baton publishes handoff reports: the file is
// created exclusively (never overwritten), with mode 0600, no symbolic link is
// followed at any component, and nothing is ever written outside the root.
package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Errors returned by Write. They wrap fs errors where one caused them.
var (
	ErrOutsideRoot = errors.New("safefile: path leaves the root")
	ErrSymlink     = errors.New("safefile: path crosses a symbolic link")
	ErrExists      = errors.New("safefile: file already exists")
)

// Write creates root/rel (rel is slash-separated and relative) with data,
// creating missing parent directories with mode 0700. It refuses an absolute
// or escaping rel (ErrOutsideRoot), any existing component that is a symlink
// (ErrSymlink), and an existing file (ErrExists). The file is synced before
// Write returns; on error nothing is left at rel.
func Write(root, rel string, data []byte) error {
	_, err := write(root, rel, data)
	return err
}

// write is Write; on ErrExists, regular reports that a regular file (not a
// directory or other node) is what exists at rel.
func write(root, rel string, data []byte) (regular bool, err error) {
	clean, err := cleanRel(rel)
	if err != nil {
		return false, err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return false, fmt.Errorf("safefile: open root: %w", err)
	}
	defer r.Close()
	if err := mkdirs(r, filepath.Dir(clean)); err != nil {
		return false, err
	}
	// O_EXCL refuses whatever is there, a symbolic link included; Lstat
	// then says what it is.
	f, err := r.OpenFile(clean, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if errors.Is(err, fs.ErrExist) {
		fi, lerr := r.Lstat(clean)
		if lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return false, fmt.Errorf("%w: %s", ErrSymlink, clean)
		}
		return lerr == nil && fi.Mode().IsRegular(), fmt.Errorf("%w: %s", ErrExists, clean)
	}
	if err != nil {
		return false, fmt.Errorf("safefile: create: %w", err)
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if werr = errors.Join(werr, f.Close()); werr != nil {
		_ = r.Remove(clean)
		return false, fmt.Errorf("safefile: write: %w", werr)
	}
	return false, nil
}

// EnsureFile creates root/rel with data unless a regular file is already
// there (then it returns nil and leaves the file as it is); it applies the
// same rules as Write. Something other than a regular file at rel (a
// directory, say) is an error wrapping ErrExists. Use it for companion files
// such as a .gitignore.
func EnsureFile(root, rel string, data []byte) error {
	regular, err := write(root, rel, data)
	if errors.Is(err, ErrExists) {
		if regular {
			return nil
		}
		return fmt.Errorf("%w (not a regular file)", err)
	}
	return err
}

func cleanRel(rel string) (string, error) {
	// IsLocal refuses an empty, absolute (or, on Windows, rooted) or
	// escaping path; "." names the root itself.
	clean := filepath.Clean(filepath.FromSlash(rel))
	if !filepath.IsLocal(clean) || clean == "." {
		return "", fmt.Errorf("%w: %q", ErrOutsideRoot, rel)
	}
	return clean, nil
}

func mkdirs(r *os.Root, dir string) error {
	cur := ""
	for _, part := range strings.Split(dir, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		fi, err := r.Lstat(cur)
		switch {
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%w: %s", ErrSymlink, cur)
		case err == nil && !fi.IsDir():
			return fmt.Errorf("safefile: %s is not a directory", cur)
		case err == nil:
			continue
		case errors.Is(err, fs.ErrNotExist):
			if err := r.Mkdir(cur, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("safefile: mkdir %s: %w", cur, err)
			}
		default:
			return fmt.Errorf("safefile: stat %s: %w", cur, err)
		}
	}
	return nil
}

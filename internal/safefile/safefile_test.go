package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tree lists every path under dir (slash-separated, relative) with a type
// marker, so a test can show that nothing was created or changed.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out = append(out, filepath.ToSlash(rel)+" -> "+target)
		case d.IsDir():
			out = append(out, filepath.ToSlash(rel)+"/")
		default:
			b, _ := os.ReadFile(p)
			out = append(out, filepath.ToSlash(rel)+": "+string(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestWriteCreatesExclusively(t *testing.T) {
	root := t.TempDir()
	if err := Write(root, "reports/2026/h1.md", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := Write(root, "reports/2026/h1.md", []byte("two")); !errors.Is(err, ErrExists) {
		t.Fatalf("second Write: %v, want ErrExists", err)
	}
	if diff := cmp.Diff([]string{"reports/", "reports/2026/", "reports/2026/h1.md: one"}, tree(t, root)); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
	for path, want := range map[string]fs.FileMode{"reports": 0o700, "reports/2026": 0o700, "reports/2026/h1.md": 0o600} {
		if got := mode(t, filepath.Join(root, path)); got != want {
			t.Errorf("mode of %s = %v, want %v", path, got, want)
		}
	}
	// An existing directory is not a place to write either.
	if err := Write(root, "reports", []byte("x")); !errors.Is(err, ErrExists) {
		t.Errorf("Write over a directory: %v, want ErrExists", err)
	}
}

func TestWriteRefusesEscapes(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "root")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"", ".", "./", "..", "../x", "a/../../x", "a/b/../../../x", "/etc/x", filepath.Join(parent, "x")} {
		t.Run(rel, func(t *testing.T) {
			if err := Write(root, rel, []byte("x")); !errors.Is(err, ErrOutsideRoot) {
				t.Fatalf("Write(%q): %v, want ErrOutsideRoot", rel, err)
			}
			if diff := cmp.Diff([]string{"root/"}, tree(t, parent)); diff != "" {
				t.Errorf("side effect (-want +got):\n%s", diff)
			}
		})
	}
	// A path that only passes through ".." inside the root is fine.
	if err := Write(root, "a/../b.md", []byte("x")); err != nil {
		t.Errorf("Write(a/../b.md): %v", err)
	}
}

func TestWriteRefusesSymlinks(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, root, outside string)
		rel   string
	}{
		{"parent links inside", func(t *testing.T, root, _ string) {
			symlink(t, "real", filepath.Join(root, "link"))
			writeFile(t, filepath.Join(root, "real", "keep"), "k")
		}, "link/f.md"},
		{"parent links outside", func(t *testing.T, root, outside string) {
			symlink(t, outside, filepath.Join(root, "link"))
		}, "link/f.md"},
		{"deeper parent links outside", func(t *testing.T, root, outside string) {
			symlink(t, outside, filepath.Join(root, "a", "link"))
		}, "a/link/b/f.md"},
		{"file name links inside", func(t *testing.T, root, _ string) {
			writeFile(t, filepath.Join(root, "target.md"), "original")
			symlink(t, "target.md", filepath.Join(root, "f.md"))
		}, "f.md"},
		{"file name links outside", func(t *testing.T, root, outside string) {
			writeFile(t, filepath.Join(outside, "target.md"), "original")
			symlink(t, filepath.Join(outside, "target.md"), filepath.Join(root, "f.md"))
		}, "f.md"},
		{"file name links outside to a missing file", func(t *testing.T, root, outside string) {
			symlink(t, filepath.Join(outside, "new.md"), filepath.Join(root, "f.md"))
		}, "f.md"},
		{"file name links inside to a missing file", func(t *testing.T, root, _ string) {
			symlink(t, "new.md", filepath.Join(root, "f.md"))
		}, "f.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, outside := t.TempDir(), t.TempDir()
			tt.setup(t, root, outside)
			beforeRoot, beforeOutside := tree(t, root), tree(t, outside)
			for _, write := range []func(string, string, []byte) error{Write, EnsureFile} {
				if err := write(root, tt.rel, []byte("attacker")); !errors.Is(err, ErrSymlink) {
					t.Fatalf("write(%q): %v, want ErrSymlink", tt.rel, err)
				}
			}
			if diff := cmp.Diff(beforeRoot, tree(t, root)); diff != "" {
				t.Errorf("root changed (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(beforeOutside, tree(t, outside)); diff != "" {
				t.Errorf("outside changed (-before +after):\n%s", diff)
			}
		})
	}
}

func TestWriteOtherFailures(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "file"), "x")
	tests := []struct {
		name, root, rel string
	}{
		{"missing root", filepath.Join(root, "missing"), "f.md"},
		{"parent is a file", root, "file/f.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Write(tt.root, tt.rel, []byte("x"))
			if err == nil || errors.Is(err, ErrExists) || errors.Is(err, ErrSymlink) || errors.Is(err, ErrOutsideRoot) {
				t.Errorf("Write: %v, want another error", err)
			}
		})
	}
}

func TestEnsureFile(t *testing.T) {
	root := t.TempDir()
	for i, data := range []string{"first", "second"} {
		if err := EnsureFile(root, "dir/.gitignore", []byte(data)); err != nil {
			t.Fatalf("EnsureFile #%d: %v", i+1, err)
		}
	}
	if diff := cmp.Diff([]string{"dir/", "dir/.gitignore: first"}, tree(t, root)); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
	if got := mode(t, filepath.Join(root, "dir", ".gitignore")); got != 0o600 {
		t.Errorf("mode = %v, want 0600", got)
	}
	// A directory where the file should be is not "already there".
	if err := EnsureFile(root, "dir", []byte("x")); err == nil {
		t.Error("EnsureFile over a directory returned nil")
	}
	if err := EnsureFile(root, "../x", []byte("x")); !errors.Is(err, ErrOutsideRoot) {
		t.Errorf("EnsureFile(../x): %v, want ErrOutsideRoot", err)
	}
}

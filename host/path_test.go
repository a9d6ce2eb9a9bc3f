package host

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestCanonicalPath(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "a.jsonl"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(real, "a.jsonl"), filepath.Join(dir, "file-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "loop"), filepath.Join(dir, "loop")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   string
		want string
		err  error
	}{
		{"existing file", filepath.Join(real, "a.jsonl"), filepath.Join(real, "a.jsonl"), nil},
		{"through a symlinked directory", filepath.Join(dir, "link", "a.jsonl"), filepath.Join(real, "a.jsonl"), nil},
		{"a symlink to the file", filepath.Join(dir, "file-link"), filepath.Join(real, "a.jsonl"), nil},
		{"unclean spelling", filepath.Join(dir, "link", ".", "x", "..", "a.jsonl"), filepath.Join(real, "a.jsonl"), nil},
		{"file not there yet: its directory is resolved", filepath.Join(dir, "link", "new.jsonl"), filepath.Join(real, "new.jsonl"), nil},
		{"relative", "a.jsonl", "", errInvalidPath},
		{"empty", "", "", errInvalidPath},
		{"NUL", filepath.Join(real, "a\x00b"), "", errInvalidPath},
		{"missing directory", filepath.Join(dir, "nope", "a.jsonl"), "", errInvalidPath},
		{"symlink loop", filepath.Join(dir, "loop", "a.jsonl"), "", errInvalidPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := canonicalPath(tt.in)
			if !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
				t.Fatalf("canonicalPath(%q) error = %v, want %v", tt.in, err, tt.err)
			}
			if got != tt.want {
				t.Errorf("canonicalPath(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

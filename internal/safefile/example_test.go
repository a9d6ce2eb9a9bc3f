package safefile_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/batonhq/baton/internal/safefile"
)

func ExampleWrite() {
	root, err := os.MkdirTemp("", "safefile")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(root)

	fmt.Println(safefile.Write(root, "handoffs/h1.md", []byte("# Report\n")))
	err = safefile.Write(root, "handoffs/h1.md", []byte("again"))
	fmt.Println(errors.Is(err, safefile.ErrExists))
	err = safefile.Write(root, "../escape.md", nil)
	fmt.Println(errors.Is(err, safefile.ErrOutsideRoot))
	// Output:
	// <nil>
	// true
	// true
}

package ids_test

import (
	"fmt"
	"strings"

	"github.com/batonhq/baton/internal/ids"
)

func ExampleNew() {
	id := ids.New("ses")
	fmt.Println(strings.HasPrefix(id, "ses_"), len(id))
	// Output: true 30
}

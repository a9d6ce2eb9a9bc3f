package fingerprint_test

import (
	"fmt"

	"github.com/batonhq/baton/internal/fingerprint"
)

func ExampleCanonical() {
	a, _ := fingerprint.Canonical(map[string]any{"model": "opus", "engine": "claude"})
	b, _ := fingerprint.Of(map[string]any{"engine": "claude", "model": "opus"})
	c, _ := fingerprint.Of(struct {
		Engine string `json:"engine"`
		Model  string `json:"model"`
	}{"claude", "opus"})
	fmt.Println(string(a))
	fmt.Println(b == c)
	// Output:
	// {"engine":"claude","model":"opus"}
	// true
}

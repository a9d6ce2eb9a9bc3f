package token_test

import (
	"encoding/json"
	"fmt"

	"github.com/batonhq/baton/internal/token"
)

func Example() {
	tok := token.New()
	stored := tok.Hash() // the only form baton keeps

	b, _ := json.Marshal(struct{ Owner token.Token }{tok})
	fmt.Println(tok, string(b))
	fmt.Println(stored.Matches(token.Parse(tok.Reveal())), stored.Matches(token.New()))
	// Output:
	// [REDACTED] {"Owner":"[REDACTED]"}
	// true false
}

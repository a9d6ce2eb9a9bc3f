package baton_test

import (
	"encoding/json"
	"fmt"

	"github.com/batonhq/baton"
)

func ExampleToken() {
	tok := baton.NewToken()
	stored := tok.Hash() // the only form baton keeps

	b, _ := json.Marshal(struct{ Owner baton.Token }{tok})
	fmt.Println(tok, string(b))
	fmt.Println(stored.Matches(baton.ParseToken(tok.Reveal())), stored.Matches(baton.NewToken()))
	// Output:
	// [REDACTED] {"Owner":"[REDACTED]"}
	// true false
}

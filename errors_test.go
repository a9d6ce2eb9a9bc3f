package baton_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/batonhq/baton"
)

func TestErrorCodesAndMatching(t *testing.T) {
	sentinel := baton.NewError(baton.ErrConflict, "thing is pending")
	wrapped := fmt.Errorf("outer: %w", baton.Errorf(sentinel, "id %d", 7))
	cases := []struct {
		name string
		err  error
		code string
		is   []error
		not  []error
	}{
		{"nil", nil, "", nil, []error{baton.ErrInvalid}},
		{"sentinel", sentinel, baton.ErrConflict.Code, []error{sentinel, baton.ErrConflict}, []error{baton.ErrInvalid}},
		{"wrapped", wrapped, baton.ErrConflict.Code, []error{sentinel, baton.ErrConflict}, []error{baton.NewError(baton.ErrConflict, "thing is pending"), baton.ErrBusy}},
		{"plain", errors.New("x"), baton.ErrInternal.Code, nil, []error{baton.ErrInternal}},
		{"ctx", fmt.Errorf("w: %w", context.Canceled), baton.ErrUnavailable.Code, []error{context.Canceled}, nil},
	}
	for _, c := range cases {
		if got := baton.ErrorCode(c.err); got != c.code {
			t.Errorf("%s: code %q, want %q", c.name, got, c.code)
		}
		for _, target := range c.is {
			if !errors.Is(c.err, target) {
				t.Errorf("%s: errors.Is(%v) = false", c.name, target)
			}
		}
		for _, target := range c.not {
			if errors.Is(c.err, target) {
				t.Errorf("%s: errors.Is(%v) = true", c.name, target)
			}
		}
	}
	if got := wrapped.Error(); got != "outer: thing is pending: id 7" {
		t.Errorf("message = %q", got)
	}
}

func TestIDRuleAndConfig(t *testing.T) {
	for _, c := range []struct {
		id   string
		want bool
	}{{"a", true}, {"  ok  ", true}, {"", false}, {"   ", false}, {string(make([]byte, 129)), false}, {"tab\tinside", false}, {"c1 \u0085 control", false}, {"é", true}} {
		if got := baton.CheckField("id", c.id) == nil; got != c.want {
			t.Errorf("CheckField(\"id\", %q) = %v", c.id, baton.CheckField("id", c.id))
		}
	}
	if err := (baton.EngineConfig{Model: "m"}).Validate(); !errors.Is(err, baton.ErrInvalid) {
		t.Errorf("no engine: %v", err)
	}
	a := baton.EngineConfig{Engine: " claude ", Account: "work"}
	if !a.SameAccount(baton.EngineConfig{Engine: "claude", Account: "work ", Model: "other"}) || a.SameAccount(baton.EngineConfig{Engine: "claude"}) {
		t.Error("SameAccount")
	}
}

func ExampleErrorCode() {
	err := baton.Errorf(baton.ErrNotFound, "workspace %q", "ws-1")
	fmt.Println(baton.ErrorCode(err), errors.Is(err, baton.ErrNotFound))
	fmt.Println(err)
	// Output:
	// not-found true
	// baton: not-found: workspace "ws-1"
}

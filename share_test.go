package baton_test

import (
	"errors"
	"testing"

	"github.com/batonhq/baton"
)

func TestShare(t *testing.T) {
	for _, tc := range []struct {
		s                   baton.Share
		valid, conv, report bool
	}{
		{"", true, true, true},
		{baton.ShareConversation, true, true, true},
		{baton.ShareReport, true, false, true},
		{baton.ShareNone, true, false, false},
		{"everything", false, false, false},
		{"Conversation", false, false, false},
	} {
		err := tc.s.Validate()
		if (err == nil) != tc.valid || err != nil && !errors.Is(err, baton.ErrInvalid) {
			t.Errorf("%q.Validate() = %v", tc.s, err)
		}
		if tc.s.Conversation() != tc.conv || tc.s.Report() != tc.report {
			t.Errorf("%q: Conversation %v Report %v; want %v %v", tc.s, tc.s.Conversation(), tc.s.Report(), tc.conv, tc.report)
		}
	}
}

package badgerstore

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestStringComponentsKeepOrder checks that encoded strings sort as the
// strings do, and that a component never matches as a prefix of a longer
// one (the list of workspace "a" must not contain workspace "ab").
func TestStringComponentsKeepOrder(t *testing.T) {
	strs := []string{"", "\x00", "\x00\x00", "\x00\x01", "\x00\xff", "a", "a\x00", "a\x00b", "a\x01", "ab", "b", "\xff", "\xff\xff"}
	var keys []key
	for _, s := range strs {
		// A following component starting with 0xFF must not change the
		// order either.
		keys = append(keys, newKey('x').str(s).u64(^uint64(0)))
	}
	sorted := slices.Clone(keys)
	slices.SortFunc(sorted, func(a, b key) int { return bytes.Compare(a, b) })
	if d := cmp.Diff(keys, sorted); d != "" {
		t.Errorf("encoded strings out of order (-input order +byte order):\n%s", d)
	}
	for i, a := range strs {
		for j, b := range strs {
			pa := newKey('x').str(a)
			if i != j && bytes.HasPrefix(newKey('x').str(b), pa) {
				t.Errorf("component %q is a prefix of component %q", a, b)
			}
		}
	}
}

func TestTimeComponentsKeepOrder(t *testing.T) {
	base := time.Date(2025, 3, 14, 15, 9, 26, 535897000, time.UTC)
	times := []time.Time{
		{}, // the zero time, year 1
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Unix(-1, 0),
		time.Unix(-1, 999999999),
		time.Unix(0, 0),
		time.Unix(0, 1),
		base,
		base.Add(time.Microsecond),
		base.Add(time.Second),
		time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC),
	}
	for i := 1; i < len(times); i++ {
		a, b := newKey('x').time(times[i-1]), newKey('x').time(times[i])
		if bytes.Compare(a, b) >= 0 {
			t.Errorf("key of %v not below key of %v", times[i-1], times[i])
		}
	}
	zone := time.FixedZone("x", 5*3600)
	if a, b := newKey('x').time(base), newKey('x').time(base.In(zone)); !bytes.Equal(a, b) {
		t.Error("the same instant in two locations has two keys")
	}
}

func TestListPrefixesAndGuards(t *testing.T) {
	a, ab := ownedList(tSessionsByWS, "a"), ownedList(tSessionsByWS, "ab")
	entry := ab.prefix().u64(1).str("s-1")
	if bytes.HasPrefix(entry, a.prefix()) {
		t.Error("an entry of workspace ab is in the list of workspace a")
	}
	guards := map[string]string{}
	for _, l := range []list{a, ab, ownedList(tHandoffsByWS, "a"), globalList(tDue), globalList(tQueued), globalList(tPendingSlot), globalList(tWorkspace)} {
		g := string(l.guard())
		if other, ok := guards[g]; ok {
			t.Errorf("lists %s and %+v share a guard", other, l)
		}
		guards[g] = strings.TrimSpace(string(l.table) + " " + l.owner)
		if bytes.HasPrefix(l.guard(), l.prefix()) {
			t.Errorf("the guard of %+v is inside its list", l)
		}
	}
}

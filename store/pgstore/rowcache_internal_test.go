package pgstore

import (
	"fmt"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// The row cache keeps at most its limit, the higher version of a row, no
// settled handoff and no row without a value, and hands out copies.
func TestRowCacheRules(t *testing.T) {
	ws := func(id string, running ...baton.SessionID) store.Workspace {
		return store.Workspace{ID: baton.WorkspaceID(id), Running: running}
	}
	key := func(id string) recordKey { return recordKey{kindWorkspace, id} }
	c := newRowCache(3)

	c.put(map[recordKey]cachedRow{key("a"): {ws("a", "s-1"), 5}})
	c.put(map[recordKey]cachedRow{key("a"): {ws("a", "s-old"), 4}}) // an earlier commit's row, late
	got, ok := c.get(key("a"))
	if !ok || got.version != 5 {
		t.Fatalf("get(a) = %+v, %v; want version 5", got, ok)
	}
	w := got.value.(store.Workspace)
	w.Running[0] = "changed" // a copy: the cache keeps its own
	if got, _ := c.get(key("a")); got.value.(store.Workspace).Running[0] != "s-1" {
		t.Errorf("the cached row changed with the caller's copy: %+v", got.value)
	}

	for i := range 5 {
		id := fmt.Sprint("w-", i)
		c.put(map[recordKey]cachedRow{key(id): {ws(id), 1}})
		if n := c.len(); n > 3 {
			t.Fatalf("after %d puts: %d rows cached, limit 3", i+1, n)
		}
	}
	if !c.has(key("w-4")) {
		t.Error("the last row put is not cached")
	}

	pending := recordKey{kindHandoff, "h-1"}
	c.put(map[recordKey]cachedRow{pending: {store.Handoff{ID: "h-1", State: store.StateGenerating}, 7}})
	if !c.has(pending) {
		t.Error("a pending handoff is not cached")
	}
	c.put(map[recordKey]cachedRow{pending: {store.Handoff{ID: "h-1", State: store.StateCompleted}, 8}})
	if c.has(pending) {
		t.Error("a settled handoff is still cached")
	}
	c.put(map[recordKey]cachedRow{key("w-4"): {nil, 9}}) // written, but asRead could not tell
	if c.has(key("w-4")) {
		t.Error("a row without a value is still cached")
	}
	c.drop([]recordKey{key("w-3")})
	if c.has(key("w-3")) {
		t.Error("a dropped row is still cached")
	}

	var off *rowCache // Options.CacheRows < 0
	off.put(map[recordKey]cachedRow{key("a"): {ws("a"), 1}})
	if _, ok := off.get(key("a")); ok || off.len() != 0 {
		t.Error("a disabled cache holds a row")
	}
	if newRowCache(-1) != nil {
		t.Error("newRowCache(-1) is a cache")
	}
}

package badgerstore

import (
	"reflect"
	"testing"
)

// TestStoredFormsShareNothing lists the reference-typed fields of the
// stored forms that the cache of decoded records hands out by value. Each
// must be copied by the conversions both ways (to* and record), or
// readers of a cached record would share its memory; a new one fails
// here until it is copied and listed.
func TestStoredFormsShareNothing(t *testing.T) {
	copied := map[string]bool{
		"handoffRow.Handoff.History":     true, // toHandoff and handoffRow.record make new slices
		"workspaceRow.Workspace.Running": true, // toWorkspace and workspaceRow.record, both ways
	}
	var walk func(path string, typ reflect.Type)
	walk = func(path string, typ reflect.Type) {
		switch typ.Kind() {
		case reflect.Struct:
			if typ.PkgPath() == "time" { // time.Time's pointer is its *Location, never written
				return
			}
			for i := range typ.NumField() {
				f := typ.Field(i)
				walk(path+"."+f.Name, f.Type)
			}
		case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface, reflect.Chan, reflect.Func:
			if !copied[path] {
				t.Errorf("%s is a %s: copy it in the conversions and list it here", path, typ.Kind())
			}
		case reflect.Array:
			walk(path+"[]", typ.Elem())
		}
	}
	for _, v := range []any{workspaceRow{}, sessionRow{}, handoffRow{}, reservationRow{}, wakeupRow{},
		continuationRow{}, launchRow{}, instructionRow{}} {
		typ := reflect.TypeOf(v)
		walk(typ.Name(), typ)
	}
}

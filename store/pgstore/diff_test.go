package pgstore_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/pgstore"
)

// TestHandoffWriteOfOneField: PutHandoff sends only the columns whose
// values differ from the handoff as the transaction knows it. Each field,
// changed alone, is the one column its update sets, and must reach the
// server, twice in a row (the second from the value the first wrote).
func TestHandoffWriteOfOneField(t *testing.T) {
	s := open(t, "", pgstore.Options{})
	at := time.Date(2026, 5, 6, 7, 8, 9, 123456789, time.UTC)
	cfg := baton.EngineConfig{Engine: "demo", Model: "m", Account: "a"}
	base := store.Handoff{RequestID: "r", Fingerprint: "f", State: store.StateGenerating, Attempt: 1,
		SourceSession: "s-1", TargetSession: "s-2", SourceConfig: cfg, TargetConfig: cfg, GenerateSummary: true,
		Report: "report", ReportPath: "p", Facts: "facts", GenerationToken: baton.TokenHash{7},
		GenerationDeadline: at, Error: "e", History: []store.AttemptRecord{{Attempt: 1, EndedAt: at}},
		CreatedAt: at, UpdatedAt: at}
	same := cmp.Options{cmpopts.EquateEmpty(), cmp.Comparer(func(x, y time.Time) bool {
		return x.Truncate(time.Microsecond).Equal(y.Truncate(time.Microsecond))
	})}
	typ := reflect.TypeFor[store.Handoff]()
	for i := range typ.NumField() {
		field := typ.Field(i).Name
		switch field {
		case "ID", "Workspace", "RequestID": // never change
			continue
		}
		t.Run(field, func(t *testing.T) {
			ws := baton.WorkspaceID("ws-" + field)
			h := base
			h.ID, h.Workspace = baton.HandoffID("h-"+field), ws
			update(t, s, func(tx store.Tx) error { return tx.PutHandoff(h) })
			for _, from := range []string{"a first write", "a second write"} {
				var want store.Handoff
				update(t, s, func(tx store.Tx) error {
					got, err := tx.GetHandoff(h.ID)
					if err != nil {
						return err
					}
					before := got
					changeField(t, reflect.ValueOf(&got).Elem().FieldByName(field))
					if n := pgstore.HandoffWriteColumns(before, got); n != 1 {
						t.Errorf("after a read from %s, the update of %s sets %d columns, want 1", from, field, n)
					}
					want = got
					return tx.PutHandoff(got)
				})
				if err := s.View(t.Context(), func(tx store.Tx) error {
					got, err := tx.GetHandoff(h.ID)
					if diff := cmp.Diff(want, got, same); err == nil && diff != "" {
						t.Errorf("after a read from %s, the server holds (-put +server):\n%s", from, diff)
					}
					return err
				}); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// changeField gives v another value of its type.
func changeField(t *testing.T, v reflect.Value) {
	t.Helper()
	switch x := v.Addr().Interface().(type) {
	case *time.Time:
		*x = x.Add(time.Hour + time.Microsecond)
	case *baton.EngineConfig:
		x.Model += "+"
	case *baton.TokenHash:
		x[0]++
	case *store.HandoffReason:
		x.Tokens++
	case *[]store.AttemptRecord:
		*x = append(*x, store.AttemptRecord{Attempt: len(*x) + 1, Error: "again"})
	default:
		switch v.Kind() {
		case reflect.String:
			v.SetString(v.String() + "+")
		case reflect.Int:
			v.SetInt(v.Int() + 1)
		case reflect.Bool:
			v.SetBool(!v.Bool())
		default:
			t.Fatalf("no change for a field of type %s", v.Type())
		}
	}
}

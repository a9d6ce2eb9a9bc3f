package workspace

// A Link carries, inside a public type of another package of this module,
// a value only this module's packages may reach: package session's
// Service embeds one (under an unexported alias, so the field is
// unexported) holding its process supervisor, and package handoff reaches
// that supervisor through Of without either package exporting it.
type Link struct{ v any }

// NewLink returns a Link carrying v.
func NewLink(v any) Link { return Link{v} }

func (l Link) linked() any { return l.v }

// Of returns what the Link embedded in x carries, or nil when x embeds
// none.
func Of(x any) any {
	if l, ok := x.(interface{ linked() any }); ok {
		return l.linked()
	}
	return nil
}

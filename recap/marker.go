package recap

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// marker is a control marker to strip. Most markers are trailing ones of the
// shape [class*]LITERAL[class*]$ (`\s*DONE\s*$`, `<<END>>\z`): those are
// stripped by a byte scan from the end of the text, with the very result the
// regexp would give, and never allocate. Any other pattern runs the regexp,
// and only on texts containing a literal every match must contain.
type marker struct {
	re   *regexp.Regexp
	lit  []byte   // required literal, nil when there is none
	tail *trailer // the byte-scan form, nil when the pattern has none
}

// trailer is a pattern pre* lit post* \z, where pre and post are character
// classes (nil for none).
type trailer struct {
	pre, post *syntax.Regexp
	lit       []byte
}

func newMarker(re *regexp.Regexp) marker {
	m := marker{re: re}
	p, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return m // compiled with other flags (CompilePOSIX): the regexp alone
	}
	p = p.Simplify()
	if lit := required(p); len(lit) > 0 {
		m.lit = []byte(string(lit))
	}
	if t := trailerOf(p); t != nil && t.agrees(re) {
		m.tail = t
	}
	return m
}

// agrees checks the byte scan against the regexp on a few probes. The
// pattern was parsed with Perl flags; a regexp compiled otherwise (with
// CompilePOSIX, $ matches at every line end) fails here and keeps the
// regexp path.
func (t *trailer) agrees(re *regexp.Regexp) bool {
	l := string(t.lit)
	for _, p := range []string{l, "a " + l, l + " ", l + "\n", l + "\nz", "z\n" + l + "\n", l + l, "x" + l + "y", "\t" + l + "\t\n"} {
		if string(t.strip([]byte(p))) != string(re.ReplaceAll([]byte(p), nil)) {
			return false
		}
	}
	return true
}

// trailerOf recognises the trailer form, or returns nil.
func trailerOf(p *syntax.Regexp) *trailer {
	subs := []*syntax.Regexp{p}
	if p.Op == syntax.OpConcat {
		subs = p.Sub
	}
	if len(subs) < 2 || subs[len(subs)-1].Op != syntax.OpEndText {
		return nil
	}
	subs = subs[:len(subs)-1]
	t := &trailer{}
	if c := starClass(subs[0]); c != nil {
		t.pre, subs = c, subs[1:]
	}
	if n := len(subs); n > 0 {
		if c := starClass(subs[n-1]); c != nil {
			t.post, subs = c, subs[:n-1]
		}
	}
	if len(subs) != 1 || subs[0].Op != syntax.OpLiteral || subs[0].Flags&syntax.FoldCase != 0 {
		return nil
	}
	t.lit = []byte(string(subs[0].Rune))
	return t
}

// starClass returns the class of a greedy x* whose x is a character class
// or a single character.
func starClass(p *syntax.Regexp) *syntax.Regexp {
	if p.Op != syntax.OpStar || p.Flags&syntax.NonGreedy != 0 {
		return nil
	}
	switch x := p.Sub[0]; x.Op {
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return x
	case syntax.OpLiteral:
		if len(x.Rune) == 1 && x.Flags&syntax.FoldCase == 0 {
			return x
		}
	}
	return nil
}

// strip returns s without the trailer's match, the one the regexp's
// leftmost-first search finds: the smallest start from which pre* lit post*
// reaches the end. The literal may sit anywhere post* can cover.
func (t *trailer) strip(s []byte) []byte {
	tail := len(s) // start of the longest suffix made of post
	for tail > 0 && t.post != nil {
		c, n := utf8.DecodeLastRune(s[:tail])
		if !inClass(t.post, c) {
			break
		}
		tail -= n
	}
	best := -1
	for p := len(s) - len(t.lit); p >= 0 && p+len(t.lit) >= tail; p-- {
		if !bytes.HasPrefix(s[p:], t.lit) {
			continue
		}
		b := p
		for b > 0 && t.pre != nil {
			c, n := utf8.DecodeLastRune(s[:b])
			if !inClass(t.pre, c) {
				break
			}
			b -= n
		}
		if best < 0 || b < best {
			best = b
		}
	}
	if best < 0 {
		return s
	}
	return s[:best]
}

func inClass(p *syntax.Regexp, c rune) bool {
	switch p.Op {
	case syntax.OpAnyChar:
		return true
	case syntax.OpAnyCharNotNL:
		return c != '\n'
	case syntax.OpLiteral:
		return c == p.Rune[0]
	}
	for i := 0; i+1 < len(p.Rune); i += 2 {
		if p.Rune[i] <= c && c <= p.Rune[i+1] {
			return true
		}
	}
	return false
}

// maxMarkerPasses bounds the marker fixpoint: a pattern that must remove a
// longer run of repeats should match the repetition itself.
const maxMarkerPasses = 16

// strip removes every marker match from s until none is left, in place
// for trailers (s must be a buffer of the caller's). Markers without a
// trailer form cost a bytes.Contains of their literal, a regexp scan when
// it is there, and a copy of the text when they match.
func (r *redactor) strip(s []byte) []byte {
	for range maxMarkerPasses {
		changed := false
		for _, m := range r.markers {
			n := len(s)
			switch {
			case m.tail != nil:
				s = m.tail.strip(s)
			case m.lit != nil && !bytes.Contains(s, m.lit) || !m.re.Match(s):
			default:
				s = m.re.ReplaceAll(s, nil)
			}
			changed = changed || len(s) < n
		}
		if !changed {
			break
		}
	}
	return s
}

// required returns a case-sensitive literal every match of p contains, or
// nil. It is only a fast rejection: nil is always correct.
func required(p *syntax.Regexp) []rune {
	switch p.Op {
	case syntax.OpLiteral:
		if p.Flags&syntax.FoldCase == 0 {
			return p.Rune
		}
	case syntax.OpCapture, syntax.OpPlus:
		return required(p.Sub[0])
	case syntax.OpRepeat:
		if p.Min >= 1 {
			return required(p.Sub[0])
		}
	case syntax.OpConcat:
		var best []rune
		for _, sub := range p.Sub {
			if l := required(sub); len(l) > len(best) {
				best = l
			}
		}
		return best
	}
	return nil
}

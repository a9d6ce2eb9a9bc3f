package recap

import "strings"

// Byte classes of token bodies.
func alnum(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }
func upper(c byte) bool { return 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }
func word(c byte) bool  { return alnum(c) || c == '_' } // sk- must not follow one
func dash(c byte) bool  { return word(c) || c == '-' }
func dot(c byte) bool   { return dash(c) || c == '.' }

// shapeFirst marks the bytes a built-in token shape starts with.
var shapeFirst = [256]bool{'g': true, 's': true, 'A': true, 'y': true, 'x': true}

// matchShape returns the end of the built-in token shape starting at s[i],
// or -1. Bodies are greedy: the whole run of token characters is redacted.
// Minimum body lengths keep ordinary words out (they are shorter than the
// real tokens, so a real token always matches). The prefixes are distinctive
// enough to match inside a word (a token glued to the text before it is
// still redacted), except sk-.
func matchShape(s []byte, i int) int {
	t := s[i:]
	switch t[0] {
	case 'g':
		switch {
		case hasPrefix(t, "github_pat_"):
			return run(s, i+11, word, 20)
		case hasPrefix(t, "glpat-"):
			return run(s, i+6, dash, 20)
		case len(t) >= 4 && t[1] == 'h' && t[3] == '_' && strings.IndexByte("opsur", t[2]) >= 0:
			return run(s, i+4, alnum, 20) // ghp_ gho_ ghs_ ghu_ ghr_
		}
	case 's':
		// sk-ant-, sk-proj- and plain sk-. The prefix is short enough to end
		// words ("task-", "disk-"), so it must start one.
		if hasPrefix(t, "sk-") && (i == 0 || !word(s[i-1])) {
			return run(s, i+3, dash, 20)
		}
	case 'A':
		if hasPrefix(t, "AKIA") || hasPrefix(t, "ASIA") {
			return run(s, i+4, upper, 16)
		}
		if hasPrefix(t, "AIza") {
			return run(s, i+4, dash, 30)
		}
	case 'y':
		if hasPrefix(t, "ya29.") {
			return run(s, i+5, dot, 20)
		}
	case 'x':
		if len(t) >= 5 && t[1] == 'o' && t[2] == 'x' && 'a' <= t[3] && t[3] <= 'z' && t[4] == '-' {
			return run(s, i+5, dash, 10) // xoxb-, xoxp-, xoxa-, ...
		}
	}
	return -1
}

// run returns the end of the run of class bytes starting at s[j] if it is at
// least minLen long, else -1.
func run(s []byte, j int, class func(byte) bool, minLen int) int {
	k := j
	for k < len(s) && class(s[k]) {
		k++
	}
	if k-j < minLen {
		return -1
	}
	return k
}

func hasPrefix(b []byte, p string) bool {
	return len(b) >= len(p) && string(b[:len(p)]) == p
}

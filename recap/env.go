package recap

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"
)

// secretWords are the parts of a variable name that make it look secret,
// matched anywhere inside one word of the name ("PGPASSWORD", "APIKEY").
var secretWords = []string{
	"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "KEY", "CREDENTIAL",
	"CREDS", "SESSION", "COOKIE", "AUTH", "PRIVATE", "SIGNATURE", "DSN",
}

// secretWholeWords look secret only as a whole word of the name: "DB_PASS",
// but not "COMPASS" or "BYPASS".
var secretWholeWords = []string{"PASS", "PWD"}

// benignWords are words of a name that contain a secret word without being
// one: GIT_AUTHOR_NAME, XKB_KEYMAP, GIT_ASKPASS.
var benignWords = []string{"AUTHOR", "KEYBOARD", "KEYMAP", "ASKPASS"}

// notSecret are names that look secret and are not: sockets, paths and
// desktop session plumbing. Names are compared in upper case.
var notSecret = []string{
	"SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "GPG_TTY",
	"SESSION_MANAGER", "DBUS_SESSION_BUS_ADDRESS", "DESKTOP_SESSION",
	"GNOME_DESKTOP_SESSION_ID", "GNOME_KEYRING_CONTROL", "GNOME_KEYRING_PID",
	"XAUTHORITY", "XAUTHLOCALHOSTNAME", "KEYTIMEOUT", "PWD", "OLDPWD",
}

// notSecretPrefixes are families of such names.
var notSecretPrefixes = []string{"XDG_SESSION_", "GIT_AUTHOR_"}

// SecretValuesFromEnv returns the values of the variables of environ (in the
// "NAME=value" form of os.Environ) whose names look secret: a word of the
// name contains TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE, KEY, CREDENTIAL,
// CREDS, SESSION, COOKIE, AUTH, PRIVATE, SIGNATURE or DSN, or is PASS.
// Names are compared without case; words are separated by anything but a
// letter or digit. Names that look secret and are not (SSH_AUTH_SOCK,
// GPG_AGENT_INFO, SESSION_MANAGER, DBUS_SESSION_BUS_ADDRESS, XDG_SESSION_*,
// GIT_AUTHOR_*, ...) are left out, and so are values shorter than
// 12 runes, which would redact ordinary words.
//
// The result is distinct and longest first (ties in byte order), ready for
// Limits.Secrets. A value with surrounding white space is returned both as
// is and trimmed. It never fails; nil environ gives nil.
func SecretValuesFromEnv(environ []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" || !secretName(name) {
			continue
		}
		for _, v := range []string{value, strings.TrimSpace(value)} {
			if utf8.RuneCountInString(v) >= minEnvSecretChars && !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		if c := cmp.Compare(len(b), len(a)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return out
}

// secretName reports whether a variable name looks secret.
func secretName(name string) bool {
	name = strings.ToUpper(name)
	if slices.Contains(notSecret, name) {
		return false
	}
	for _, p := range notSecretPrefixes {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	words := strings.FieldsFunc(name, func(c rune) bool {
		return !('A' <= c && c <= 'Z' || '0' <= c && c <= '9')
	})
	for _, w := range words {
		if slices.Contains(benignWords, w) {
			continue
		}
		if slices.Contains(secretWholeWords, w) {
			return true
		}
		for _, s := range secretWords {
			if strings.Contains(w, s) {
				return true
			}
		}
	}
	return false
}

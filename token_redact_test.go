package baton

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// holder is how tokens usually travel: an exported field of a request.
type holder struct {
	Name string
	Tok  Token
}

// hidden keeps a token in an unexported field, where fmt cannot call the
// token's methods and prints the field's contents instead.
type hidden struct {
	name string
	tok  Token
}

// assertNoSecret fails when out contains the secret in clear, hex or
// upper-case hex; with wantRedacted it also requires the redaction marker,
// so a test that printed nothing at all does not pass.
func assertNoSecret(t *testing.T, out, secret string, wantRedacted bool) {
	t.Helper()
	for _, form := range []string{secret, hex.EncodeToString([]byte(secret)), strings.ToUpper(hex.EncodeToString([]byte(secret)))} {
		if strings.Contains(out, form) {
			t.Fatalf("output leaks the secret: %s", out)
		}
	}
	if wantRedacted && !strings.Contains(out, Redacted) {
		t.Fatalf("output lacks %s: %s", Redacted, out)
	}
}

func TestRedactionFmt(t *testing.T) {
	tok := NewToken()
	secret := tok.Reveal()
	values := []struct {
		name         string
		v            any
		wantRedacted bool
	}{
		{"token", tok, true},
		{"pointer", &tok, true},
		{"struct", holder{"n", tok}, true},
		{"pointer to struct", &holder{"n", tok}, true},
		{"unexported field", hidden{"n", tok}, false},
		{"pointer, unexported field", &hidden{"n", tok}, false},
		{"slice", []Token{tok}, true},
		{"map value", map[string]Token{"k": tok}, true},
		{"map key", map[Token]int{tok: 1}, true},
	}
	verbs := []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T %[1]v"}
	for _, val := range values {
		for _, verb := range verbs {
			t.Run(val.name+" "+verb, func(t *testing.T) {
				assertNoSecret(t, fmt.Sprintf(verb, val.v), secret, val.wantRedacted && verb != "%d")
			})
		}
	}
	t.Run("methods", func(t *testing.T) {
		assertNoSecret(t, tok.String(), secret, true)
		assertNoSecret(t, fmt.Sprint(tok), secret, true)
		assertNoSecret(t, fmt.Errorf("bad token %v: %w", tok, errors.New("x")).Error(), secret, true)
	})
}

func TestRedactionJSON(t *testing.T) {
	tok := NewToken()
	secret := tok.Reveal()
	for _, tt := range []struct {
		name string
		v    any
		want string
	}{
		{"token", tok, `"[REDACTED]"`},
		{"struct", holder{"n", tok}, `{"Name":"n","Tok":"[REDACTED]"}`},
		{"pointer to struct", &holder{"n", tok}, `{"Name":"n","Tok":"[REDACTED]"}`},
		{"map key", map[Token]int{tok: 1}, `{"[REDACTED]":1}`},
		{"slice", []Token{tok}, `["[REDACTED]"]`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			assertNoSecret(t, string(b), secret, true)
			if string(b) != tt.want {
				t.Errorf("json.Marshal = %s, want %s", b, tt.want)
			}
		})
	}
	b, err := tok.MarshalText()
	if err != nil || string(b) != Redacted {
		t.Errorf("MarshalText = %q, %v; want %q", b, err, Redacted)
	}
}

func TestRedactionSlog(t *testing.T) {
	tok := NewToken()
	secret := tok.Reveal()
	handlers := map[string]func(*bytes.Buffer) slog.Handler{
		"json": func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
		"text": func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
	}
	attrs := []struct {
		name         string
		attr         slog.Attr
		wantRedacted bool
	}{
		{"any token", slog.Any("t", tok), true},
		{"any struct", slog.Any("s", holder{"n", tok}), true},
		{"any pointer", slog.Any("s", &holder{"n", tok}), true},
		{"unexported field", slog.Any("s", hidden{"n", tok}), false},
		{"group", slog.Group("g", slog.Any("t", tok)), true},
	}
	for hname, newHandler := range handlers {
		for _, a := range attrs {
			t.Run(hname+" "+a.name, func(t *testing.T) {
				var buf bytes.Buffer
				slog.New(newHandler(&buf)).Info("msg", a.attr)
				if buf.Len() == 0 {
					t.Fatal("nothing logged")
				}
				assertNoSecret(t, buf.String(), secret, a.wantRedacted)
			})
		}
	}
}

// TestRedactionZapJSON goes through zap's real JSON encoder: zap.Any on a
// struct encodes it by reflection and would ignore String.
func TestRedactionZapJSON(t *testing.T) {
	tok := NewToken()
	secret := tok.Reveal()
	fields := []struct {
		name         string
		log          func(*zap.Logger)
		wantRedacted bool
	}{
		{"Any token", func(l *zap.Logger) { l.Info("m", zap.Any("t", tok)) }, true},
		{"Any struct", func(l *zap.Logger) { l.Info("m", zap.Any("s", holder{"n", tok})) }, true},
		{"Any pointer to struct", func(l *zap.Logger) { l.Info("m", zap.Any("s", &holder{"n", tok})) }, true},
		{"Any unexported field", func(l *zap.Logger) { l.Info("m", zap.Any("s", hidden{"n", tok})) }, false},
		{"Any slice", func(l *zap.Logger) { l.Info("m", zap.Any("s", []Token{tok})) }, true},
		{"Any map", func(l *zap.Logger) { l.Info("m", zap.Any("s", map[string]Token{"k": tok})) }, true},
		{"Stringer", func(l *zap.Logger) { l.Info("m", zap.Stringer("t", tok)) }, true},
		{"Reflect token", func(l *zap.Logger) { l.Info("m", zap.Reflect("t", tok)) }, true},
		{"Reflect struct", func(l *zap.Logger) { l.Info("m", zap.Reflect("s", holder{"n", tok})) }, true},
		{"Error", func(l *zap.Logger) { l.Info("m", zap.Error(fmt.Errorf("bad %v", tok))) }, true},
		{"sugar Infow", func(l *zap.Logger) { l.Sugar().Infow("m", "t", tok, "s", holder{"n", tok}) }, true},
		{"sugar Infof", func(l *zap.Logger) { l.Sugar().Infof("m %v %+v", tok, holder{"n", tok}) }, true},
		{"With", func(l *zap.Logger) { l.With(zap.Any("t", tok)).Info("m") }, true},
	}
	for _, f := range fields {
		t.Run(f.name, func(t *testing.T) {
			var buf bytes.Buffer
			enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
			l := zap.New(zapcore.NewCore(enc, zapcore.AddSync(&buf), zapcore.DebugLevel))
			f.log(l)
			if err := l.Sync(); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if !json.Valid(bytes.TrimSpace(buf.Bytes())) {
				t.Fatalf("not one JSON line: %s", out)
			}
			assertNoSecret(t, out, secret, f.wantRedacted)
		})
	}
}

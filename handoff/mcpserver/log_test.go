package mcpserver_test

import (
	"bytes"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/handoff/mcpserver"
)

// Neither a logged Access nor the server's own refusal logs show a token,
// through zap's real JSON encoder.
func TestTokensNeverReachTheLog(t *testing.T) {
	var buf bytes.Buffer
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(&buf), zap.DebugLevel))
	f := newFixture(t, fixtureOpts{})
	srv, err := mcpserver.New(mcpserver.Config{Coordinator: f.co, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	_, _, acc := f.reportTurn(t, f.ws, f.src.ID)
	wrong := acc
	wrong.Token = baton.NewToken()
	refusal(t, call(t, f.connect(t, "memory", wrong), mcpserver.ToolSubmit, map[string]any{"report": "x"}), baton.ErrConflict.Code)
	log.Info("access", zap.Any("access", acc), zap.Any("wrong", wrong))
	_ = log.Sync()
	out := buf.String()
	if !strings.Contains(out, "mcp tool call refused") || !strings.Contains(out, baton.Redacted) {
		t.Fatalf("log lacks the refusal or the redacted access:\n%s", out)
	}
	for _, tok := range []baton.Token{acc.Token, wrong.Token} {
		if strings.Contains(out, tok.Reveal()) {
			t.Fatalf("a token reached the log:\n%s", out)
		}
	}
}

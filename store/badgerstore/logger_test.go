package badgerstore

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

type logLine struct {
	Level   zapcore.Level
	Logger  string
	Message string
}

func lines(logs *observer.ObservedLogs) []logLine {
	var out []logLine
	for _, e := range logs.AllUntimed() {
		out = append(out, logLine{e.Level, e.LoggerName, e.Message})
	}
	return out
}

func TestBadgerLoggerLevels(t *testing.T) {
	tests := []struct {
		name    string
		enabled zapcore.Level
		want    []logLine
	}{
		{"debug", zapcore.DebugLevel, []logLine{
			{zapcore.ErrorLevel, "badger", "error 1"},
			{zapcore.WarnLevel, "badger", "warning 2"},
			{zapcore.DebugLevel, "badger", "info 3"},
			{zapcore.DebugLevel, "badger", "debug 4"},
		}},
		// badger's INFO chatter stays out of an Info log.
		{"info", zapcore.InfoLevel, []logLine{
			{zapcore.ErrorLevel, "badger", "error 1"},
			{zapcore.WarnLevel, "badger", "warning 2"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			core, logs := observer.New(tc.enabled)
			l := newBadgerLogger(zap.New(core), nil)
			l.Errorf("error %d\n", 1) // badger ends most formats with a newline
			l.Warningf("warning %d", 2)
			l.Infof("info %d\n", 3)
			l.Debugf("debug %d", 4)
			if d := cmp.Diff(tc.want, lines(logs)); d != "" {
				t.Errorf("log lines (-want +got):\n%s", d)
			}
		})
	}
}

// TestBadgerLogsThroughZap checks that badger's own lines reach the
// configured logger, and only it (badger's default logger writes INFO to
// stderr).
func TestBadgerLogsThroughZap(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	s, err := Open(t.TempDir(), Options{Small: true, Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	got := logs.FilterLoggerName("badger").AllUntimed()
	if len(got) == 0 {
		t.Fatal("no badger log line reached the zap logger on Open and Close")
	}
	for _, e := range got {
		if e.Level > zapcore.DebugLevel {
			t.Errorf("a clean Open and Close logged %v: %q", e.Level, e.Message)
		}
	}
}

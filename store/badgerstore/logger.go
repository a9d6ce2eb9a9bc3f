package badgerstore

import (
	"fmt"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// badgerLogger adapts a zap logger to badger.Logger. badger's method set
// differs from zap's SugaredLogger (Warningf, not Warnf), and badger ends
// most formats with a newline, which a structured log does not want.
//
// Levels: badger's ERROR and WARNING map to zap's Error and Warn. badger's
// INFO lines narrate its housekeeping (tables opened, memtables flushed,
// compactions) and map to Debug, so a host logging at Info sees only what
// needs attention. The message is formatted only when the level is enabled.
//
// An error line that says badger failed to write its tables (a memtable
// flush, which badger retries in the background forever) fails the
// store's health: the commits in that memtable may never reach a table.
type badgerLogger struct {
	z *zap.Logger
	h *health // nil: no health to report to
}

var _ badger.Logger = badgerLogger{}

func newBadgerLogger(z *zap.Logger, h *health) badgerLogger {
	return badgerLogger{z: z.Named("badger").WithOptions(zap.AddCallerSkip(1)), h: h}
}

func (l badgerLogger) Errorf(format string, args ...any) {
	if l.h != nil && strings.HasPrefix(format, "error flushing memtable") {
		_ = l.h.fail(fmt.Errorf("badger failed to flush a memtable: %v", args))
	}
	l.log(zapcore.ErrorLevel, format, args)
}

func (l badgerLogger) Warningf(format string, args ...any) { l.log(zapcore.WarnLevel, format, args) }

func (l badgerLogger) Infof(format string, args ...any) { l.log(zapcore.DebugLevel, format, args) }

func (l badgerLogger) Debugf(format string, args ...any) { l.log(zapcore.DebugLevel, format, args) }

func (l badgerLogger) log(lvl zapcore.Level, format string, args []any) {
	if !l.z.Core().Enabled(lvl) {
		return
	}
	l.z.Log(lvl, strings.TrimRight(fmt.Sprintf(format, args...), "\n"))
}

package session

import (
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
)

var time0 time.Time

func zapSession(id baton.SessionID) zap.Field { return zap.String("session", string(id)) }
func zapErr(err error) zap.Field              { return zap.Error(err) }

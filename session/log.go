package session

import (
	"go.uber.org/zap"

	"github.com/batonhq/baton"
)

func zapSession(id baton.SessionID) zap.Field { return zap.String("session", string(id)) }
func zapErr(err error) zap.Field              { return zap.Error(err) }

func zapLaunch(id baton.LaunchID) zap.Field { return zap.String("launch", string(id)) }

func zapWorkspace(id baton.WorkspaceID) zap.Field { return zap.String("workspace", string(id)) }

package host

import (
	"testing"

	"github.com/batonhq/baton/engine"
)

func TestActivityBusy(t *testing.T) {
	tests := []struct {
		name                 string
		a                    engine.Activity
		busy, busyForEvicted bool
	}{
		{"idle", engine.Activity{}, false, false},
		{"turn", engine.Activity{Turn: true}, true, true},
		{"tool", engine.Activity{Tool: true}, true, true},
		{"compaction", engine.Activity{Compaction: true}, true, true},
		{"queued", engine.Activity{Queued: 1}, true, true},
		{"wake sources only", engine.Activity{WakeSources: 2}, false, true},
		{"turn and wake sources", engine.Activity{Turn: true, WakeSources: 1}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := busyForParking(tt.a); got != tt.busy {
				t.Errorf("busyForParking = %v, want %v", got, tt.busy)
			}
			if got := busyForEviction(tt.a); got != tt.busyForEvicted {
				t.Errorf("busyForEviction = %v, want %v", got, tt.busyForEvicted)
			}
		})
	}
}

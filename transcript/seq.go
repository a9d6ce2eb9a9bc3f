package transcript

import "iter"

// Until turns a sequence of events and errors (an engine's transcript, which
// yields an error at most once, last) into a sequence of events that stops
// at the first error, and a function that returns that error once the
// sequence was ranged over (nil when it ended cleanly or was not ranged
// over). A briefing that replays a transcript checks it afterwards: the
// events before the error are correct, but the conversation is incomplete.
// A nil seq gives a nil sequence.
func Until(seq iter.Seq2[Event, error]) (iter.Seq[Event], func() error) {
	var err error
	if seq == nil {
		return nil, func() error { return nil }
	}
	events := func(yield func(Event) bool) {
		err = nil
		for ev, e := range seq {
			if e != nil {
				err = e
				return
			}
			if !yield(ev) {
				return
			}
		}
	}
	return events, func() error { return err }
}

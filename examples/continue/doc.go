// Command continue shows baton's continuation rule end to end, on the
// in-memory store and the scripted engine, with no flags and no I/O besides
// standard output:
//
//	go run ./examples/continue
//
// # Basics
//
// Two runs start in "process 1". Run A is killed before the engine
// confirmed its session, so it has no native session id; run B gets one.
// Each run's continuation is queued with session.QueueContinuation, run A's
// with how it ended. Process 1 exits, and "process 2", a new
// session.Service over the same store, runs the queue with
// Service.RunQueued:
//
//   - run A cannot be resumed, so it continues in a fresh session whose
//     opening prompt is a briefing built from the record (recap.Conversation):
//     the task, how the previous attempt ended, the conversation so far. The
//     program prints exactly what the engine received.
//   - run B is resumed byte for byte: the same native id, no briefing, the
//     user's message alone.
//
// The host's transcript keeps the user's words alone; a note records that a
// fresh session was seeded. The program prints run A's transcript to show
// it.
//
// # Caveats
//
// The store lives in memory, so the "restart" is a new Service over the same
// store value inside one process; with store/badgerstore or store/pgstore
// the same calls survive a real restart. The scripted engine stands in for
// an agent CLI: it resumes any native id unless scripted otherwise, and it
// never fails with engine.ErrSessionMissing here (see the session package's
// tests for that retry).
package main

// Package workspace holds the rules of a workspace that packages session
// and handoff both apply inside their store transactions, so that each
// rule has one owner:
//
//   - the current-session rule and activation order (Activate, Rollback,
//     Current, SelectCurrent, SelectImplicitResume, with the legacy
//     timestamp fallback for rows without an activation order) and the
//     ranking a workspace keeps so that none of them reads its sessions
//     (Refresh, Recompute, RankAll);
//   - reservations and their fencing (Take, Release, CheckWritable,
//     Reserved, and Owner, the credential of a take), and the incarnation
//     of an exclusive store (Incarnation);
//   - launch records (NewLaunchID, RecordLaunch, LaunchGone, EndReaped) and
//     the rebinding of wakeups to a transfer's target (RebindWakeups);
//   - reading a caller-named workspace and validating a configuration
//     (GetWorkspace, GetActive, CheckWorkspaceID, CheckConfig), so that a
//     bad input or an archived workspace gets the same answer everywhere.
//
// It also carries what package session's Service lends package handoff
// (Link, LaunchRequest, End, ReapResult and Reaped), which neither
// exports (handoff.Reaped is the public view of a Reaped).
package workspace

package badgerstore

import (
	"encoding/binary"
	"strings"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/records"
)

// Records are stored as the JSON of the store types (their tags are the
// format), times in UTC. The records listed in insert order carry their
// insert number in the workspace beside them, which is not part of the
// store type. A row is kept in the store's cache and shared by its readers:
// its slices are copied on the way in (toX) and out (record), never
// written through.

type workspaceRow struct{ store.Workspace }

func toWorkspace(w store.Workspace) workspaceRow {
	return workspaceRow{records.Workspace(w, records.UTC)}
}

func (w workspaceRow) record() store.Workspace {
	w.Running = records.Clone(w.Running)
	return w.Workspace
}

type sessionRow struct{ store.Session }

func toSession(s store.Session) sessionRow { return sessionRow{records.Session(s, records.UTC)} }
func (s sessionRow) record() store.Session { return s.Session }

// insertSeq is the record's insert number in its workspace (see
// currentSeq), for the records listed in insert order.
func (s sessionRow) insertSeq() uint64 { return uint64(s.Seq) }

type handoffRow struct {
	store.Handoff
	Seq uint64 `json:"seq"`
}

func toHandoff(h store.Handoff, seq uint64) handoffRow {
	return handoffRow{records.Handoff(h, records.UTC), seq}
}

func (h handoffRow) record() store.Handoff {
	h.History = records.Clone(h.History)
	return h.Handoff
}

func (h handoffRow) insertSeq() uint64 { return h.Seq }

type reservationRow struct{ store.Reservation }

func toReservation(r store.Reservation) reservationRow {
	return reservationRow{records.Reservation(r, records.UTC)}
}

func (r reservationRow) record() store.Reservation { return r.Reservation }

type wakeupRow struct{ store.Wakeup }

func toWakeup(w store.Wakeup) wakeupRow  { return wakeupRow{records.Wakeup(w, records.UTC)} }
func (w wakeupRow) record() store.Wakeup { return w.Wakeup }

type continuationRow struct {
	store.Continuation
	Seq uint64 `json:"seq"`
}

func toContinuation(c store.Continuation, seq uint64) continuationRow {
	return continuationRow{records.Continuation(c, records.UTC), seq}
}

func (c continuationRow) record() store.Continuation { return c.Continuation }

func (c continuationRow) insertSeq() uint64 { return c.Seq }

type launchRow struct {
	store.Launch
	Seq uint64 `json:"seq"`
}

func toLaunch(l store.Launch, seq uint64) launchRow {
	return launchRow{records.Launch(l, records.UTC), seq}
}

func (l launchRow) record() store.Launch { return l.Launch }

func (l launchRow) insertSeq() uint64 { return l.Seq }

type instructionRow struct {
	store.Instruction
	Seq uint64 `json:"seq"`
}

func toInstruction(i store.Instruction, seq uint64) instructionRow {
	return instructionRow{records.Instruction(i, records.UTC), seq}
}

func (i instructionRow) record() store.Instruction { return i.Instruction }

func (i instructionRow) insertSeq() uint64 { return i.Seq }

// Key layout. Every key
// starts with keyVersion and a table byte, followed by components: a
// string is its bytes with 0x00 escaped as 0x00 0xFF and a 0x00 0x01
// terminator (order-preserving and prefix-free:
// the prefix of workspace "a" never matches workspace "ab"); a number is 8
// bytes big-endian; a time is 8 bytes of Unix seconds with the sign bit
// flipped and 4 bytes of nanoseconds, so that byte order is time order,
// the zero time included.
//
//	W id                   workspace record
//	R ws                   reservation record
//	S id                   session record
//	s ws seq id      -> id sessions of ws, by Seq
//	H id                   handoff record
//	h ws seq id      -> id handoffs of ws, by insert
//	q ws requestID   -> id the (workspace, request id) unique key
//	p ws             -> id the pending slot of ws; the 'p' table is the
//	                       pending list, one key per pending handoff
//	K id                   wakeup record
//	k session at id  -> id wakeups pinned to session
//	l ws at id       -> id wakeups of ws
//	d at id          -> id pending wakeups (DueWakeups)
//	C id                   continuation record
//	c ws seq id      -> id continuations of ws, by insert
//	u createdAt ws seq id -> id queued continuations, oldest first
//	L id                   launch record
//	a ws             -> set the live launches of ws, one value as 'o'
//	V createdAt ws seq id -> id live launches of every workspace, oldest first
//	I id                   instruction record
//	i ws seq id      -> id instructions of ws, by insert
//	o ws             -> set the open (pending or unknown) instructions of ws,
//	                       one value: for each, by insert number, its Seq
//	                       (8 bytes) and its id (uvarint length, bytes)
//	f ws seq               change feed entry (the change itself)
//	n kind ws        -> u64 the per-workspace insert counter of a kind; kind
//	                       'f' is the last change Seq of ws
//	g list [owner]   -> "" the phantom guard of a list (see list.guard)
//
// The open instructions and the live launches of a workspace are one
// value per workspace (a per-workspace set, see wsSet), and not a list of
// keys, because nearly every instruction leaves the set (when delivered)
// and every launch does (when it ends): a key deleted from a list stays in
// badger as a tombstone that every scan of the list steps over until a
// compaction drops it, so such a list would cost O(members removed
// lately), while a Get reads the latest version of one key directly.
// Every change to a set reads it with Get and rewrites it, so an Update
// that read it conflicts with any concurrent change (no guard needed).
// The live launches of every workspace ('V') stay a list: one value for
// all workspaces would be a key that every launch of every workspace
// rewrites, so that the launches of unrelated workspaces would conflict.
//
// Outside the versioned key space: formatKey.
//
// Uniqueness rests on single keys that every writer reads with Get before
// it writes (the record key for ids, q for request ids, p for the slot): a
// Get of a missing key enters badger's read set, so of two transactions
// that both saw the key missing, the second to commit conflicts.
const keyVersion = '1'

// formatKey holds the format marker (outside the versioned key space).
var formatKey = []byte("!badgerstore/format")

// formatVersion is the value of formatKey this code writes and reads.
// The development versions before it wrote "1" and "2", which it refuses.
const formatVersion = "3"

// Tables.
const (
	tWorkspace        = 'W'
	tReservation      = 'R'
	tSession          = 'S'
	tSessionsByWS     = 's'
	tHandoff          = 'H'
	tHandoffsByWS     = 'h'
	tRequest          = 'q'
	tPendingSlot      = 'p'
	tWakeup           = 'K'
	tWakeupsBySession = 'k'
	tWakeupsByWS      = 'l'
	tDue              = 'd'
	tContinuation     = 'C'
	tContsByWS        = 'c'
	tQueued           = 'u'
	tLaunch           = 'L'
	tLiveSet          = 'a'
	tLaunchSeq        = 'v' // the kind of the launch insert counter
	tLive             = 'V'
	tInstruction      = 'I'
	tInstrByWS        = 'i'
	tOpenInstr        = 'o'
	tFeed             = 'f'
	tCounter          = 'n'
	tGuard            = 'g'
)

// key builds a key by appending components.
type key []byte

// newKey starts a key in table, with room for the components most keys
// have (appending them then allocates nothing more).
func newKey(table byte) key {
	k := make(key, 2, 64)
	k[0], k[1] = keyVersion, table
	return k
}

func (k key) str(s string) key {
	k = append(k, strings.ReplaceAll(s, "\x00", "\x00\xff")...)
	return append(k, 0, 1)
}

func (k key) u64(v uint64) key { return binary.BigEndian.AppendUint64(k, v) }

func (k key) time(t time.Time) key {
	k = binary.BigEndian.AppendUint64(k, uint64(t.Unix())^(1<<63))
	return binary.BigEndian.AppendUint32(k, uint32(t.Nanosecond()))
}

// recordKey is the key of the record id in its table.
func recordKey[K ~string](table byte, id K) key { return newKey(table).str(string(id)) }

func pendingSlotKey(ws baton.WorkspaceID) key { return newKey(tPendingSlot).str(string(ws)) }
func feedPrefix(ws baton.WorkspaceID) key     { return newKey(tFeed).str(string(ws)) }

func requestKey(ws baton.WorkspaceID, id string) key { return newKey(tRequest).str(string(ws)).str(id) }
func counterKey(kind byte, ws baton.WorkspaceID) key {
	return append(newKey(tCounter), kind).str(string(ws))
}

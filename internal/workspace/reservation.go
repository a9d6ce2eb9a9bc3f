package workspace

import (
	"errors"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// CheckWritable returns nil when the workspace is not reserved, or when
// token, minted for the take at epoch, is the reservation's current owner
// (the zero token is "no owner"). Otherwise ErrStaleEpoch (the owner of an
// older take) or ErrWorkspaceBusy, which the zero token also gets while a
// context-pressure transfer is due there (MarkPressure).
func CheckWritable(tx store.Tx, ws baton.WorkspaceID, token baton.Token, epoch int64) error {
	r, err := getReservation(tx, ws)
	if err != nil {
		return err
	}
	if !r.Held {
		if token.IsZero() {
			return checkDue(tx, ws)
		}
		return nil
	}
	if token.IsZero() {
		return ErrWorkspaceBusy
	}
	if epoch != r.Epoch {
		return baton.Errorf(ErrStaleEpoch, "token of epoch %d, reservation at %d", epoch, r.Epoch)
	}
	if !r.Owner.Matches(token) {
		return ErrWorkspaceBusy
	}
	return nil
}

// Owner is the credential of a reservation's holder: the owner token and
// the epoch of the take it was minted for. The zero Owner is "no owner".
type Owner struct {
	Token baton.Token
	Epoch int64
}

// Reserved reports whether the workspace's reservation is held.
func Reserved(tx store.Tx, ws baton.WorkspaceID) (bool, error) {
	r, err := getReservation(tx, ws)
	return r.Held, err
}

// getReservation reads the workspace's reservation: the zero one, not
// held, when it has none.
func getReservation(tx store.Tx, ws baton.WorkspaceID) (store.Reservation, error) {
	r, err := tx.GetReservation(ws)
	if errors.Is(err, store.ErrNotFound) {
		return store.Reservation{}, nil
	}
	return r, err
}

// Lease names the process that drives a reserved workspace's transfer: its
// instance id, the Incarnation of the exclusive store it writes through
// (empty on a shared store), and until when it holds the lease unless
// renewed.
type Lease struct {
	Holder  string
	Store   string
	Expires time.Time
}

// Incarnation returns the incarnation of st if st is exclusive, in the
// sense of package store's doc (one process holds it alone while it is
// open: its method Incarnation() string, as badgerstore's), else "".
func Incarnation(st store.Store) string {
	if x, ok := st.(interface{ Incarnation() string }); ok {
		return x.Incarnation()
	}
	return ""
}

// Take takes (or re-takes) the workspace's reservation for handoff h: a new
// owner token, the epoch incremented, the runtime lease given to lease. It
// returns the new owner token and its epoch; only the token's hash is
// stored.
func Take(tx store.Tx, ws baton.WorkspaceID, h baton.HandoffID, lease Lease, now time.Time) (baton.Token, int64, error) {
	r, err := getReservation(tx, ws)
	if err != nil {
		return baton.Token{}, 0, err
	}
	tok := baton.NewToken()
	r.Workspace, r.Held, r.Handoff, r.Owner = ws, true, h, tok.Hash()
	r.Epoch++
	r.LeaseHolder, r.LeaseStore, r.LeaseExpires = lease.Holder, lease.Store, lease.Expires
	r.UpdatedAt = now
	if err := tx.PutReservation(r); err != nil {
		return baton.Token{}, 0, err
	}
	return tok, r.Epoch, nil
}

// Release releases the workspace's reservation if handoff h holds it. The
// row stays, so the epoch keeps growing across takes.
func Release(tx store.Tx, ws baton.WorkspaceID, h baton.HandoffID, now time.Time) error {
	r, err := getReservation(tx, ws)
	if err != nil || !r.Held || r.Handoff != h {
		return err
	}
	r.Held, r.Owner, r.UpdatedAt = false, baton.TokenHash{}, now
	r.LeaseHolder, r.LeaseStore, r.LeaseExpires = "", "", time.Time{}
	return tx.PutReservation(r)
}

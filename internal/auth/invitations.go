package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
)

// An invitation lets someone join a namespace with a role: an admin makes
// it for an email and gets a one-time code back, which it hands to the
// invitee (Folio sends no mail); the invitee verifies the email and code,
// without credentials, and gets an application of the namespace with that
// role, its id and secret. A code verifies once, before it expires; only
// its SHA-256 is stored (it is 32 random bytes: no guessing, so no bcrypt
// and no slow compare is needed to keep it safe).
//
// One invitation per email and namespace: inviting an email again replaces
// its invitation, and its older code no longer verifies.

// The statuses of an invitation, as the original named them.
const (
	InvitationPending  = "PENDING"
	InvitationAccepted = "ACCEPTED"
	InvitationExpired  = "EXPIRED"
)

// DefaultInvitationTTL is how long an invitation's code verifies.
const DefaultInvitationTTL = 72 * time.Hour

// maxEmailBytes is the longest address RFC 5321 lets through.
const maxEmailBytes = 254

type invitationRecord struct {
	Email          string    `json:"email"`
	NS             string    `json:"namespace"`
	Role           Role      `json:"role"`
	CodeHash       []byte    `json:"code_hash,omitempty"` // cleared once accepted
	Accepted       bool      `json:"accepted,omitempty"`
	App            string    `json:"app,omitempty"` // the application it became
	CreatedAt      time.Time `json:"created_at"`
	CreatedBy      string    `json:"created_by"`
	CreatedByOwner bool      `json:"created_by_owner,omitempty"`
	CreatedByName  string    `json:"created_by_name,omitempty"`
	ExpiresAt      time.Time `json:"expires_at"`
}

func (r invitationRecord) status(now time.Time) string {
	switch {
	case r.Accepted:
		return InvitationAccepted
	case !now.Before(r.ExpiresAt):
		return InvitationExpired
	}
	return InvitationPending
}

// Invitation is an invitation as the API shows it; Code is set only in
// what creating it returns.
type Invitation struct {
	Email         string
	Role          Role
	Status        string
	Namespace     Namespace
	CreatedBy     string
	CreatedByName string
	ExpiresAt     time.Time
	Code          string
}

// NewInvitation is what inviting an email takes. SentByName is the
// inviter's name as the invitation shows it (the original's
// invitation_sent_by_name).
type NewInvitation struct {
	Email      string
	Role       Role
	SentByName string
}

// ParseInvitationStatus checks a status a request filters by (any case);
// "" is every status.
func ParseInvitationStatus(s string) (string, error) {
	u := strings.ToUpper(s)
	switch u {
	case "", InvitationPending, InvitationAccepted, InvitationExpired:
		return u, nil
	}
	return "", apierror.Errorf(apierror.InvalidArgument, "Status can be one of these [%s, %s, %s]", InvitationPending, InvitationAccepted, InvitationExpired)
}

// namespaceWide refuses a caller confined to a project: invitations make
// applications of the whole namespace.
func namespaceWide(by Caller) error {
	if by.Project != "" {
		return apierror.Errorf(apierror.PermissionDenied, "an app key of project '%s' cannot manage the namespace's invitations", by.Project)
	}
	return nil
}

func checkEmail(email string) error {
	if email == "" || len(email) > maxEmailBytes || !utf8.ValidString(email) || !strings.Contains(email, "@") {
		return apierror.Errorf(apierror.InvalidArgument, "an invitation needs an email address of at most %d bytes", maxEmailBytes)
	}
	return nil
}

// CreateInvitations invites each email to the caller's namespace with its
// role (at most the caller's), and returns the invitations with their
// codes, shown this once.
func (s *Service) CreateInvitations(ctx context.Context, tx kv.Tx, by Caller, list []NewInvitation) ([]Invitation, error) {
	if err := namespaceWide(by); err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, apierror.Errorf(apierror.InvalidArgument, "no invitations to create")
	}
	now := s.now().UTC()
	out := make([]Invitation, 0, len(list))
	for _, in := range list {
		if err := checkEmail(in.Email); err != nil {
			return nil, err
		}
		if err := canGrant(by, in.Role); err != nil {
			return nil, err
		}
		if len(in.SentByName) > MaxAppNameBytes || !utf8.ValidString(in.SentByName) {
			return nil, apierror.Errorf(apierror.InvalidArgument, "invitation_sent_by_name must be valid UTF-8 of at most %d bytes", MaxAppNameBytes)
		}
		code := newSecret()
		hash := sha256.Sum256([]byte(code))
		rec := invitationRecord{Email: in.Email, NS: by.Namespace.Name, Role: in.Role, CodeHash: hash[:],
			CreatedAt: now, CreatedBy: by.App, CreatedByOwner: by.Role == RoleOwner, CreatedByName: in.SentByName, ExpiresAt: now.Add(s.cfg.InvitationTTL)}
		if err := putInvitation(tx, rec); err != nil {
			return nil, err
		}
		inv := rec.invitation(by.Namespace, now)
		inv.Code = code
		out = append(out, inv)
	}
	return out, nil
}

func (r invitationRecord) invitation(ns Namespace, now time.Time) Invitation {
	return Invitation{Email: r.Email, Role: r.Role, Status: r.status(now), Namespace: ns, CreatedBy: r.CreatedBy,
		CreatedByName: r.CreatedByName, ExpiresAt: r.ExpiresAt}
}

func putInvitation(tx kv.Tx, rec invitationRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return tx.Set(keyspace.Invitation(rec.Email, rec.NS), b)
}

// scanInvitations calls fn with each invitation of r and its key.
func scanInvitations(ctx context.Context, tx kv.Tx, r kv.Range, fn func(key []byte, rec invitationRecord) error) error {
	it := tx.Scan(ctx, r, kv.ScanOptions{})
	defer it.Close()
	for it.Next() {
		var rec invitationRecord
		if err := json.Unmarshal(it.Value(), &rec); err != nil {
			return corrupt("invitation", it.Key(), err)
		}
		if err := fn(it.Key(), rec); err != nil {
			return err
		}
	}
	return it.Err()
}

// ListInvitations returns the invitations of the caller's namespace with
// the status (every one for ""), by email.
func (s *Service) ListInvitations(ctx context.Context, tx kv.Tx, by Caller, status string) ([]Invitation, error) {
	if err := namespaceWide(by); err != nil {
		return nil, err
	}
	now := s.now()
	var out []Invitation
	err := scanInvitations(ctx, tx, keyspace.Invitations(), func(_ []byte, rec invitationRecord) error {
		if rec.NS == by.Namespace.Name && (status == "" || rec.status(now) == status) {
			out = append(out, rec.invitation(by.Namespace, now))
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Email < out[j].Email })
	return out, err
}

// DeleteInvitations deletes the invitation of email to the caller's
// namespace, if it has the status (any, for ""). An invitation that is not
// there is no error: what was asked for holds.
func (s *Service) DeleteInvitations(ctx context.Context, tx kv.Tx, by Caller, email, status string) error {
	if err := namespaceWide(by); err != nil {
		return err
	}
	if err := checkEmail(email); err != nil {
		return err
	}
	key := keyspace.Invitation(email, by.Namespace.Name)
	rec, ok, err := getInvitation(ctx, tx, key)
	if err != nil || !ok || (status != "" && rec.status(s.now()) != status) {
		return err
	}
	return tx.Clear(key)
}

func getInvitation(ctx context.Context, tx kv.Tx, key []byte) (invitationRecord, bool, error) {
	b, err := tx.Get(ctx, key)
	if errors.Is(err, kv.ErrNotFound) {
		return invitationRecord{}, false, nil
	}
	if err != nil {
		return invitationRecord{}, false, err
	}
	var rec invitationRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return invitationRecord{}, false, corrupt("invitation", key, err)
	}
	return rec, true, nil
}

// errBadInvitation is the answer to an email and code that match no
// pending invitation: UNAUTHENTICATED, as the original's.
var errBadInvitation = apierror.Errorf(apierror.Unauthenticated, "invalid invitation: no pending invitation has this email and code")

// VerifyInvitation accepts the pending invitation of email whose code is
// code: it becomes an application of the invitation's namespace with its
// role, returned with its secret (shown this once). A code verifies once:
// the transaction reads the invitation and marks it accepted, so of two
// verifications at once one commits and the other, retried, finds it
// accepted.
func (s *Service) VerifyInvitation(ctx context.Context, tx kv.Tx, email, code string) (*Application, error) {
	if email == "" || code == "" {
		return nil, apierror.Errorf(apierror.InvalidArgument, "email and code are required")
	}
	hash := sha256.Sum256([]byte(code))
	var found *invitationRecord
	err := scanInvitations(ctx, tx, keyspace.InvitationsOf(email), func(_ []byte, rec invitationRecord) error {
		if rec.Email == email && subtle.ConstantTimeCompare(rec.CodeHash, hash[:]) == 1 {
			found = &rec
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	now := s.now()
	switch {
	case found == nil, found.Accepted:
		return nil, errBadInvitation
	case found.status(now) == InvitationExpired:
		return nil, apierror.Errorf(apierror.Unauthenticated, "the invitation expired at %s: ask for a new one", found.ExpiresAt.Format(time.RFC3339))
	}
	ns, err := LookupNamespace(ctx, tx, found.NS)
	if err != nil {
		return nil, err
	}
	app, err := s.CreateApplication(ctx, tx, NewApplication{Name: found.Email, Description: "joined by invitation",
		Namespace: ns, Role: found.Role, CreatedBy: found.CreatedBy, CreatedByOwner: found.CreatedByOwner, Email: found.Email})
	if err != nil {
		return nil, err
	}
	rec := *found
	rec.Accepted, rec.CodeHash, rec.App = true, nil, app.ID
	return app, putInvitation(tx, rec)
}

// ListUsers returns the users of the caller's namespace: its applications
// (those invitations made, with their email, and the others), in id order,
// without secrets. The owner too sees only its own namespace's: users are
// a namespace's members.
func (s *Service) ListUsers(ctx context.Context, tx kv.Tx, by Caller) ([]*Application, error) {
	if err := namespaceWide(by); err != nil {
		return nil, err
	}
	return s.listApplications(ctx, tx, by, func(rec appRecord) bool { return rec.NS == by.Namespace.Name })
}

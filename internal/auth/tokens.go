package auth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/bcrypt"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/kv"
)

// The grants of the token endpoint.
const (
	GrantClientCredentials = "client_credentials"
	GrantRefreshToken      = "refresh_token"
)

// TokenRequest is a request for tokens: an application's id and secret,
// or a refresh token. From is the address it came from (for the limiter).
type TokenRequest struct {
	GrantType    string
	ClientID     string
	ClientSecret string
	RefreshToken string
	From         string
}

// Tokens are what the token endpoint answers.
type Tokens struct {
	Access, Refresh string
	// ExpiresIn is the access token's lifetime.
	ExpiresIn time.Duration
}

// claims are a token's: the registered ones (iss, aud, sub: the
// application's id, exp, iat, nbf), its namespace, its application's role
// and secret generation when issued, and what it is for.
type claims struct {
	jwt.RegisteredClaims
	Namespace   string `json:"ns"`
	NamespaceID int64  `json:"nsid"`
	Role        Role   `json:"role"`
	Gen         int64  `json:"gen"`
	Use         string `json:"use"` // "access" or "refresh"
}

const (
	useAccess  = "access"
	useRefresh = "refresh"
)

var errBadCredentials = apierror.Errorf(apierror.Unauthenticated, "invalid client credentials")

// Token answers a token request: the grant's credentials checked, an
// access token and a refresh token. Failed requests are counted per
// address and per client id from that address; past the limit a request
// is refused with RESOURCE_EXHAUSTED before its credentials are looked
// at. No count spans addresses: wrong secrets sent by one must not lock
// the application out for the others (a tenant the owner, say). What the
// limit bounds is the bcrypt time one address costs; guessing a secret
// (32 random bytes, or 16 at least) is hopeless at any rate.
func (s *Service) Token(ctx context.Context, req TokenRequest) (*Tokens, error) {
	switch req.GrantType {
	case GrantClientCredentials:
		if req.ClientID == "" || req.ClientSecret == "" {
			return nil, apierror.Errorf(apierror.InvalidArgument, "client_id and client_secret are required with grant_type client_credentials")
		}
		idFrom := fmt.Sprintf("from:%q id:%s", req.From, req.ClientID) // quoted: one key names one pair
		if err := s.failed.check(s.now(), limit{"addr:" + req.From, 2}, limit{idFrom, 1}); err != nil {
			return nil, err
		}
		rec, ns, err := s.checkSecret(ctx, req.ClientID, req.ClientSecret)
		if err != nil {
			if apierror.CodeOf(err) == apierror.Unauthenticated {
				s.failed.fail(s.now(), "addr:"+req.From, idFrom)
				s.log.Info("token refused", "reason", "bad client credentials", "client_id", req.ClientID, "from", req.From)
			}
			return nil, err
		}
		return s.issue(ctx, req.ClientID, ns, rec)
	case GrantRefreshToken:
		if req.RefreshToken == "" {
			return nil, apierror.Errorf(apierror.InvalidArgument, "refresh_token is required with grant_type refresh_token")
		}
		if err := s.failed.check(s.now(), limit{"addr:" + req.From, 2}); err != nil {
			return nil, err
		}
		id, rec, ns, err := s.checkRefresh(ctx, req.RefreshToken)
		if err != nil {
			if apierror.CodeOf(err) == apierror.Unauthenticated {
				s.failed.fail(s.now(), "addr:"+req.From)
				s.log.Info("token refused", "reason", "bad refresh token", "from", req.From)
			}
			return nil, err
		}
		return s.issue(ctx, id, ns, rec)
	}
	return nil, apierror.Errorf(apierror.InvalidArgument, "Failed to GetAccessToken: reason = unsupported grant_type, it has to be one of [refresh_token, client_credentials]")
}

// checkSecret reads the application and compares its secret, taking as
// long for an unknown id as for a wrong secret.
func (s *Service) checkSecret(ctx context.Context, id, secret string) (appRecord, Namespace, error) {
	var rec appRecord
	var found bool
	var ns Namespace
	_, err := kv.Run(ctx, s.store, func(tx kv.Tx) error {
		var err error
		if rec, found, err = getApp(ctx, tx.Snapshot(), id); err != nil || !found {
			return err
		}
		ns, err = LookupNamespace(ctx, tx.Snapshot(), rec.NS)
		return err
	})
	if err != nil {
		return appRecord{}, Namespace{}, err
	}
	hash := s.dummy
	if found {
		hash = rec.SecretHash
	}
	match := bcrypt.CompareHashAndPassword(hash, []byte(secret)) == nil
	if !found || !match {
		return appRecord{}, Namespace{}, errBadCredentials
	}
	return rec, ns, nil
}

// checkRefresh verifies a refresh token and reads its application, which
// must still exist with the secret it had when the token was issued.
func (s *Service) checkRefresh(ctx context.Context, token string) (string, appRecord, Namespace, error) {
	c, err := s.parse(ctx, token, useRefresh)
	if err != nil {
		return "", appRecord{}, Namespace{}, err
	}
	var rec appRecord
	var found bool
	var ns Namespace
	_, err = kv.Run(ctx, s.store, func(tx kv.Tx) error {
		var err error
		if rec, found, err = getApp(ctx, tx.Snapshot(), c.Subject); err != nil || !found {
			return err
		}
		ns, err = LookupNamespace(ctx, tx.Snapshot(), rec.NS)
		return err
	})
	if err != nil {
		return "", appRecord{}, Namespace{}, err
	}
	if !found || rec.SecretGen != c.Gen {
		return "", appRecord{}, Namespace{}, unauthenticated("refresh token revoked: its application was deleted or its secret rotated")
	}
	return c.Subject, rec, ns, nil
}

// issue signs an access token and a refresh token for the application.
func (s *Service) issue(ctx context.Context, id string, ns Namespace, rec appRecord) (*Tokens, error) {
	now := s.now()
	key, err := s.keys.signer(ctx, now)
	if err != nil {
		return nil, err
	}
	sign := func(use string, ttl time.Duration) (string, error) {
		c := claims{
			RegisteredClaims: jwt.RegisteredClaims{Issuer: s.cfg.Issuer, Audience: jwt.ClaimStrings{s.cfg.Audience}, Subject: id,
				IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(ttl))},
			Namespace: ns.Name, NamespaceID: ns.ID, Role: rec.Role, Gen: rec.SecretGen, Use: use,
		}
		t := jwt.NewWithClaims(jwt.SigningMethodEdDSA, c)
		t.Header["kid"] = key.ID
		return t.SignedString(key.Private)
	}
	access, err := sign(useAccess, s.cfg.AccessTTL)
	if err != nil {
		return nil, err
	}
	refresh, err := sign(useRefresh, s.cfg.RefreshTTL)
	if err != nil {
		return nil, err
	}
	return &Tokens{Access: access, Refresh: refresh, ExpiresIn: s.cfg.AccessTTL}, nil
}

// parse verifies a token's signature, issuer, audience, times and use.
func (s *Service) parse(ctx context.Context, token, use string) (*claims, error) {
	var c claims
	var lookupErr error
	_, err := jwt.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		k, err := s.keys.verifier(ctx, kid, s.now())
		if err != nil {
			lookupErr = err
			return nil, err
		}
		if k == nil {
			return nil, errors.New("unknown signing key")
		}
		return k.Private.Public(), nil
	}, jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}), jwt.WithIssuer(s.cfg.Issuer),
		jwt.WithAudience(s.cfg.Audience), jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithTimeFunc(s.now))
	if lookupErr != nil {
		return nil, lookupErr // the store's, not the token's
	}
	if err != nil {
		return nil, unauthenticated("invalid token: %s", tokenProblem(err))
	}
	if c.Use != use {
		return nil, unauthenticated("invalid token: its use is '%s', not '%s'", c.Use, use)
	}
	return &c, nil
}

// tokenProblem says what is wrong with a token in a few words, without
// echoing any of it.
func tokenProblem(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "malformed"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return "bad signature"
	case errors.Is(err, jwt.ErrTokenExpired):
		return "expired"
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "not valid yet"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "issued for another audience"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "issued by another issuer"
	}
	return "not accepted"
}

// Verify checks an access token and returns the caller it names. The
// application must still exist with the secret it had when the token was
// issued, as read at most AppCacheTTL ago; its role is its current one.
func (s *Service) Verify(ctx context.Context, token string) (Caller, error) {
	now := s.now()
	c, ok := s.verified.get(token, now)
	if !ok {
		var err error
		if c, err = s.parse(ctx, token, useAccess); err != nil {
			return Caller{}, err
		}
		s.verified.put(token, c)
	}
	rec, found, err := s.apps.get(ctx, c.Subject, now)
	if err != nil {
		return Caller{}, err
	}
	if !found || rec.SecretGen != c.Gen {
		return Caller{}, unauthenticated("token revoked: its application was deleted or its secret rotated")
	}
	return Caller{App: c.Subject, Namespace: Namespace{ID: c.NamespaceID, Name: c.Namespace}, Role: rec.Role, Project: rec.Project}, nil
}

// verifiedTokens remembers the access tokens a node has verified, until
// they expire: a client sends the same token with every call, and checking
// its signature again would cost more than many a call (an Ed25519
// verification, tens of microseconds). What can change about a valid
// token (its application deleted or its secret rotated) is checked on
// every call all the same.
type verifiedTokens struct {
	mu     sync.Mutex
	tokens map[string]*claims
}

// maxVerifiedTokens bounds the cache; past it the cache starts over.
const maxVerifiedTokens = 10_000

func (v *verifiedTokens) get(token string, now time.Time) (*claims, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	c, ok := v.tokens[token]
	if !ok {
		return nil, false
	}
	if !now.Before(c.ExpiresAt.Time) {
		delete(v.tokens, token)
		return nil, false
	}
	return c, true
}

func (v *verifiedTokens) put(token string, c *claims) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.tokens == nil || len(v.tokens) >= maxVerifiedTokens {
		v.tokens = map[string]*claims{}
	}
	v.tokens[token] = c
}

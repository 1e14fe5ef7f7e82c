package vbmc

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"sort"
	"sync"
	"time"
)

// errSessionLimit is returned when MaxSessions sessions are open.
var errSessionLimit = errors.New("too many open sessions")

// session is one Redfish session (SessionService/Sessions/<ID>).
type session struct {
	ID       string
	UserName string
	created  time.Time
	lastUsed time.Time
}

// sessionStore holds the Redfish sessions, keyed by the SHA-256 of their
// token (the token itself is never kept, so a dump cannot leak one).
type sessionStore struct {
	timeout time.Duration
	max     int

	mu     sync.Mutex
	byHash map[[32]byte]*session
	byID   map[string][32]byte
}

func newSessionStore(timeout time.Duration, max int) *sessionStore {
	return &sessionStore{timeout: timeout, max: max, byHash: map[[32]byte]*session{}, byID: map[string][32]byte{}}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// create opens a session and returns it with its token.
func (s *sessionStore) create(user string, now time.Time) (*session, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.byHash) >= s.max {
		s.expireLocked(now)
		if len(s.byHash) >= s.max {
			return nil, "", errSessionLimit
		}
	}
	token := randomHex(32)
	sess := &session{ID: randomHex(8), UserName: user, created: now, lastUsed: now}
	h := sha256.Sum256([]byte(token))
	s.byHash[h] = sess
	s.byID[sess.ID] = h
	return sess, token, nil
}

// lookup returns the live session of token, refreshing its idle timer.
func (s *sessionStore) lookup(token string, now time.Time) (*session, bool) {
	h := sha256.Sum256([]byte(token))
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.byHash[h]
	if !ok {
		return nil, false
	}
	if now.Sub(sess.lastUsed) > s.timeout {
		delete(s.byHash, h)
		delete(s.byID, sess.ID)
		return nil, false
	}
	sess.lastUsed = now
	return sess, true
}

// get returns the session with id.
func (s *sessionStore) get(id string) (session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.byID[id]
	if !ok {
		return session{}, false
	}
	return *s.byHash[h], true
}

// delete closes the session with id.
func (s *sessionStore) delete(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.byID[id]
	if !ok {
		return false
	}
	delete(s.byID, id)
	delete(s.byHash, h)
	return true
}

// ids lists the open sessions' ids, sorted.
func (s *sessionStore) ids(now time.Time) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(now)
	out := make([]string, 0, len(s.byID))
	for id := range s.byID {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func (s *sessionStore) expireLocked(now time.Time) {
	for h, sess := range s.byHash {
		if now.Sub(sess.lastUsed) > s.timeout {
			delete(s.byHash, h)
			delete(s.byID, sess.ID)
		}
	}
}

// credentialsMatch compares in constant time (per length) so a wrong
// password does not tell how much of it was right.
func credentialsMatch(user, password, wantUser, wantPassword string) bool {
	u := subtle.ConstantTimeCompare([]byte(user), []byte(wantUser))
	p := subtle.ConstantTimeCompare([]byte(password), []byte(wantPassword))
	return u&p == 1
}

package auth

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// Bounds of the http_basic verified-credential cache: bcrypt takes tens of
// milliseconds per check on purpose, so a client that sends the same
// correct credentials with every request is checked once per basicTTL.
const (
	basicCacheSize = 1024
	basicTTL       = 5 * time.Minute
	// maxHtpasswd bounds the user file ferro reads.
	maxHtpasswd = 4 << 20
	// Bounds of the checks waiting for a bcrypt slot: per client address
	// and in all. Past them a request is refused without a check.
	basicWaitingPerClient = 32
	basicWaiting          = 1024
)

// Basic is the http_basic strategy: an Apache htpasswd file with bcrypt
// entries ([DEFAULT]http_basic_auth_user_file), as oslo.middleware's
// BasicAuthMiddleware. Its users get Unrestricted credentials, as in
// Ironic, which enforces no policy unless auth_strategy is keystone.
type Basic struct {
	path  string
	users atomic.Pointer[userFile]
	// key makes the cache's keys an HMAC of user and password, so neither
	// the password nor an unsalted hash of it is held.
	key   [32]byte
	cache *ttlCache[string]
	// flight makes concurrent requests with the same credentials wait for
	// one bcrypt check; slots bounds the checks running at once, so wrong
	// passwords (never cached) cost at most that many cores, and shares
	// them out by client address, so that a flood from one address cannot
	// starve another's login.
	mu     sync.Mutex
	flight map[[32]byte]*check
	slots  *fairSlots
	// compare is bcrypt's comparison (a test counts the work it is given).
	compare func(hash, password []byte) error
}

// userFile is one reading of the user file.
type userFile struct {
	hashes map[string][]byte
	// dummy is what an unknown user's password is compared with: a hash
	// of the cost most of the file's entries have, so that the check
	// costs what a known user's does.
	dummy []byte
}

// check is one bcrypt verification that others may wait for.
type check struct {
	done chan struct{}
	ok   bool
	// err is a check that did not run (no slot).
	err error
}

// NewBasic reads and checks the user file at path: every entry must be a
// bcrypt hash ($2y$, $2a$, $2b$), as oslo.middleware requires.
func NewBasic(path string) (*Basic, error) {
	b := &Basic{path: path, cache: newTTLCache[string](basicCacheSize, time.Now), flight: map[[32]byte]*check{},
		slots:   newFairSlots(max(1, runtime.GOMAXPROCS(0)), basicWaitingPerClient, basicWaiting),
		compare: bcrypt.CompareHashAndPassword}
	if _, err := rand.Read(b.key[:]); err != nil {
		return nil, err
	}
	if err := b.Reload(); err != nil {
		return nil, err
	}
	return b, nil
}

// Reload reads the user file again (ferro serve calls it on SIGHUP) and
// forgets every verified credential.
func (b *Basic) Reload() error {
	users, err := readHtpasswd(b.path)
	if err != nil {
		return err
	}
	dummy, err := dummyHash(users)
	if err != nil {
		return err
	}
	b.users.Store(&userFile{hashes: users, dummy: dummy})
	b.cache.clear()
	return nil
}

// dummyHash is a hash of a random password at the cost most of the
// entries have (the lower on a tie; bcrypt's default for an empty file).
func dummyHash(users map[string][]byte) ([]byte, error) {
	count := map[int]int{}
	for _, h := range users {
		if c, err := bcrypt.Cost(h); err == nil {
			count[c]++
		}
	}
	cost := bcrypt.DefaultCost
	if len(count) > 0 {
		costs := make([]int, 0, len(count))
		for c := range count {
			costs = append(costs, c)
		}
		slices.Sort(costs)
		cost = costs[0]
		for _, c := range costs {
			if count[c] > count[cost] {
				cost = c
			}
		}
	}
	pw := make([]byte, 32)
	rand.Read(pw)
	h, err := bcrypt.GenerateFromPassword(pw, cost)
	if err != nil {
		return nil, fmt.Errorf("http_basic: dummy hash of cost %d: %w", cost, err)
	}
	return h, nil
}

func readHtpasswd(path string) (map[string][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read http_basic_auth_user_file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read http_basic_auth_user_file: %w", err)
	}
	if fi.Size() > maxHtpasswd {
		return nil, fmt.Errorf("http_basic_auth_user_file %s is larger than %d bytes", path, maxHtpasswd)
	}
	users := map[string][]byte{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || !strings.Contains(line, ":") {
			continue
		}
		user, hash, _ := strings.Cut(line, ":")
		switch {
		case strings.HasPrefix(hash, "$2y$"), strings.HasPrefix(hash, "$2a$"), strings.HasPrefix(hash, "$2b$"):
		default:
			return nil, fmt.Errorf("http_basic_auth_user_file %s line %d: only bcrypt digested passwords are supported (user %q)", path, n, user)
		}
		if _, dup := users[user]; !dup {
			// The first entry wins, as oslo.middleware's scan.
			users[user] = []byte(hash)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read http_basic_auth_user_file: %w", err)
	}
	return users, nil
}

// Challenge implements Authenticator.
func (b *Basic) Challenge() string { return `Basic realm="Baremetal API"` }

// ParseBasic decodes an "Authorization: Basic …" value into user and
// password, as oslo.middleware: a missing header is ErrUnauthorized, an
// unparsable one or another scheme ErrMalformed.
func ParseBasic(header string) (user, password string, err error) {
	header = strings.TrimSpace(header)
	if header == "" {
		return "", "", fmt.Errorf("%w: no Authorization header", ErrUnauthorized)
	}
	scheme, token, ok := strings.Cut(header, " ")
	if !ok {
		return "", "", fmt.Errorf("%w: Could not parse Authorization header", ErrMalformed)
	}
	if !strings.EqualFold(scheme, "basic") {
		return "", "", fmt.Errorf("%w: Unsupported authorization type", ErrMalformed)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(token))
	if err != nil {
		return "", "", fmt.Errorf("%w: Could not decode authorization token", ErrMalformed)
	}
	u, p, ok := bytes.Cut(raw, []byte(":"))
	if !ok {
		return "", "", fmt.Errorf("%w: Could not decode authorization token", ErrMalformed)
	}
	return string(u), string(p), nil
}

// Authenticate implements Authenticator.
func (b *Basic) Authenticate(ctx context.Context, r *http.Request) (*Credentials, error) {
	user, password, err := ParseBasic(r.Header.Get("Authorization"))
	if err != nil {
		return nil, err
	}
	key := b.cacheKey(user, password)
	if u, ok := b.cache.get(key); ok && u == user {
		return basicCreds(user), nil
	}
	b.mu.Lock()
	c, waiting := b.flight[key]
	if !waiting {
		c = &check{done: make(chan struct{})}
		b.flight[key] = c
	}
	b.mu.Unlock()
	if !waiting {
		c.ok, c.err = b.verify(ctx, clientOf(r.RemoteAddr), user, password)
		if c.ok {
			b.cache.put(key, user, basicTTL)
		}
		b.mu.Lock()
		delete(b.flight, key)
		b.mu.Unlock()
		close(c.done)
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	switch {
	case c.err != nil:
		return nil, fmt.Errorf("%w: %v", ErrUnauthorized, c.err)
	case !c.ok:
		return nil, fmt.Errorf("%w: wrong user or password", ErrUnauthorized)
	}
	return basicCreds(user), nil
}

// verify runs one bcrypt check when client's turn for a slot comes.
func (b *Basic) verify(ctx context.Context, client, user, password string) (bool, error) {
	if err := b.slots.acquire(ctx, client); err != nil {
		return false, err
	}
	defer b.slots.release()
	f := b.users.Load()
	pw := []byte(password)
	defer clear(pw)
	hash, ok := f.hashes[user]
	if !ok {
		// The same work as for a known user, so that a caller cannot tell
		// which user names exist.
		_ = b.compare(f.dummy, pw)
		return false, nil
	}
	return b.compare(hash, pw) == nil, nil
}

func basicCreds(user string) *Credentials {
	return &Credentials{UserID: user, UserName: user, Unrestricted: true}
}

func (b *Basic) cacheKey(user, password string) [32]byte {
	m := hmac.New(sha256.New, b.key[:])
	m.Write([]byte(user))
	m.Write([]byte{0})
	m.Write([]byte(password))
	var k [32]byte
	m.Sum(k[:0])
	return k
}

package vbmc

import (
	"errors"
	"testing"
	"time"
)

func TestSessionStore_IdleSessionsExpireAndTheLimitHolds(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := newSessionStore(time.Minute, 2)
	a, tokA, err := s.create("admin", now)
	if err != nil {
		t.Fatal(err)
	}
	_, tokB, _ := s.create("admin", now)
	if _, _, err := s.create("admin", now); !errors.Is(err, errSessionLimit) {
		t.Fatalf("third session with a limit of 2: %v", err)
	}
	// Using a session keeps it alive; the other one idles out.
	if _, ok := s.lookup(tokA, now.Add(50*time.Second)); !ok {
		t.Fatal("session A gone before its timeout")
	}
	if _, ok := s.lookup(tokB, now.Add(61*time.Second)); ok {
		t.Fatal("session B alive after a minute idle")
	}
	if _, ok := s.lookup(tokA, now.Add(100*time.Second)); !ok {
		t.Fatal("session A gone although used 50 s ago")
	}
	if _, _, err := s.create("admin", now.Add(100*time.Second)); err != nil {
		t.Fatalf("a session after B expired: %v", err)
	}
	if !s.delete(a.ID) {
		t.Fatal("delete A")
	}
	if _, ok := s.lookup(tokA, now.Add(101*time.Second)); ok {
		t.Fatal("deleted session's token still valid")
	}
	if _, ok := s.lookup("", now); ok {
		t.Fatal("empty token valid")
	}
}

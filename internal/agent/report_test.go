package agent

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/callback"
	"github.com/ferrometal/ferro/internal/inventory"
)

func TestPoster_RetriesUntilAccepted(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(callback.TokenHeader) != "s3cret" {
			t.Errorf("token header = %q", r.Header.Get(callback.TokenHeader))
		}
		if calls.Add(1) < 3 {
			http.Error(w, `{"error":{"message":"busy"}}`, http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte(`{"uuid":"n1"}`))
	}))
	defer srv.Close()
	var logs bytes.Buffer
	p := &Poster{URL: srv.URL, Token: "s3cret", Deadline: 30 * time.Second, MinBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond,
		Log: slog.New(slog.NewTextHandler(&logs, nil))}
	answer, err := p.Post(context.Background(), &inventory.Report{Inventory: &inventory.Inventory{}})
	if err != nil || string(answer) != `{"uuid":"n1"}` || calls.Load() != 3 {
		t.Fatalf("answer %q, err %v, %d calls", answer, err, calls.Load())
	}
	if strings.Contains(logs.String(), "s3cret") {
		t.Errorf("the token was logged:\n%s", logs.String())
	}
}

func TestPoster_RejectionIsNotRetried(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, `{"error":{"message":"bad token"}}`, http.StatusForbidden)
	}))
	defer srv.Close()
	p := &Poster{URL: srv.URL, Deadline: 30 * time.Second, MinBackoff: time.Millisecond}
	_, err := p.Post(context.Background(), &inventory.Report{Inventory: &inventory.Inventory{}})
	if !errors.Is(err, ErrRejected) || calls.Load() != 1 {
		t.Errorf("err %v after %d calls", err, calls.Load())
	}
}

func TestPoster_GivesUpAtDeadline(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusBadGateway)
	}))
	defer srv.Close()
	p := &Poster{URL: srv.URL, Deadline: 50 * time.Millisecond, MinBackoff: 10 * time.Millisecond}
	_, err := p.Post(context.Background(), &inventory.Report{Inventory: &inventory.Inventory{}})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "gave up") {
		t.Errorf("err = %v", err)
	}
}

// The bare metal API's /v1/continue_inspection answers 202: at 1.1 (no
// version header, as the agent posts) {"uuid"}, at ≥ 1.84 the lookup
// answer; both are an accepted report naming the node.
func TestPoster_ContinueInspectionAnswers(t *testing.T) {
	for _, answer := range []string{
		`{"uuid": "6d4c8a9e-1f2b-4c3d-8e5f-a1b2c3d4e5f6"}`,
		`{"node": {"uuid": "6d4c8a9e-1f2b-4c3d-8e5f-a1b2c3d4e5f6", "properties": {}}, "config": {"agent_token": "x", "agent_token_required": true}}`,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-OpenStack-Ironic-API-Version") != "" {
				t.Errorf("the agent sent a microversion: %q", r.Header.Get("X-OpenStack-Ironic-API-Version"))
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusAccepted)
			w.Write([]byte(answer))
		}))
		p := &Poster{URL: srv.URL + "/v1/continue_inspection", Deadline: 10 * time.Second, MinBackoff: time.Millisecond}
		got, err := p.Post(context.Background(), &inventory.Report{Inventory: &inventory.Inventory{}})
		srv.Close()
		if err != nil || AcceptedNode(got) != "6d4c8a9e-1f2b-4c3d-8e5f-a1b2c3d4e5f6" {
			t.Errorf("answer %s: %v, node %q", answer, err, AcceptedNode(got))
		}
	}
	if AcceptedNode([]byte(`not json`)) != "" {
		t.Error("a body that is not JSON names a node")
	}
}

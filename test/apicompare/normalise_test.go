package main

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

func TestNormaliser_SameTextForTheSameAnswerFromAnotherServer(t *testing.T) {
	mk := func(gen1, gen2, when, req string) answer {
		body := `{"uuid": "` + gen1 + `", "other": "` + gen2 + `", "again": "` + gen1 +
			`", "chosen": "a0000000-0000-4000-8000-000000000001", "created_at": "` + when + `"}`
		return answer{status: 201, header: http.Header{
			"Date": {when}, "Content-Length": {strconv.Itoa(len(body))}, "Location": {"http://h/v1/nodes/" + gen1},
			"X-Openstack-Request-Id": {req},
		}, body: []byte(body)}
	}
	a := mk("3f2b7c1e-9d4a-4e2b-8c1f-0a9b8c7d6e5f", "11111111-2222-4333-8444-555555555555",
		"2026-01-02T03:04:05+00:00", "req-0b1c2d3e-4f50-4a6b-8c7d-8e9f0a1b2c3d")
	b := mk("9e8d7c6b-5a49-4838-9271-605f4e3d2c1b", "66666666-7777-4888-9999-aaaaaaaaaaaa",
		"2026-01-02T03:04:05.123456+00:00", "req-ffffffff-0000-4000-8000-000000000000")
	ra := newNormaliser(chosenUUID).render(a)
	rb := newNormaliser(chosenUUID).render(b)
	if ra != rb {
		t.Fatalf("normalised answers differ:\n%s\n---\n%s", ra, rb)
	}
	for _, want := range []string{"<uuid-1>", "<uuid-2>", "a0000000-0000-4000-8000-000000000001", "<time>", "req-<id>",
		"Location: http://h/v1/nodes/<uuid-1>"} {
		if !strings.Contains(ra, want) {
			t.Errorf("%q missing from\n%s", want, ra)
		}
	}
	if strings.Contains(ra, "Date:") {
		t.Errorf("Date kept:\n%s", ra)
	}
}

func TestNormaliser_DifferentAnswersStayDifferent(t *testing.T) {
	n1, n2 := newNormaliser(chosenUUID), newNormaliser(chosenUUID)
	// The same generated UUID in another place, a wrong Content-Length, another status.
	one := answer{status: 200, header: http.Header{"Content-Length": {"2"}}, body: []byte("{}")}
	two := answer{status: 200, header: http.Header{"Content-Length": {"3"}}, body: []byte("{}")}
	if n1.render(one) == n2.render(two) {
		t.Error("a Content-Length that is not the body's length went unnoticed")
	}
	x := answer{status: 200, body: []byte(`["3f2b7c1e-9d4a-4e2b-8c1f-0a9b8c7d6e5f", "11111111-2222-4333-8444-555555555555"]`)}
	y := answer{status: 200, body: []byte(`["66666666-7777-4888-9999-aaaaaaaaaaaa", "66666666-7777-4888-9999-aaaaaaaaaaaa"]`)}
	if newNormaliser(chosenUUID).render(x) == newNormaliser(chosenUUID).render(y) {
		t.Error("two UUIDs and one UUID twice normalise alike")
	}
}

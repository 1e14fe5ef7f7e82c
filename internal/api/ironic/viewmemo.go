package ironic

import "github.com/ferrometal/ferro/internal/baremetal"

// A node of the node list is read for rendering only, and the store hands
// the same node to every list that reads its row unchanged (its cache of
// decoded nodes, keyed by the row's content): what the node list renders
// of it can be kept with it (baremetal.Memo) and copied into the next
// list instead of rendered again. A kept view is the node's full view
// (no ?fields=) for a caller whose fields the policy does not check
// (fieldChecks: then every field but driver_info's secrets is the same
// for every caller), and depends on nothing but the row and viewKey,
// except the conductor (the hash ring's, which changes without the row):
// that one field (resource.live) is rendered anew into every copy.

// viewKey is what a kept view depends on beside its node's row.
type viewKey struct {
	minor        int
	base         string
	showPassword bool
}

// keptView is a rendered view; [live, liveEnd) is the live field's value.
type keptView struct {
	b             []byte
	live, liveEnd int
}

// appendMemo appends v's full view, from m when it holds one for rc's
// kind of request, else rendered and kept there.
func (r *resource[E, F]) appendMemo(b []byte, m *baremetal.Memo, v *E, rc *renderCtx) []byte {
	key := viewKey{minor: rc.minor, base: rc.base, showPassword: rc.showPassword}
	if kv, ok := m.Get(key).(*keptView); ok {
		if kv.liveEnd == 0 {
			return append(b, kv.b...)
		}
		b = append(b, kv.b[:kv.live]...)
		b = r.liveField().write(b, v, rc)
		return append(b, kv.b[kv.liveEnd:]...)
	}
	start := len(b)
	b, live, liveEnd := r.appendView(b, v, rc, nil)
	m.Put(key, &keptView{b: append([]byte(nil), b[start:]...), live: live, liveEnd: liveEnd})
	return b
}

// liveField is the field named r.live.
func (r *resource[E, F]) liveField() *viewField[*E] {
	for i := len(r.fields) - 1; i >= 0; i-- {
		if r.fields[i].name == r.live {
			return &r.fields[i]
		}
	}
	panic("ironic: no field " + r.live)
}

package keystonetest

import (
	"errors"
	"net/http"
	"os"
	"slices"
	"syscall"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// catalogURL returns the URL of the typ service's iface endpoint in a
// token's catalog, "" when there is none.
func catalogURL(tk Token, typ, iface string) string {
	catalog, _ := tk.Body["catalog"].([]any)
	for _, e := range catalog {
		svc, _ := e.(map[string]any)
		if svc["type"] != typ {
			continue
		}
		eps, _ := svc["endpoints"].([]any)
		for _, ep := range eps {
			m, _ := ep.(map[string]any)
			if m["interface"] == iface && m["region_id"] == Region {
				u, _ := m["url"].(string)
				return u
			}
		}
	}
	return ""
}

func TestStart_IssuesScopedTokensWithCatalogAndRevokes(t *testing.T) {
	var pgid int
	t.Run("server", func(t *testing.T) {
		s := Start(t)
		pgid = s.cmd.Process.Pid

		admin := s.IssueToken(t, Credentials{User: AdminUser, Password: AdminPassword, Scope: Scope{ProjectName: AdminProject}})
		if got := catalogURL(admin, "identity", "public"); got != s.AuthURL() {
			t.Errorf("identity endpoint in the catalog = %q, want %q", got, s.AuthURL())
		}
		if roles := admin.Roles(); !slices.Contains(roles, RoleAdmin) || !slices.Contains(roles, RoleReader) {
			t.Errorf("admin token roles = %v, want admin and the roles it implies", roles)
		}

		s.RegisterService(t, "baremetal", "ironic", Endpoints{Public: "http://127.0.0.1:6385", Internal: "http://127.0.0.1:6385"})
		p := s.CreatePersonas(t, "tp")
		member := s.IssueToken(t, p.Users["a-member"].Credentials())
		if got := catalogURL(member, "baremetal", "internal"); got != "http://127.0.0.1:6385" {
			t.Errorf("baremetal endpoint in a member's catalog = %q", got)
		}
		project, _ := member.Body["project"].(map[string]any)
		if project["id"] != p.ProjectA {
			t.Errorf("a-member's token is scoped to %v, want project %s", member.Body["project"], p.ProjectA)
		}
		if roles := member.Roles(); slices.Contains(roles, RoleAdmin) || !slices.Contains(roles, RoleMember) {
			t.Errorf("a-member's roles = %v, want member (and reader), not admin", roles)
		}
		sys := s.IssueToken(t, p.Users["system-reader"].Credentials())
		if sc, _ := sys.Body["system"].(map[string]any); sc["all"] != true {
			t.Errorf("system-reader's token: system = %v, want {all: true}", sys.Body["system"])
		}
		// Roles on project A do not reach project B.
		if _, code := s.TryIssueToken(t, Credentials{User: p.Users["a-admin"].Name, Password: p.Users["a-admin"].Password,
			Scope: Scope{ProjectID: p.ProjectB}}); code != http.StatusUnauthorized {
			t.Errorf("a-admin scoped to project b: HTTP %d, want 401", code)
		}
		if _, code := s.TryIssueToken(t, Credentials{User: AdminUser, Password: "wrong"}); code != http.StatusUnauthorized {
			t.Errorf("wrong password: HTTP %d, want 401", code)
		}

		if code := s.ValidateToken(t, member.ID); code != http.StatusOK {
			t.Fatalf("validate a fresh token: HTTP %d, want 200", code)
		}
		s.RevokeToken(t, member.ID)
		if code := s.ValidateToken(t, member.ID); code != http.StatusNotFound {
			t.Errorf("validate a revoked token: HTTP %d, want 404", code)
		}
	})
	if pgid == 0 {
		return // skipped or failed before the server started
	}
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d of keystone still exists after the test ended (kill: %v)", pgid, err)
	}
}

// A second server from the same template is independent of the first:
// what one creates the other does not see, and each catalog names its own
// port.
func TestStart_CopiesAreIndependent(t *testing.T) {
	a, b := Start(t), Start(t)
	a.CreateProject(t, "only-in-a")
	var out struct {
		Projects []any `json:"projects"`
	}
	b.Admin(t, http.MethodGet, "/v3/projects?name=only-in-a", nil, &out, http.StatusOK)
	if len(out.Projects) != 0 {
		t.Errorf("server b sees a's project: %v", out.Projects)
	}
	tk := b.IssueToken(t, Credentials{User: AdminUser, Password: AdminPassword, Scope: Scope{ProjectName: AdminProject}})
	if got := catalogURL(tk, "identity", "public"); got != b.AuthURL() || a.AuthURL() == b.AuthURL() {
		t.Errorf("b's identity endpoint = %q, want %q (a is %q)", got, b.AuthURL(), a.AuthURL())
	}
}

package web

import (
	"net/http"
	"strings"
)

// TokenCookie is the cookie in which a browser keeps its Keystone token
// for the view. A browser cannot send X-Auth-Token on a page load, so
// with auth_strategy=keystone the sign-in form (Login) sets this cookie
// and KeystoneCookie turns it back into the header for the view's pages
// only: it is HttpOnly, SameSite=Strict, Secure on TLS and scoped to
// /ui/, and the API never reads it.
const TokenCookie = "ferro_ui_token"

// maxTokenLength bounds a pasted token (Keystone's Fernet tokens are
// about 200 characters, PKI-less JWS ones under 1 KiB).
const maxTokenLength = 8192

// Login serves the sign-in form (GET /ui/login) and takes a token from it
// (POST /ui/login): the cookie is set and the browser sent to the list.
// The token is checked when it is used, by the authentication in front of
// the pages; POST /ui/logout clears it.
func (v *View) Login() http.Handler {
	return securityHeaders(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/ui/login":
			v.v.render(w, http.StatusOK, "login", "Sign in", "")
		case r.Method == http.MethodPost && r.URL.Path == "/ui/login":
			r.Body = http.MaxBytesReader(w, r.Body, maxTokenLength+64)
			token := strings.TrimSpace(r.PostFormValue("token"))
			if token == "" || len(token) > maxTokenLength || strings.ContainsAny(token, " \t\r\n;,") {
				v.v.render(w, http.StatusBadRequest, "login", "Sign in", "That is not a token.")
				return
			}
			http.SetCookie(w, &http.Cookie{Name: TokenCookie, Value: token, Path: Prefix, HttpOnly: true,
				Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
			http.Redirect(w, r, Prefix, http.StatusSeeOther)
		case r.Method == http.MethodPost && r.URL.Path == "/ui/logout":
			http.SetCookie(w, &http.Cookie{Name: TokenCookie, Value: "", Path: Prefix, MaxAge: -1, HttpOnly: true,
				Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
			http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
		default:
			v.v.error(w, r, http.StatusMethodNotAllowed, "Not allowed.")
		}
	}))
}

// KeystoneCookie gives a request that has no X-Auth-Token the token of
// the view's cookie, for the authentication layer under it.
func KeystoneCookie(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Auth-Token") == "" {
			if c, err := r.Cookie(TokenCookie); err == nil && c.Value != "" {
				r = r.Clone(r.Context())
				r.Header.Set("X-Auth-Token", c.Value)
			}
		}
		next.ServeHTTP(w, r)
	})
}

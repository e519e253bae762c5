package settings

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// checkSession checks the auth block of auth type session: where to log
// in, in one body form at most, and where the answer holds the token,
// so that a login that cannot be sent is a config error before any
// request.
func (c *Config) checkSession() error {
	a := c.Auth
	if a.LoginURL == "" {
		return errors.New("auth.login_url: is required for auth type session")
	}
	if !strings.HasPrefix(a.LoginURL, "/") {
		u, err := url.Parse(a.LoginURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return errors.New(`auth.login_url: expected an http(s) URL with no credentials, or a path such as "/auth/login" on base_url's host`)
		}
	}
	if a.TokenPath == "" {
		return errors.New(`auth.token_path: is required for auth type session: the dotted path to the token in the login answer, e.g. "access_token"`)
	}
	if len(a.LoginBody) > 0 && len(a.LoginForm) > 0 {
		return errors.New("auth.login_form: give login_body (JSON) or login_form, not both")
	}
	if (len(a.LoginBody) > 0 || len(a.LoginForm) > 0) && a.LoginMethod == "GET" {
		return errors.New("auth.login_method: a login with a body is sent with POST")
	}
	if a.ExpiresS < 0 {
		return fmt.Errorf("auth.expires_s: expected 0 or more seconds, got %v", a.ExpiresS)
	}
	for name, v := range a.LoginHeaders {
		if !validHeaderName(name) {
			return fmt.Errorf("auth.login_headers: %q is not a valid header name", name)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return fmt.Errorf("auth.login_headers.%s: must not contain line breaks or NUL", name)
		}
	}
	if a.Name != "" && !validHeaderName(a.Name) && a.In != "query" {
		return fmt.Errorf("auth.name: %q is not a valid header name", a.Name)
	}
	return nil
}

package demoapi

import (
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// OAuth is the "oauth" block of the demo: an OAuth2 token endpoint at
// /oauth/token, and data endpoints that want its access tokens.
//
// Grants: client_credentials (client id and secret by HTTP Basic or form
// fields), refresh_token (single-use: each use answers a new refresh token
// and voids the one used), and the RFC 7523 JWT bearer grant (an RS256
// assertion checked against JWTPublicKey, with iss, aud and exp).
//
// Tokens are signed with the client secret rather than stored, so a
// refresh token issued by one server process is good for the next (as
// embedded://demo starts one per run); a used one is refused by the
// process that saw it used.
type OAuth struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	// RefreshToken is the first refresh token of grant refresh_token.
	RefreshToken string `json:"refresh_token"`
	// TokenTTLS is the lifetime of an access token in seconds [300].
	TokenTTLS int `json:"token_ttl_s"`
	// JWTPublicKey (PEM, PKIX or PKCS #1 RSA) enables the JWT bearer grant.
	JWTPublicKey string `json:"jwt_public_key"`
	JWTIssuer    string `json:"jwt_issuer"`   // the iss wanted [any]
	JWTAudience  string `json:"jwt_audience"` // the aud wanted [this server's token URL]
}

const (
	defaultTokenTTL = 300
	tokenPath       = "/oauth/token"
	jwtBearerGrant  = "urn:ietf:params:oauth:grant-type:jwt-bearer"
)

// oauthState is what the token endpoint remembers: the refresh tokens
// used.
type oauthState struct {
	mu   sync.Mutex
	used map[string]bool
	pub  *rsa.PublicKey // nil: no JWT grant
}

func (o *OAuth) resolve() (*rsa.PublicKey, error) {
	if o.TokenTTLS < 0 {
		return nil, fmt.Errorf("demo.oauth.token_ttl_s: must not be negative, got %d", o.TokenTTLS)
	}
	if o.TokenTTLS == 0 {
		o.TokenTTLS = defaultTokenTTL
	}
	if o.ClientSecret == "" {
		return nil, errors.New("demo.oauth.client_secret: is required (it signs the tokens)")
	}
	if o.JWTPublicKey == "" {
		return nil, nil
	}
	block, _ := pem.Decode([]byte(o.JWTPublicKey))
	if block == nil {
		return nil, errors.New("demo.oauth.jwt_public_key: expected a PEM block")
	}
	if k, err := x509.ParsePKCS1PublicKey(block.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	rk, ok := k.(*rsa.PublicKey)
	if err != nil || !ok {
		return nil, errors.New("demo.oauth.jwt_public_key: expected an RSA public key")
	}
	return rk, nil
}

// oauthError is an RFC 6749 error answer.
type oauthError struct {
	status      int
	code, descr string
}

// token answers a token request.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	o := s.cfg.OAuth
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	body, oe := s.grant(r, o)
	if oe != nil {
		if oe.status == http.StatusUnauthorized {
			h.Set("WWW-Authenticate", `Basic realm="demo"`)
		}
		b, _ := json.Marshal(map[string]string{"error": oe.code, "error_description": oe.descr})
		s.write(w, "oauth_token", oe.status, b)
		return
	}
	b, _ := json.Marshal(body)
	s.write(w, "oauth_token", http.StatusOK, b)
}

func (s *Server) grant(r *http.Request, o *OAuth) (map[string]any, *oauthError) {
	if r.Method != http.MethodPost {
		return nil, &oauthError{http.StatusMethodNotAllowed, "invalid_request", "POST the token request"}
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		return nil, &oauthError{http.StatusBadRequest, "invalid_request", "the token request must be form-encoded"}
	}
	if err := r.ParseForm(); err != nil {
		return nil, &oauthError{http.StatusBadRequest, "invalid_request", "the form cannot be parsed"}
	}
	f := r.PostForm
	answer := map[string]any{"token_type": "Bearer", "expires_in": o.TokenTTLS}
	switch g := f.Get("grant_type"); g {
	case "client_credentials", "refresh_token":
		if !s.clientAuthenticated(r, o) {
			return nil, &oauthError{http.StatusUnauthorized, "invalid_client", "unknown client or wrong secret"}
		}
		if g == "refresh_token" {
			rt := f.Get("refresh_token")
			if !s.useRefreshToken(rt) {
				return nil, &oauthError{http.StatusBadRequest, "invalid_grant", "refresh token unknown, revoked or already used"}
			}
			answer["refresh_token"] = s.sign("drt")
		}
	case jwtBearerGrant:
		if err := s.checkAssertion(r, f.Get("assertion")); err != nil {
			return nil, &oauthError{http.StatusBadRequest, "invalid_grant", err.Error()}
		}
	case "":
		return nil, &oauthError{http.StatusBadRequest, "invalid_request", "grant_type is missing"}
	default:
		return nil, &oauthError{http.StatusBadRequest, "unsupported_grant_type", "grant_type " + g + " is not supported"}
	}
	if sc := f.Get("scope"); sc != "" {
		answer["scope"] = sc
	}
	exp := s.clock().Add(time.Duration(o.TokenTTLS) * time.Second)
	answer["access_token"] = s.sign("dat", exp.UnixMilli())
	return answer, nil
}

// clientAuthenticated checks the client id and secret, from HTTP Basic
// (form-encoded, RFC 6749 2.3.1) or from the form.
func (s *Server) clientAuthenticated(r *http.Request, o *OAuth) bool {
	id, secret, ok := r.BasicAuth()
	if ok {
		var err1, err2 error
		id, err1 = url.QueryUnescape(id)
		secret, err2 = url.QueryUnescape(secret)
		if err1 != nil || err2 != nil {
			return false
		}
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	return subtle.ConstantTimeCompare([]byte(id), []byte(o.ClientID)) == 1 &&
		subtle.ConstantTimeCompare([]byte(secret), []byte(o.ClientSecret)) == 1
}

// useRefreshToken accepts rt once: the configured first refresh token or
// one this demo signed.
func (s *Server) useRefreshToken(rt string) bool {
	o := s.cfg.OAuth
	valid := rt != "" && (subtle.ConstantTimeCompare([]byte(rt), []byte(o.RefreshToken)) == 1 || s.verify("drt", rt) != nil)
	if !valid {
		return false
	}
	st := s.oauth
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.used[rt] {
		return false
	}
	st.used[rt] = true
	return true
}

// sign returns prefix.payload.mac: payload is 8 random bytes then the
// given numbers, mac an HMAC-SHA256 of both under the client secret.
func (s *Server) sign(prefix string, nums ...int64) string {
	p := make([]byte, 8, 8+8*len(nums))
	rand.Read(p) //nolint:errcheck // never fails
	for _, n := range nums {
		p = binary.BigEndian.AppendUint64(p, uint64(n))
	}
	enc := base64.RawURLEncoding
	head := prefix + "." + enc.EncodeToString(p)
	return head + "." + enc.EncodeToString(s.mac(head))
}

func (s *Server) mac(head string) []byte {
	m := hmac.New(sha256.New, []byte(s.cfg.OAuth.ClientSecret))
	m.Write([]byte(head))
	return m.Sum(nil)[:16]
}

// verify returns the numbers of a token this demo signed with prefix, or
// nil.
func (s *Server) verify(prefix, tok string) []int64 {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 || parts[0] != prefix {
		return nil
	}
	enc := base64.RawURLEncoding
	mac, err := enc.DecodeString(parts[2])
	if err != nil || !hmac.Equal(mac, s.mac(parts[0]+"."+parts[1])) {
		return nil
	}
	p, err := enc.DecodeString(parts[1])
	if err != nil || len(p) < 8 || (len(p)-8)%8 != 0 {
		return nil
	}
	nums := []int64{}
	for p = p[8:]; len(p) > 0; p = p[8:] {
		nums = append(nums, int64(binary.BigEndian.Uint64(p)))
	}
	return nums
}

// accessTokenValid reports whether r carries an access token of this demo
// that has not expired.
func (s *Server) accessTokenValid(r *http.Request) bool {
	a := r.Header.Get("Authorization")
	if len(a) <= 7 || !strings.EqualFold(a[:7], "bearer ") {
		return false
	}
	nums := s.verify("dat", strings.TrimSpace(a[7:]))
	return len(nums) == 1 && s.clock().UnixMilli() < nums[0]
}

// checkAssertion checks an RS256 JWT: signature, iss, aud, exp.
func (s *Server) checkAssertion(r *http.Request, jwt string) error {
	o, pub := s.cfg.OAuth, s.oauth.pub
	if pub == nil {
		return errors.New("the JWT bearer grant is not enabled (demo.oauth.jwt_public_key)")
	}
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return errors.New("the assertion is not a JWT")
	}
	enc := base64.RawURLEncoding
	var head struct {
		Alg string `json:"alg"`
	}
	var claims struct {
		Iss string          `json:"iss"`
		Aud json.RawMessage `json:"aud"`
		Exp int64           `json:"exp"`
	}
	hb, err1 := enc.DecodeString(parts[0])
	cb, err2 := enc.DecodeString(parts[1])
	sig, err3 := enc.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || json.Unmarshal(hb, &head) != nil || json.Unmarshal(cb, &claims) != nil {
		return errors.New("the assertion is not a JWT")
	}
	if head.Alg != "RS256" {
		return fmt.Errorf("alg %q: RS256 wanted", head.Alg)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig) != nil {
		return errors.New("the assertion's signature does not verify")
	}
	if o.JWTIssuer != "" && claims.Iss != o.JWTIssuer {
		return fmt.Errorf("iss %q is not the issuer wanted", claims.Iss)
	}
	aud := o.JWTAudience
	if aud == "" {
		aud = "http://" + r.Host + tokenPath
	}
	var auds []string
	var one string
	if json.Unmarshal(claims.Aud, &one) == nil {
		auds = []string{one}
	} else if json.Unmarshal(claims.Aud, &auds) != nil {
		return errors.New("aud is neither a string nor an array of strings")
	}
	found := false
	for _, a := range auds {
		found = found || a == aud
	}
	if !found {
		return fmt.Errorf("aud %s is not %s", claims.Aud, strconv.Quote(aud))
	}
	if claims.Exp == 0 || s.clock().Unix() >= claims.Exp {
		return errors.New("the assertion has expired")
	}
	return nil
}

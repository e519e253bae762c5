package settings

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// checkOAuth checks the auth block of auth types oauth2 and jwt: what the
// grant needs is there, and the private key is one RS256 can sign with,
// so that a bad key is a config error before any request.
func (c *Config) checkOAuth() error {
	a := c.Auth
	if a.TokenURL == "" {
		return fmt.Errorf("auth.token_url: is required for auth type %s", a.Type)
	}
	if !strings.HasPrefix(a.TokenURL, "/") {
		u, err := url.Parse(a.TokenURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return errors.New(`auth.token_url: expected an http(s) URL with no credentials, or a path such as "/oauth/token" on base_url's host`)
		}
	}
	for i, s := range a.Scopes {
		if s == "" || strings.ContainsAny(s, " \r\n\x00") {
			return fmt.Errorf("auth.scopes[%d]: expected a scope with no spaces", i)
		}
	}
	if a.Type == "jwt" {
		if a.Issuer == "" {
			return errors.New("auth.issuer: is required for auth type jwt")
		}
		if a.PrivateKey == "" {
			return errors.New("auth.private_key: is required for auth type jwt")
		}
		return checkPrivateKey(a.PrivateKey)
	}
	if a.GrantType == "refresh_token" && a.RefreshToken == "" {
		return errors.New("auth.refresh_token: is required for grant_type refresh_token")
	}
	if a.GrantType == "client_credentials" && a.ClientID == "" {
		return errors.New("auth.client_id: is required for grant_type client_credentials")
	}
	return nil
}

// checkPrivateKey checks that key is a PEM RSA private key. The error
// says nothing of the key's content.
func checkPrivateKey(key string) error {
	block, _ := pem.Decode([]byte(key))
	if block == nil {
		return errors.New(`auth.private_key: expected a PEM block ("-----BEGIN PRIVATE KEY-----"; write line breaks as \n in JSON)`)
	}
	if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return fmt.Errorf("auth.private_key: expected an RSA private key in PKCS #8 or PKCS #1 form, got a %s block that is neither", block.Type)
	}
	if _, ok := k.(*rsa.PrivateKey); !ok {
		return errors.New("auth.private_key: expected an RSA private key (RS256)")
	}
	return nil
}

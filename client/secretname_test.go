package client

import "testing"

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"access_token": true, "X-Api-Key": true, "Api-Token": true, "apiKey": true, "key": true,
		"session": true, "session_id": true, "passwd": true, "pwd": true, "jwt": true,
		"credential": true, "credentials": true, "X-Amz-Signature": true, "sig": true,
		"page_token": false, "next_key": false, "cursor": false, "tokens": false, "monkey": false,
		"author": false, "design": false, "limit": false, "updated_since": false,
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

package demoapi

import (
	"encoding/json"
	"testing"
)

func TestAccountsGenerations(t *testing.T) {
	one, err := AccountsTable(Config{Accounts: &Accounts{Count: 200}})
	if err != nil {
		t.Fatal(err)
	}
	two, err := AccountsTable(Config{Accounts: &Accounts{Count: 200, Generation: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(one) != 200 {
		t.Fatalf("generation 1 has %d rows, want 200", len(one))
	}
	var high = one[0].UpdatedAt
	for _, r := range one {
		if r.Gone || r.Deleted {
			t.Fatalf("generation 1 deletes row %d", r.ID)
		}
		if r.UpdatedAt.After(high) {
			high = r.UpdatedAt
		}
	}
	var gone, events, soft, late, fresh int
	for _, r := range two {
		switch {
		case r.Gone:
			gone++
			if r.Event {
				events++
			}
		case r.Deleted:
			soft++
			if !r.UpdatedAt.After(high) {
				t.Errorf("soft-deleted row %d keeps an updated_at the cursor would not see", r.ID)
			}
		case r.ID > 200 && r.UpdatedAt.Before(one[0].UpdatedAt):
			late++
		case r.ID > 200:
			fresh++
		}
	}
	if len(two) != 220 || gone == 0 || events == 0 || events == gone || soft == 0 || late != 10 || fresh != 10 {
		t.Errorf("generation 2: %d rows, %d gone (%d with an event), %d soft-deleted, %d late, %d fresh",
			len(two), gone, events, soft, late, fresh)
	}
}

func TestAccountsEndpoints(t *testing.T) {
	s, base := start(t, Config{Accounts: &Accounts{Count: 30, Generation: 3}})
	rows := s.accounts()
	var live, withEvent []Account
	for _, r := range rows {
		if !r.Gone {
			live = append(live, r)
		} else if r.Event {
			withEvent = append(withEvent, r)
		}
	}
	var ids []map[string]any
	for page := 1; ; page++ {
		a := mustGet(t, base+"/v1/accounts?fields=id,deleted&per_page=7&page="+itoa(page))
		var got []map[string]any
		if err := json.Unmarshal(a.raw, &got); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, got...)
		if len(got) < 7 {
			break
		}
	}
	if len(ids) != len(live) {
		t.Fatalf("the listing has %d rows, want the %d live ones", len(ids), len(live))
	}
	if len(ids[0]) != 2 {
		t.Errorf("fields=id,deleted gave %v", ids[0])
	}
	if a := get(t, base+"/v1/accounts/"+itoa(int(live[0].ID))); a.status != 200 {
		t.Errorf("a live account by id: %d", a.status)
	}
	if len(withEvent) == 0 {
		t.Fatal("no deletion events in 3 generations")
	}
	if a := get(t, base+"/v1/accounts/"+itoa(int(withEvent[0].ID))); a.status != 404 {
		t.Errorf("a gone account by id: %d, want 404", a.status)
	}
	a := mustGet(t, base+"/v1/accounts/deletions?limit=1000")
	var ev struct {
		Data []struct {
			AccountID int64 `json:"account_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(a.raw, &ev); err != nil || len(ev.Data) != len(withEvent) {
		t.Errorf("deletion events %s (%v), want %d", a.raw, err, len(withEvent))
	}
}

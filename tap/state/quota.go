package state

import (
	"encoding/json"
	"fmt"
	"time"
)

// quotaKey is the top-level STATE key of the daily quota count.
const quotaKey = "quota"

// Quota returns the daily quota count STATE carries: its UTC day and the
// requests used on it. ok is false when there is none.
func (st *State) Quota() (day string, used int, ok bool, err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return parseQuota(st.other[quotaKey])
}

func parseQuota(v any) (day string, used int, ok bool, err error) {
	if v == nil {
		return "", 0, false, nil
	}
	bad := fmt.Errorf(`quota: expected {"day": "YYYY-MM-DD", "used": N >= 0}, got %s`, jsonText(v))
	m, isObj := v.(map[string]any)
	if !isObj {
		return "", 0, false, bad
	}
	day, _ = m["day"].(string)
	if _, err := time.Parse(time.DateOnly, day); err != nil {
		return "", 0, false, bad
	}
	switch n := m["used"].(type) {
	case json.Number:
		i, err := n.Int64()
		if err != nil || i < 0 || i > 1e12 {
			return "", 0, false, bad
		}
		used = int(i)
	case int:
		used = n
	default:
		return "", 0, false, bad
	}
	return day, used, true, nil
}

// SetQuotaSource makes every snapshot of the state carry the quota count
// f returns, in place of the one read.
func (st *State) SetQuotaSource(f func() (day string, used int)) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.quota = f
}

// quotaLocked is the quota object to write, or nil.
func (st *State) quotaLocked() any {
	if st.quota != nil {
		day, used := st.quota()
		return map[string]any{"day": day, "used": used}
	}
	return st.other[quotaKey]
}

// mergeQuota keeps, of two quota counts read (Airbyte carries one per
// stream), the later day's, and on the same day the larger count.
func mergeQuota(a, b any) any {
	da, ua, okA, errA := parseQuota(a)
	db, ub, okB, errB := parseQuota(b)
	switch {
	case !okA || errA != nil:
		return b
	case !okB || errB != nil:
		return a
	case db > da || (db == da && ub > ua):
		return b
	}
	return a
}

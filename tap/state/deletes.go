package state

// keyDeletes holds, in a stream's bookmark, the bookmark of its
// deletion-events walk: {"replication_key": ..., "replication_key_value": ...}.
const keyDeletes = "deletes"

// Deletes returns the bookmark value of a stream's deletion-events walk
// (bookmarks.<stream>.deletes), nil when there is none.
func (st *State) Deletes(stream string) any {
	st.mu.Lock()
	defer st.mu.Unlock()
	d, _ := st.bm(stream)[keyDeletes].(map[string]any)
	return d[keyValue]
}

// SetDeletes moves the bookmark of a stream's deletion-events walk.
func (st *State) SetDeletes(stream, key string, value any) {
	st.update(stream, func(b map[string]any) {
		b[keyDeletes] = map[string]any{keyReplicationKey: key, keyValue: value}
	})
}

package interp

import (
	"slices"
	"testing"
)

func TestPath(t *testing.T) {
	for _, tt := range []struct {
		src  string
		v    Var
		path []string
		ok   bool
	}{
		{"{{ response.next_page_token }}", Response, []string{"next_page_token"}, true},
		{`{{ response.get("links", {}).get("next", {}) }}`, Response, []string{"links", "next"}, true},
		{"{{ response['metadata']['paging']['next_page'] }}", Response, []string{"metadata", "paging", "next_page"}, true},
		{"{{ response.get('nextPageToken', '') }}", Response, []string{"nextPageToken"}, true},
		{"{{ headers.get('link', {}).get('next', {}).get('url') }}", Headers, []string{"link", "next", "url"}, true},
		{"{{ last_record['id'] }}", LastRecord, []string{"id"}, true},
		{"{{ stream_partition.parent_id }}", StreamPartition, []string{"parent_id"}, true},
		{"{{ config['api_key'] }}", Config, []string{"api_key"}, true},
		{"{{ response.get('next', 'x') }}", 0, nil, false}, // a default that is a value
		{"{{ response.items[0] }}", 0, nil, false},         // an index, not a key
		{"{{ response.next | string }}", 0, nil, false},    // a filter
		{"/v1/{{ response.next }}", 0, nil, false},         // text around it
		{"{{ response.next or response.more }}", 0, nil, false},
	} {
		v, path, ok := MustCompile(tt.src).Path()
		if ok != tt.ok || v != tt.v || !slices.Equal(path, tt.path) {
			t.Errorf("%s: Path = %v %q %v, want %v %q %v", tt.src, v, path, ok, tt.v, tt.path, tt.ok)
		}
	}
}

func TestNotPath(t *testing.T) {
	for _, tt := range []struct {
		src  string
		path []string
		ok   bool
	}{
		{`{{ not response.get("links", {}).get("next", {}) }}`, []string{"links", "next"}, true},
		{"{{ response.next is none }}", []string{"next"}, true},
		{"{{ not response.get('has_more', False) }}", []string{"has_more"}, true},
		{"{{ response.next is not none }}", nil, false},
		{"{{ 'next' not in response['links'] }}", []string{"links", "next"}, true},
		{"{{ 'next' in response['links'] }}", nil, false},
		{"{{ not 'next' in response['links'] }}", []string{"links", "next"}, true},
		{"{{ response.next == None }}", []string{"next"}, true},
		{"{{ response.get('nextPageToken') is not defined }}", []string{"nextPageToken"}, true},
		{"{{ response.get('t') is none or response.get('t') == '' }}", []string{"t"}, true},
		{"{{ response.a is none or response.b is none }}", nil, false},
		{"{{ response.next == 'inf' }}", nil, false},
		{"{{ not response.has_more and response.x }}", nil, false},
		{"{{ response.has_more }}", nil, false},
	} {
		c, err := CompileCondition(tt.src)
		if err != nil {
			t.Fatal(err)
		}
		v, path, ok := c.NotPath()
		if ok != tt.ok || ok && (v != Response || !slices.Equal(path, tt.path)) {
			t.Errorf("%s: NotPath = %v %q %v, want Response %q %v", tt.src, v, path, ok, tt.path, tt.ok)
		}
	}
}

func TestPython(t *testing.T) {
	v := &Vars{Config: map[string]any{"status": "live", "ids": []any{1.0, 2.0}}, Parameters: map[string]any{"name": "s"}}
	for _, tt := range []struct {
		src, want string
		reads     []string // nil: not translated
	}{
		{`{{ record['attributes']['updated_at'] }}`, `record.get('attributes').get('updated_at')`, []string{"attributes"}},
		{`{{ record.get('stats', {}).get('spend') }}`, `record.get('stats', {}).get('spend')`, []string{"stats"}},
		{`{{ record.status == config['status'] }}`, `(record.get('status') == 'live')`, []string{"status"}},
		{`{{ record['id'] in config['ids'] and not record.deleted }}`, `((record.get('id') in [1.0, 2.0]) and (not record.get('deleted')))`, []string{"id", "deleted"}},
		{`{{ record.items[0] }}`, `record.get('items')[0]`, []string{"items"}},
		{`{{ record.n | int }}`, `int(record.get('n'))`, []string{"n"}},
		{`{{ 'x' if record.a is none else record.a }}`, `('x' if (record.get('a') is None) else record.get('a'))`, []string{"a", "a"}},
		{`{{ parameters.name }}`, `'s'`, []string{}},
		{`{{ record["email"] | hash("md5") }}`, `md5(record.get('email'))`, []string{"email"}},
		{`{{ record.email | hash }}`, `md5(record.get('email'))`, []string{"email"}},
		{`{{ record.email | hash("sha1") }}`, "", nil},
		{`{{ record.email | hash(record.algo) }}`, "", nil},
		{`{{ "::".join([record["dataset"], record["split"]]) }}`, `'::'.join([record.get('dataset'), record.get('split')])`, []string{"dataset", "split"}},
		{`{{ now_utc() }}`, "", nil},
		{`{{ record.name | upper }}`, "", nil},
		{`{{ stream_partition.id }}`, "", nil},
		{`id-{{ record.id }}`, "", nil},
	} {
		got, reads, ok := MustCompile(tt.src).Python(v)
		if ok != (tt.reads != nil) || got != tt.want || ok && !slices.Equal(reads, tt.reads) && len(reads)+len(tt.reads) > 0 {
			t.Errorf("%s: Python = %q %q %v, want %q %q", tt.src, got, reads, ok, tt.want, tt.reads)
		}
	}
}

func TestFalsePath(t *testing.T) {
	for _, tt := range []struct {
		src  string
		path []string
		ok   bool
	}{
		{"{{ response.hasMore is false }}", []string{"hasMore"}, true},
		{"{{ response.get('hasNext', {}) == False }}", []string{"hasNext"}, true},
		{"{{ response.hasMore is true }}", nil, false},
		{"{{ response.hasMore == 0 }}", nil, false},
	} {
		c, err := CompileCondition(tt.src)
		if err != nil {
			t.Fatal(err)
		}
		v, path, ok := c.FalsePath()
		if ok != tt.ok || ok && (v != Response || !slices.Equal(path, tt.path)) {
			t.Errorf("%s: FalsePath = %v %q %v, want Response %q %v", tt.src, v, path, ok, tt.path, tt.ok)
		}
	}
}

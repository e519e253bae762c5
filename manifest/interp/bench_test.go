package interp

import "testing"

// The expressions a manifest evaluates most: per request (a config
// value, the next page's URL) and per record (a RecordFilter's
// condition). Compare with gonja v2.9.1, measured on the same
// expressions and data (see the package's commit).
var benchTemplates = []struct{ name, src string }{
	{"config", "{{ config['start_date'] }}"},
	{"next_page_token", "{{ next_page_token['next_page_url'] }}"},
	{"path", "/v1/{{ parameters.name }}/items"},
	{"record_filter", "{{ record['status'] == 'active' and record['updated_at'] >= '2024-01-15' }}"},
	{"format_datetime", "{{ format_datetime(stream_interval.start_time, '%Y-%m-%dT%H:%M:%SZ') }}"},
	{"regex_search", "{{ headers['Link'] | regex_search('<(.*)>; rel=.*') }}"},
	{"format_datetime_input", "{{ format_datetime(record.updated_at, '%s', '%Y-%m-%dT%H:%M:%SZ') }}"},
}

func BenchmarkEval(b *testing.B) {
	v := testVars()
	for _, bt := range benchTemplates {
		tmpl := MustCompile(bt.src)
		if _, err := tmpl.Eval(v); err != nil {
			b.Fatal(err)
		}
		b.Run(bt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tmpl.Eval(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	cond, _ := CompileCondition(benchTemplates[3].src)
	b.Run("condition", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if ok, err := cond.Eval(v); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
}

func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(benchTemplates[3].src); err != nil {
			b.Fatal(err)
		}
	}
}

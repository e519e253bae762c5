package interp

import "testing"

// FuzzTemplate: any text compiles or is refused with an error, and what
// compiles evaluates or fails with an error; nothing panics.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{
		"{{ config['start_date'] }}", "{{ record.tags[1:] | join(',') }}", "{% for x in record.tags %}{{ loop.index }}{% endfor %}",
		"{{ format_datetime(record.updated_at, '%Y', '%Y-%m-%dT%H:%M:%SZ') }}", "{{ '1, (2, [3])' }}", "{{ {'a': [1, 2.5]} | tojson }}",
		"{{ (now_utc() - duration('P1M')).strftime('%G-%V') }}", "{{ '%5.2f %s' % (1, 'a') }}", "{%- if x -%}{%- endif -%}",
	} {
		f.Add(s)
	}
	v := testVars()
	f.Fuzz(func(t *testing.T, src string) {
		tmpl, err := Compile(src)
		if err != nil {
			return
		}
		tmpl.Eval(v)
		tmpl.Render(v)
		if c, err := CompileCondition(src); err == nil {
			c.Eval(v)
		}
		LiteralEval(src)
	})
}

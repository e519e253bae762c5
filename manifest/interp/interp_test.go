package interp

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// frozen is the clock of the CDK's own tests (freeze_time("2021-09-01")).
func frozen() time.Time { return time.Date(2021, 9, 1, 0, 0, 0, 0, time.UTC) }

// testVars are the values the tables read: the CDK's test configs, a
// page's token, a record as JSON decodes it.
func testVars() *Vars {
	var record map[string]any
	if err := json.Unmarshal([]byte(`{"id": 12345, "status": "active", "score": 1.5,
		"updated_at": "2024-02-01T10:00:00Z", "tags": ["x", "y"], "owner": {"name": "Ann"},
		"created": 1683729087, "nothing": null, "items": 3}`), &record); err != nil {
		panic(err)
	}
	return &Vars{
		Config: map[string]any{
			"date": "2022-01-01", "start_date": "2022-01-01T01:01:01Z", "page_size": "100",
			"key": 1.0, "parent": map[string]any{"key_with_true": true}, "string_key": "compare_me",
			"zero_value": 0.0, "empty_array": []any{}, "non_empty_array": []any{1.0},
			"empty_dict": map[string]any{}, "query": "{{'web'}, {'discover'}}", "complex": "9173710294242221J",
			"big": "123456789012345678901234567890", "zeros": "007", "numbered": json.Number("42"),
		},
		Parameters:    map[string]any{"from_parameters": "come_find_me", "name": "users", "fmt": "%Y-%m-%dT%H:%M:%SZ"},
		StreamSlice:   map[string]any{"start_time": "2024-01-01", "end_time": "2024-01-31", "parent_id": 7.0, "extra_fields": "x"},
		Partition:     map[string]any{"parent_id": 7.0},
		CursorSlice:   map[string]any{"start_time": "2024-01-01"},
		NextPageToken: map[string]any{"next_page_url": "https://api.example.com/v1/items?page=2"},
		Response:      map[string]any{"meta": map[string]any{"next": "abc"}, "data": []any{1.0, 2.0}, "_links": map[string]any{"more": nil}},
		Headers:       map[string]any{"Link": `<https://this-is-test-link.com/?page=2>; rel="next"`},
		LastRecord:    map[string]any{"id": 9.0},
		LastPageSize:  100,
		Record:        record,
		Extra:         map[string]any{"components_values": map[string]any{"name": "sheet1"}, "raw_schema": map[string]any{"type": "date"}},
		Now:           frozen,
	}
}

type evalCase struct {
	src  string
	want any
}

func runEval(t *testing.T, cases []evalCase) {
	t.Helper()
	v := testVars()
	for _, c := range cases {
		tmpl, err := Compile(c.src)
		if err != nil {
			t.Errorf("Compile(%q): %v", c.src, err)
			continue
		}
		got, err := tmpl.Eval(v)
		if err != nil {
			t.Errorf("Eval(%q): %v", c.src, err)
			continue
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("Eval(%q) (-want +got):\n%s", c.src, d)
		}
	}
}

// TestMacrosExamples are the CDK's test_macros_examples and test_macros
// (test_jinja.py), whose outputs the CDK's component schema documents.
func TestMacrosExamples(t *testing.T) {
	runEval(t, []evalCase{
		{"{{ now_utc() }}", "2021-09-01 00:00:00+00:00"},
		{"{{ now_utc().strftime('%Y-%m-%d') }}", "2021-09-01"},
		{"{{ today_utc() }}", "2021-09-01"},
		{"{{ today_utc().strftime('%Y/%m/%d') }}", "2021/09/01"},
		{"{{ timestamp(1646006400) }}", int64(1646006400)},
		{"{{ timestamp(1621439283) }}", int64(1621439283)},
		{"{{ timestamp(100.9) }}", int64(100)},
		{"{{ timestamp('2022-02-28') }}", 1646006400.0},
		{"{{ timestamp('2021-05-19') }}", 1621382400.0},
		{"{{ timestamp('2017-01-01T00:00:00.0Z') }}", 1483228800.0},
		{"{{ timestamp('2022-02-28T00:00:00Z') }}", 1646006400.0},
		{"{{ timestamp('2022-02-28 00:00:00Z') }}", 1646006400.0},
		{"{{ timestamp('2022-02-28T00:00:00-08:00') }}", 1646035200.0},
		{"{{ timestamp('2022-02-28T10:11:12') }}", 1646043072.0},
		{"{{ max(2, 3) }}", int64(3)},
		{"{{ max([2, 3]) }}", int64(3)},
		{"{{ min(2, 3) }}", int64(2)},
		{"{{ min([2, 3]) }}", int64(2)},
		{"{{ max(config.date, '2021-12-31') }}", "2022-01-01"},
		{"{{ day_delta(1) }}", "2021-09-02T00:00:00.000000+0000"},
		{"{{ day_delta(-1) }}", "2021-08-31T00:00:00.000000+0000"},
		{"{{ day_delta(1, format='%Y-%m-%d') }}", "2021-09-02"},
		{"{{ duration('P1D') }}", "1 day, 0:00:00"},
		{"{{ duration('P6DT23H') }}", "6 days, 23:00:00"},
		{"{{ duration('PT1H30M') }}", "1:30:00"},
		{"{{ duration('P1M') }}", "1 month, 0:00:00"},
		{"{{ (now_utc() - duration('P1D')).strftime('%Y-%m-%dT%H:%M:%SZ') }}", "2021-08-31T00:00:00Z"},
		{"{{ (now_utc() - duration('P1M')).strftime('%Y-%m-%d') }}", "2021-08-01"},
		{"{{ (str_to_datetime('2021-03-31') - duration('P1M')).strftime('%Y-%m-%d') }}", "2021-02-28"},
		{"{{ (now_utc() - str_to_datetime('2021-08-31T12:00:00Z')).total_seconds() }}", 43200.0},
		{"{{ now_utc() > str_to_datetime('2021-08-31') }}", true},
		{"{{ 1 | string }}", "1"},
		{`{{ ["hello", "world"] | string }}`, `["hello", "world"]`},
		{"{{ str_to_datetime('2022-01-14') }}", "2022-01-14 00:00:00+00:00"},
		{"{{ str_to_datetime('2022-01-01 13:45:30') }}", "2022-01-01 13:45:30+00:00"},
		{"{{ str_to_datetime('2022-01-01T13:45:30+05:30') }}", "2022-01-01 08:15:30+00:00"},
		{"{{ str_to_datetime('2022-01-01T13:45:30.123456Z') }}", "2022-01-01 13:45:30.123456+00:00"},
		{"{{ str_to_datetime('2022-01-01T13:45:30Z').isoformat() }}", "2022-01-01T13:45:30+00:00"},
		{"{{ sanitize_url('https://example.com/path?query=value') }}", "https%3A%2F%2Fexample.com%2Fpath%3Fquery%3Dvalue"},
		{"{{ sanitize_url('https://example.com/path with spaces?query=some value') }}", "https%3A%2F%2Fexample.com%2Fpath+with+spaces%3Fquery%3Dsome+value"},
		{"{{ sanitize_url('hello world') }}", "hello+world"},
		{"{{ camel_case_to_snake_case('CamelCase') }}", "camel_case"},
		{"{{ camel_case_to_snake_case('CamelCase_snake_case') }}", "camel_case_snake_case"},
		{"{{ camel_case_to_snake_case('CamelCasesnake_case') }}", "camel_casesnake_case"},
		{"{{ today_with_timezone('UTC') }}", "2021-09-01"},
	})
}

// TestFormatDatetime is the CDK's test_format_datetime.
func TestFormatDatetime(t *testing.T) {
	runEval(t, []evalCase{
		{"{{ format_datetime('2022-01-01T01:01:01Z', '%Y-%m-%d') }}", "2022-01-01"},
		{"{{ format_datetime('2022-01-01', '%Y-%m-%d') }}", "2022-01-01"},
		{"{{ format_datetime('2022-01-01T01:01:01Z', '%Y-%m-%dT%H:%M:%SZ') }}", "2022-01-01T01:01:01Z"},
		{"{{ format_datetime('2022-01-01T01:01:01-0800', '%Y-%m-%dT%H:%M:%SZ') }}", "2022-01-01T09:01:01Z"},
		{"{{ format_datetime(str_to_datetime('2022-01-01T01:01:01'), '%Y-%m-%dT%H:%M:%SZ') }}", "2022-01-01T01:01:01Z"},
		{"{{ format_datetime('Sat, 01 Jan 2022 01:01:01 +0000', '%Y-%m-%d', '%a, %d %b %Y %H:%M:%S %z') }}", "2022-01-01"},
		{"{{ format_datetime('2022-01-01T01:01:01Z', '%s', '%Y-%m-%dT%H:%M:%SZ') }}", int64(1640998861)},
		{"{{ format_datetime('2022-01-01T01:01:01Z', '%epoch_microseconds', '%Y-%m-%dT%H:%M:%SZ') }}", int64(1640998861000000)},
		{"{{ format_datetime(1683729087, '%Y-%m-%dT%H:%M:%SZ') }}", "2023-05-10T14:31:27Z"},
		{"{{ format_datetime(record.created, '%Y-%m-%dT%H:%M:%SZ') }}", "2023-05-10T14:31:27Z"},
		{"{{ format_datetime(1640998861000000, '%Y-%m-%dT%H:%M:%SZ', '%epoch_microseconds') }}", "2022-01-01T01:01:01Z"},
		{"{{ format_datetime(1640998861000, '%Y-%m-%dT%H:%M:%SZ', '%ms') }}", "2022-01-01T01:01:01Z"},
		{"{{ format_datetime('2022-01-01T01:01:01+0100', '%Y-%m-%dT%H:%M:%S.%f%z') }}", "2022-01-01T00:01:01.000000+0000"},
		{"{{ format_datetime('2022-01-01T01:01:01', '%Y-%m-%dT%H:%M:%S.%f%z') }}", "2022-01-01T01:01:01.000000+0000"},
		{"{{ format_datetime(dt='2020-10-01T00:00:00Z', format='%s') }}", int64(1601510400)},
		{"{{ format_datetime('2022-01-01T01:01:01.123456Z', '%Y-%m-%dT%H:%M:%S.%_msZ') }}", "2022-01-01T01:01:01.123Z"},
		{"{{ format_datetime('2022-01-01T01:01:01.5Z', '%ms') }}", int64(1640998861500)},
		{"{{ format_datetime(config.start_date, '%Y-%m-%d') }}", "2022-01-01"},
		{"{{ format_datetime(stream_interval.start_time, '%Y%m%d') }}", int64(20240101)},
		{"{{ format_datetime(record.updated_at, '%d/%m/%Y', '%Y-%m-%dT%H:%M:%SZ') }}", "01/02/2024"},
		{"{{ format_datetime(record.updated_at, '%d/%m/%Y', input_format=parameters.fmt) }}", "01/02/2024"},
		{"{{ format_datetime(now_utc(), '%ms') }}", "09s"}, // a datetime is strftime'd as it is: %m, then s
	})
}

// TestJinja covers test_jinja.py's literals and lookups, and the
// language the manifests write.
func TestJinja(t *testing.T) {
	runEval(t, []evalCase{
		{"{{ config['date'] }}", "2022-01-01"},
		{"{{ stream_slice['start_time'] }}", "2024-01-01"},
		{"{{ stream_partition['parent_id'] }}", int64(7)},
		{"{{ stream_interval.end_time }}", "2024-01-31"},
		{"{{1}}", int64(1)},
		{"{{[1,2]}}", []any{int64(1), int64(2)}},
		{"{{ 1+2 }}", int64(3)},
		{"{{ config['query'] }}", "{{'web'}, {'discover'}}"},
		{"9173710294242221J", "9173710294242221J"},
		{"{{ config.complex }}", "9173710294242221J"},
		{"plain text", "plain text"},
		{"/v1/{{ parameters.name }}", "/v1/users"},
		{"{{ next_page_token['next_page_url'] }}", "https://api.example.com/v1/items?page=2"},
		{"{{ next_page_token.get('next_page_url') }}", "https://api.example.com/v1/items?page=2"},
		{"{{ response.meta.next }}", "abc"},
		{"{{ response._links.more is none }}", true}, // a dict's key, not a Python attribute
		{"{{ stream_slice.cursor_slice }}", map[string]any{"start_time": "2024-01-01"}},
		{"{{ stream_slice.partition.parent_id }}", int64(7)},
		{"{{ stream_slice.extra_fields }}", "x"}, // no ExtraFields: the key of that name
		{"{{ stream_slice.get('start_time') }}", "2024-01-01"},
		{"{{ response['data'] | length }}", int64(2)},
		{"{{ last_page_size }}", int64(100)},
		{"{{ last_record.id }}", int64(9)},
		{"{{ headers['Link'] | regex_search('<(.*)>; rel=.*') }}", "https://this-is-test-link.com/?page=2"},
		{"{{ record.owner.name }}", "Ann"},
		{"{{ record['tags'][1] }}", "y"},
		{"{{ record.tags[-1] }}", "y"},
		{"{{ record.tags | join(',') }}", "x,y"},
		{"{{ ','.join(record.tags) }}", "x,y"},
		{"{{ record.updated_at.split('T')[0] }}", "2024-02-01"},
		{"{{ record.items }}", "<built-in method items of dict object>"}, // the dict's method, not the key
		{"{{ record['items'] }}", int64(3)},
		{"{{ 'yes' if response['items'] }}", "yes"}, // no key: the method, which is true
		{"{{ self.name }}", ""},
		{"{{ 1 }}\n", int64(1)}, // Jinja drops a trailing newline
		{"a\n\n", "a\n"},
		{"{{ record.items() | length }}", int64(9)},
		{"{{ record.nothing }}", nil},
		{"{{ record.nothing is none }}", true},
		{"{{ record.missing is defined }}", false},
		{"{{ record.missing is not defined }}", true},
		{"{{ record.id is number and record.id is divisibleby 5 }}", true},
		{"{{ record.status == 'active' and record.score > 1 }}", true},
		{"{{ record.status != 'active' or not record.tags }}", false},
		{"{{ 'x' in record.tags }}", true},
		{"{{ 'z' not in record.tags }}", true},
		{"{{ 'act' in record.status }}", true},
		{"{{ 'status' in record }}", true},
		{"{{ 1 < 2 < 3 }}", true},
		{"{{ (-1) ** 1000000000001 }} {{ 1 ** 999999999999 }} {{ 0 ** 0 }} {{ 3 ** 39 }}", "-1 1 1 4052555153018976267"},
		{"{{ 3 if record.missing else 4 }}", int64(4)},
		{"{{ 'yes' if record.status == 'active' else 'no' }}", "yes"},
		{"{{ 'hello'[1:3] }}", "el"},
		{"{{ 'hello'[::-1] }}", "olleh"},
		{"{{ [1, 2, 3, 4][1:] }}", []any{int64(2), int64(3), int64(4)}},
		{"{{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }}", "3 -4 2 3.5 1024"},
		{"{{ 2.0 * 3 }}", 6.0},
		{"{{ 1e20 }}", 1e20},
		{"{{ 0.1 + 0.2 }}", 0.30000000000000004},
		{"{{ 'a' ~ 1 ~ none }}", "a1None"},
		{"{{ 'a' + 'b' }}", "ab"},
		{"{{ [1] + [2] }}", []any{int64(1), int64(2)}},
		{"{{ -record.id }}", int64(-12345)},
		{"{{ {'a': 1, 'b': [1, 'x', none, true]} }}", map[string]any{"a": int64(1), "b": []any{int64(1), "x", nil, true}}},
		{"{{ {'a': now_utc()} }}", "{'a': datetime.datetime(2021, 9, 1, 0, 0, tzinfo=datetime.timezone.utc)}"},
		{"{{ (1, 2) }}", []any{int64(1), int64(2)}},
		{"{{ 'it''s' }}", "its"},
		{`{{ "it's" }}`, "it's"},
		{"{{ 'a\\tb' }}", "a\tb"},
		{"{{ '%s-%d' | format('a', 3) }}", "a-3"},
		{"{{ '%(x)s' % {'x': 'y'} }}", "y"},
		{"{{ '{}-{}'.format('a', 1) }}", "a-1"},
		{"{{ record.status.upper() }}", "ACTIVE"},
		{"{{ ' a '.strip() }}", "a"},
		{"{{ 'a-b'.replace('-', '_') }}", "a_b"},
		{"{{ record.status.startswith(('x', 'ac')) }}", true},
		{"{{ dict(a=1) }}", map[string]any{"a": int64(1)}},
		{"{% if record.status == 'active' %}yes{% elif record.id %}id{% else %}no{% endif %}", "yes"},
		{"{% if record.missing %}yes{% elif record.id %}id{% else %}no{% endif %}", "id"},
		{"{% for t in record.tags %}{{ loop.index }}{{ t }}{% if not loop.last %},{% endif %}{% endfor %}", "1x,2y"},
		{"{% for k, v in {'a': 1}.items() %}{{ k }}={{ v }}{% endfor %}", "a=1"},
		{"{% for t in [] %}x{% else %}empty{% endfor %}", "empty"},
		{"{% set n = record.id + 1 %}{{ n }}", int64(12346)},
		{"{# a comment #}{{ 1 }}", int64(1)},
		{"{% raw %}{{ not evaluated }}{% endraw %}", "{{ not evaluated }}"},
		{"a {%- raw -%} {{ x }} {%- endraw -%} b", "a{{ x }}b"},
		// source-gitlab's and source-google-sheets' ways of building a value
		{"{% set ids = [] %}\n{% for t in record.get('tags', []) %}\n{% set _ = ids.append(t ~ '!') %}\n{% endfor %}\n{{ ids }}\n", []any{"x!", "y!"}},
		{"{% set c = {} %}{% for t in record.tags %}{% set _ = c.update({t: loop.index}) %}{% endfor %}{{ c }}", map[string]any{"x": int64(1), "y": int64(2)}},
		{"{% set t = record.tags %}{% set _ = t.extend(['z']) %}{{ t | length }}{{ record.tags | length }}", int64(32)}, // the record's list stays as it was
		{"{% set o = record.owner %}{% set _ = o.update(name='Bo') %}{{ o.name }}{{ record.owner.name }}", "BoAnn"},
		{"{{ components_values.name }}", "sheet1"},
		{"{{ raw_schema['type'] == 'date' }}", true},
		{"  {{- 'a' -}}  ", "a"},
		{"{{ 'a' }}\n\n", "a\n"},
	})
}

// TestTyping is the CDK's reading of a template's text as a Python
// literal (ast.literal_eval) and what it leaves as text.
func TestTyping(t *testing.T) {
	runEval(t, []evalCase{
		{"{{ config.page_size }}", int64(100)}, // a config's "100" is an int
		{"{{ config.key }}", int64(1)},         // a float64 with no fraction is the int JSON most often wrote (norm)
		{"{{ config.numbered }}", int64(42)},   // json.Number
		{"{{ config.zeros }}", "007"},          // leading zeros: not a literal
		{"{{ config.date }}", "2022-01-01"},    // 2022 - 01 - 01 is not a literal
		{"{{ config.big }}", json.Number("123456789012345678901234567890")},
		{"{{ 'True' }}", true},
		{"{{ 'true' }}", "true"},
		{"{{ 'None' }}", nil},
		{"{{ '1_000' }}", int64(1000)},
		{"{{ '-5' }}", int64(-5)},
		{"{{ ' 5' }}", int64(5)},
		{"{{ '1e3' }}", 1000.0},
		{"{{ '0x1f' }}", int64(31)},
		{"{{ '1,2' }}", []any{int64(1), int64(2)}},
		{"{{ '(1,)' }}", []any{int64(1)}},
		{`{{ '{"a": [1, 2]}' }}`, map[string]any{"a": []any{int64(1), int64(2)}}},
		{`{{ '{"a": true}' }}`, `{"a": true}`}, // JSON's true is not Python's
		{"{{ \"'quoted'\" }}", "quoted"},
		{"{{ '1+2' }}", "1+2"},
		{"{{ '--5' }}", "--5"},
		{"{{ 'inf' }}", "inf"},
		{"{{ record.tags }}", []any{"x", "y"}},
		{"{{ record.owner }}", map[string]any{"name": "Ann"}},
		{"{{ record | tojson }}", `{"created": 1683729087, "id": 12345, "items": 3, "nothing": null, "owner": {"name": "Ann"}, "score": 1.5, "status": "active", "tags": ["x", "y"], "updated_at": "2024-02-01T10:00:00Z"}`},
		{"{{ record.owner | tojson }}", map[string]any{"name": "Ann"}},
		{"{{ record.owner | string }}", `{"name": "Ann"}`},
		{"{{ record.score }}", 1.5},
		{"{{ 1.0 }}", 1.0},
		{"{{ none }}", nil},
		{"{{ record.missing }}", ""},
		{"{{ '' }}", ""},
		{"{{ [] }}", []any{}},
		{"{{ {} }}", map[string]any{}},
		{"{{ 'a' }}{{ 1 }}", "a1"},
		{"{{ 1 }}{{ 2 }}", int64(12)},
		{"{{ [1] }} ", []any{int64(1)}},
		{"{{ 'x' ~ (2.0 * 3) }}", "x6.0"},
		{"t={{ timestamp('2022-01-01') }}", "t=1640995200.0"},
		{"{{ record.score * 2 }}", 3.0},
		{"{{ 2.0 | tojson }}", 2.0},
		{"{{ record.id | string }}", "12345"}, // """12345""": read back as the string
	})
}

// TestFilters are the CDK's test_filters.py cases and Jinja's filters.
func TestFilters(t *testing.T) {
	runEval(t, []evalCase{
		{"{{ 'abcd' | hash('md5') }}", "e2fc714c4727ee9395f324cd2e7f331f"},
		{"{{ 'abcd' | hash }}", "e2fc714c4727ee9395f324cd2e7f331f"},
		{"{{ 1.5 | hash('md5') }}", "6008647277c4454cecd97d33c069f0ca"},
		{"{{ 'test_input_string' | hash('md5', 'test_input_salt') }}", "77a2e8a61c51743022726d3f28b425cb"},
		{"{{ 'abcd' | hash('sha256') }}", "88d4266fd4e6338d13b845fcf289579d209c897823b9217da3e161936f031589"},
		{"{{ 'some_client_secret_1' | base64encode }}", "c29tZV9jbGllbnRfc2VjcmV0XzE="},
		{"{{ 'aW5wdXRfc3RyaW5n' | base64decode }}", "input_string"},
		{"{{ 'YWlyYnl0ZQ==' | base64decode }}", "airbyte"},
		{"{{ 'cGFzc3dvcmQ=' | base64decode }}", "password"},
		{"{{ '<https://this-is-test-link.com/?page=2>; rel=\"next\"' | regex_search('<(.*)>; rel=.*') }}", "https://this-is-test-link.com/?page=2"},
		{"{{ '<https://x>; rel=\"next\"' | regex_search('<.*>; rel=.*') }}", ""},
		{"{{ 'hello world' | regex_replace('world', 'there') }}", "hello there"},
		{"{{ 'abc123def456' | regex_replace('[0-9]+', '') }}", "abcdef"},
		{"{{ 'aaa bbb aaa' | regex_replace('aaa', 'ccc') }}", "ccc bbb ccc"},
		{"{{ 'ab' | regex_replace('(a)(b)', '\\\\2\\\\1') }}", "ba"},
		{"{{ 'test_message' | hmac('test_secret_key') }}", "f972be96e44b7aafd5eb76e432a560e2cb94e6f6f1fe9d1c1fa684715de3c767"},
		{"{{ 'test_message' | hmac('test_secret_key', 'sha256') }}", "f972be96e44b7aafd5eb76e432a560e2cb94e6f6f1fe9d1c1fa684715de3c767"},
		{"{{ 123 | hmac('test_secret_key') }}", "12e68c37f4e2282270fc24aab731f6d960211be0d7b4277af876ff4df2c0b1d1"},
		{"{{ 'hello world' | string }}", "hello world"},
		{"{{ 1.52 | string }}", "1.52"},
		{"{{ true | string }}", "true"},
		{"{{ {'hello': 'world'} | string }}", `{"hello": "world"}`},
		{"{{ config.page_size | int }}", int64(100)},
		{"{{ '12.7' | int }}", int64(12)},
		{"{{ 'x' | int }}", int64(0)},
		{"{{ 'x' | int(5) }}", int64(5)},
		{"{{ 'ff' | int(base=16) }}", int64(255)},
		{"{{ '1.5' | float }}", 1.5},
		{"{{ 3 | float }}", 3.0},
		{"{{ record.tags | length }}", int64(2)},
		{"{{ record.status | count }}", int64(6)},
		{"{{ record.missing | default('d') }}", "d"},
		{"{{ record.missing | d('d') }}", "d"},
		{"{{ '' | default('d') }}", ""},
		{"{{ '' | default('d', true) }}", "d"},
		{"{{ record.nothing | default('d') }}", nil},
		{"{{ record.tags | first }}", "x"},
		{"{{ record.tags | last }}", "y"},
		{"{{ [] | first is defined }}", false},
		{"{{ record.status | upper }}", "ACTIVE"},
		{"{{ 'ABC' | lower }}", "abc"},
		{"{{ 'a-b' | replace('-', '') }}", "ab"},
		{"{{ '  a  ' | trim }}", "a"},
		{"{{ 'xax' | trim('x') }}", "a"},
		{"{{ 'ab' | list }}", []any{"a", "b"}},
		{"{{ 2.5 | round }}", 2.0},
		{"{{ 2.675 | round(2) }}", 2.67},
		{"{{ 2.1 | round(0, 'ceil') }}", 3.0},
		{"{{ -3 | abs }}", int64(3)}, // Jinja filters the negation: (-3)|abs
		{"{{ (-3) | abs }}", int64(3)},
		{"{{ [3, 1, 2] | sort }}", []any{int64(1), int64(2), int64(3)}},
		{"{{ [3, 1, 2] | sort(reverse=true) }}", []any{int64(3), int64(2), int64(1)}},
		{"{{ ['b', 'A', 'a'] | unique | list }}", []any{"b", "A"}},
		{"{{ [1, 2, 3] | sum }}", int64(6)},
		{"{{ [1, 2, 3] | max }}", int64(3)},
		{"{{ [1, 2, 3] | reverse }}", []any{int64(3), int64(2), int64(1)}},
		{"{{ [{'a': 1}, {'a': 2}] | map(attribute='a') | list }}", []any{int64(1), int64(2)}},
		{"{{ ['1', '2'] | map('int') | sum }}", int64(3)},
		{"{{ [1, none, 2] | select | list }}", []any{int64(1), int64(2)}},
		{"{{ [1, 2, 3, 4] | select('even') | list }}", []any{int64(2), int64(4)}},
		{"{{ [1, 2, 3, 4] | reject('odd') | list }}", []any{int64(2), int64(4)}},
		{"{{ [{'a': 1}, {'a': 0}] | selectattr('a') | list }}", []any{map[string]any{"a": int64(1)}}},
		{"{{ [{'a': 1}, {'a': 2}] | selectattr('a', 'equalto', 2) | list }}", []any{map[string]any{"a": int64(2)}}},
		{"{{ {'b': 1, 'a': 2} | dictsort | first | first }}", "a"},
		{"{{ record.owner | items | list }}", []any{[]any{"name", "Ann"}}},
		{"{{ {'a': 'b c', 'd': '/'} | urlencode }}", "a=b+c&d=%2F"},
		{"{{ 'a b/c' | urlencode }}", "a%20b/c"},
		{"{{ '<a>' | e }}", "&lt;a&gt;"},
		{"{{ 'hello world' | title }}", "Hello World"},
		{"{{ 'hello world' | capitalize }}", "Hello world"},
		{"{{ 'one two' | wordcount }}", int64(2)},
		{"{{ ['a', 'b'] | tojson }}", []any{"a", "b"}},
		{"{{ 'é' | tojson }}", "é"},
	})
}

// TestConditions are the CDK's test_interpolated_boolean.py cases, and
// the FALSE_VALUES the CDK reads a condition's result against.
func TestConditions(t *testing.T) {
	v := testVars()
	v.Config["empty_tuple"] = []any{}
	for _, c := range []struct {
		src  string
		want bool
	}{
		{"{{ config['parent']['key_with_true'] }}", true},
		{`{{ config['string_key'] == "compare_me" }}`, true},
		{`{{ config['string_key'] == "witness_me" }}`, false},
		{"{{ config['string_key'] }}", true},
		{"{{ config['zero_value'] }}", false},
		{"{{ config['empty_array'] }}", false},
		{"{{ config['empty_dict'] }}", false},
		{"{{ config['empty_tuple'] }}", false},
		{`{{ "false" }}`, false},
		{"{{ False }}", false},
		{"{{ True }}", true},
		{"{{ 1 in config['non_empty_array'] }}", true},
		{"{{ 2 in config['non_empty_array'] }}", false},
		{`{{ parameters['from_parameters'] == "come_find_me" }}`, true},
		{"{{ record.missing }}", false},
		{"{{ record.missing.deeper }}", false}, // UndefinedError: the default, False
		{"{{ record.nothing }}", true},         // None is not in FALSE_VALUES
		{"{{ '0.0' }}", false},
		{"{{ 0.0 }}", false},
		{"{{ record.status == 'active' and record.updated_at >= '2024-01-15' }}", true},
		{"{{ not response.meta.next }}", false},
		{"{{ response.meta.missing is none }}", false},
		{"{{ last_page_size < 100 }}", false},
		{"{{ record.nothing.get('x') }}", false},                   // None has no get: undefined, called
		{"{{ 'Invalid token' in response.error.message }}", false}, // an attribute of undefined
	} {
		cond, err := CompileCondition(c.src)
		if err != nil {
			t.Errorf("CompileCondition(%q): %v", c.src, err)
			continue
		}
		got, err := cond.Eval(v)
		if err != nil {
			t.Errorf("Eval(%q): %v", c.src, err)
			continue
		}
		if got != c.want {
			t.Errorf("Eval(%q) = %v, want %v", c.src, got, c.want)
		}
	}
}

// TestDefault: where the CDK evaluates with no default (its mappings:
// request parameters, headers, bodies) an empty result is None, and so
// is an undefined one; a default is evaluated in their place.
func TestDefault(t *testing.T) {
	v := testVars()
	def := MustCompile("{{ config.date }}")
	for _, c := range []struct {
		src  string
		def  *Template
		want any
	}{
		{"{{ config['missing'] }}", nil, nil},
		{"{{ stream_slice['missing'] }}", nil, nil},
		{"{{ config.missing.deeper }}", nil, nil},
		{"{{ config['missing'] }}", def, "2022-01-01"},
		{"{{ config['page_size'] }}", def, int64(100)},
	} {
		got, err := MustCompile(c.src).EvalDefault(v, c.def)
		if err != nil {
			t.Errorf("EvalDefault(%q): %v", c.src, err)
			continue
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("EvalDefault(%q) (-want +got):\n%s", c.src, d)
		}
	}
	// InterpolatedString's default is its own text: undefined is an error.
	_, err := MustCompile("{{ config.missing.deeper }}").Eval(v)
	if !errors.Is(err, ErrUndefined) {
		t.Errorf("Eval of an undefined attribute: %v, want ErrUndefined", err)
	}
}

func TestReadsAndConstant(t *testing.T) {
	for _, c := range []struct {
		src      string
		reads    VarSet
		constant bool
	}{
		{"plain", 0, true},
		{"{{ 1 + 2 }}", 0, true},
		{"{{ max(1, 2) }}", 0, true},
		{"{{ config.a }}", VarSet(Config), false},
		{"{{ record.a == stream_partition.b }}", VarSet(Record) | VarSet(StreamPartition), false},
		{"{{ now_utc() }}", VarSet(Clock), false},
		{"{% set x = 1 %}{{ x }}", 0, true},
		{"{% for r in response.data %}{{ r }}{% endfor %}", VarSet(Response), false},
	} {
		tmpl := MustCompile(c.src)
		if tmpl.Reads() != c.reads || tmpl.Constant() != c.constant {
			t.Errorf("%q: reads %q constant %v, want %q %v", c.src, tmpl.Reads(), tmpl.Constant(), c.reads, c.constant)
		}
	}
	if !MustCompile("{{ record.a }}").Reads().Has(Record) {
		t.Error("Reads().Has(Record) is false for a template reading the record")
	}
}

// TestCompileErrors: a template that does not compile names the column
// and what was expected there.
func TestCompileErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"{{ foo }}", `in "{{ foo }}" at column 4: unknown variable "foo": expected one of config, parameters,`},
		{"{{ config[ }}", `at column 12: expected an expression, found "}"`},
		{"{{ config.a | nofilter }}", `at column 15: unknown filter "nofilter": expected one of abs,`},
		{"{{ bar() }}", `at column 4: unknown macro "bar": expected one of camel_case_to_snake_case,`},
		{"{{ config.a is nottest }}", `at column 16: unknown test "nottest"`},
		{"{{ config.a.nomethod() }}", `at column 13: unknown method "nomethod"`},
		{"{{ options['name'] }}", `unknown variable "options"`},
		{"{{ 'abc }}", `at column 4: expected an expression, found a string that is not closed`},
		{"{{ record.a | regex_search('(a') }}", "at column 15: regular expression \"(a\": error parsing regexp: missing closing ): `(a`"},
		{"{% if config.a %}", `at column 18: expected {% endif %}, found the end of the template`},
		{"{{ config.a | int(}}", `at column 19: expected an expression, found "}"`},
		{"{{ config.a", `at column 12: expected }}, found the end of the template`},
		{"{{ stream_state.x }}", `stream_state is no longer supported by the CDK`},
		{"{{ now_utc }}", `macro "now_utc" is not called`},
		{"{{ import os) }}", `unknown variable "import"`},
		{"{{ [a for a in range(1000000000)] }}", `unknown variable "a"`},
		{"{% while x %}", `unknown statement "while": expected if, for, set or raw`},
		{"{% raw %}{{ x }}", `at column 4: expected {% endraw %}, found the end of the template`},
		{"{{ 1 }}{% endif %}", `at column 11: unexpected {% endif %}`},
	} {
		_, err := Compile(c.src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Compile(%q) = %v, want an error containing %q", c.src, err, c.want)
		}
	}
}

func TestEvalErrors(t *testing.T) {
	v := testVars()
	for _, c := range []struct{ src, want string }{
		{"{{ record.status + 1 }}", `evaluating "{{ record.status + 1 }}": unsupported operand type(s) for +: 'str' and 'int'`},
		{"{{ record.status < 1 }}", `'<' not supported between instances of 'str' and 'int'`},
		{"{{ str_to_datetime('invalid-date') }}", `str_to_datetime(): "invalid-date" is not an ISO 8601 date and time`},
		{"{{ 1 / 0 }}", "division by zero"},
		{"{{ record.tags.append(1) }}", "only a list held in a {% set %} variable can grow"},
		{"{{ config.update({'a': 1}) }}", "only a dict held in a {% set %} variable can change"},
		{"{{ 2 ** 64 }}", "integer result out of the 64-bit range"},
		{"{{ 3 ** 1000000000000 }}", "integer result out of the 64-bit range"},
		{"{{ 9223372036854775807 + 1 }}", "integer result out of the 64-bit range"},
		{"{{ record.id * 9223372036854775807 }}", "integer result out of the 64-bit range"},
		{"{{ 'abc' | hash('nohash') }}", "filter hash: no hashing function named nohash"},
		{"{{ 'm' | hmac('k', 'md5') }}", `hash type "md5" is not allowed`},
		{"{{ format_datetime('2022', '%Y', '%s') }}", "'s' is a bad directive"},
	} {
		_, err := MustCompile(c.src).Eval(v)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Eval(%q) = %v, want an error containing %q", c.src, err, c.want)
		}
	}
}

// TestTypedIsRendered: the value a single expression gives is the one
// the CDK's trip through text gives, str() then literal_eval.
func TestTypedIsRendered(t *testing.T) {
	for _, x := range []any{
		nil, true, false, int64(0), int64(-12), 1.5, 1e16, 1e-5, 0.1, -0.0, 2.0, "", "a", "12", "0x10", "it's",
		`say "hi"`, "a\nb", "é", []any{}, []any{int64(1), "a", nil, 2.5, []any{true}},
		map[string]any{}, map[string]any{"a": []any{"b"}, "c": map[string]any{"d": nil}}, 12345.0,
	} {
		want, ok := LiteralEval(pyStr(x))
		if !ok {
			want = pyStr(x)
		}
		if s, isStr := x.(string); isStr && s == "" {
			want = ""
		}
		if d := cmp.Diff(want, typed(x)); d != "" {
			t.Errorf("typed(%#v) (-rendered +typed):\n%s", x, d)
		}
	}
}

func TestConstantsAreFresh(t *testing.T) {
	tmpl := MustCompile("{{ [1, {'a': 2}] }}")
	a, _ := tmpl.Eval(nil)
	a.([]any)[1].(map[string]any)["a"] = "changed"
	b, _ := tmpl.Eval(nil)
	if d := cmp.Diff([]any{int64(1), map[string]any{"a": int64(2)}}, b); d != "" {
		t.Errorf("a constant's list changed by its caller (-want +got):\n%s", d)
	}
	if x, err := MustCompile("{{ config }}").Eval(nil); err != nil || x != nil {
		t.Errorf("Eval(nil) of {{ config }} = %v, %v; want None", x, err)
	}
}

// TestConcurrentEval: one Template serves goroutines at once (run with
// -race).
func TestConcurrentEval(t *testing.T) {
	tmpl := MustCompile("{% set ids = [] %}{% for t in record.tags %}{% set _ = ids.append(t) %}{% endfor %}{{ ids | join(',') }}-{{ now_utc().year }}")
	cond, _ := CompileCondition("{{ record.status == 'active' }}")
	v := testVars()
	done := make(chan error, 4)
	for range 4 {
		go func() {
			for range 200 {
				x, err := tmpl.Eval(v)
				if err != nil || x != "x,y-2021" {
					done <- fmt.Errorf("Eval = %v, %v", x, err)
					return
				}
				if ok, err := cond.Eval(v); err != nil || !ok {
					done <- fmt.Errorf("condition = %v, %v", ok, err)
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func TestNames(t *testing.T) {
	for _, c := range []struct {
		names []string
		has   string
	}{{Macros(), "format_datetime"}, {Filters(), "regex_search"}, {Tests(), "defined"}} {
		if !slices.Contains(c.names, c.has) || !slices.IsSorted(c.names) {
			t.Errorf("%v: want %s, sorted", c.names, c.has)
		}
	}
}

func TestStr(t *testing.T) {
	for _, c := range []struct {
		x    any
		want string
	}{
		{true, "True"}, {nil, "None"}, {int64(1700000000), "1700000000"}, {1e21, "1e+21"}, {1.5, "1.5"},
		{2.0, "2.0"}, {[]any{2.0}, "[2]"}, // Eval's float, and a JSON int in a list
		{"a", "a"}, {[]any{"a", nil}, "['a', None]"}, {map[string]any{"k": false}, "{'k': False}"},
	} {
		if got := Str(c.x); got != c.want {
			t.Errorf("Str(%#v) = %q, want %q", c.x, got, c.want)
		}
	}
}

func TestGenerateUUID(t *testing.T) {
	tmpl := MustCompile("{{ generate_uuid() }}")
	a, err := tmpl.Eval(&Vars{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := tmpl.Eval(&Vars{})
	s, _ := a.(string)
	if len(s) != 36 || s[14] != '4' || a == b {
		t.Errorf("generate_uuid() = %v then %v, want two different UUID4s", a, b)
	}
}

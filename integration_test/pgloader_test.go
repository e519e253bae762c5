package integration_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// pgLoader is a Singer target into a real PostgreSQL, applying the
// conventions as pipelinewise-target-postgres does:
//
//   - SCHEMA creates the stream's table in the loader's schema (integer
//     → bigint, number → double precision, boolean → boolean, a
//     date-time string → timestamptz, any other string → text, the rest
//     jsonb), key_properties its primary key;
//   - RECORD is upserted by the primary key: every column of the schema
//     is written, a property the record lacks as NULL (a deletion
//     record, the key and _sdc_deleted_at only, nulls the others);
//   - at each STATE (a batch's end) and at the end, with hard_delete, the
//     rows whose _sdc_deleted_at is set are deleted.
type pgLoader struct {
	t          *testing.T
	conn       *pgx.Conn
	schema     string
	hardDelete bool
	tables     map[string]*pgTable
	state      json.RawMessage // the last STATE's value
}

type pgTable struct {
	name    string
	columns []string // sorted
	types   map[string]string
	keys    []string
}

func newPGLoader(t *testing.T, conn *pgx.Conn, schema string, hardDelete bool) *pgLoader {
	t.Helper()
	if _, err := conn.Exec(context.Background(), "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	return &pgLoader{t: t, conn: conn, schema: schema, hardDelete: hardDelete, tables: map[string]*pgTable{}}
}

func pgType(p map[string]any) string {
	types := []string{}
	switch t := p["type"].(type) {
	case string:
		types = append(types, t)
	case []any:
		for _, e := range t {
			if s, ok := e.(string); ok && s != "null" {
				types = append(types, s)
			}
		}
	}
	if len(types) != 1 {
		return "jsonb"
	}
	switch types[0] {
	case "integer":
		return "bigint"
	case "number":
		return "double precision"
	case "boolean":
		return "boolean"
	case "string":
		if p["format"] == "date-time" {
			return "timestamptz"
		}
		return "text"
	}
	return "jsonb"
}

// feed applies a run's stdout, line by line.
func (l *pgLoader) feed(stdout []byte) {
	l.t.Helper()
	ctx := context.Background()
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var msg struct {
			Type          string          `json:"type"`
			Stream        string          `json:"stream"`
			Schema        map[string]any  `json:"schema"`
			KeyProperties []string        `json:"key_properties"`
			Record        map[string]any  `json:"record"`
			Value         json.RawMessage `json:"value"`
		}
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		if err := dec.Decode(&msg); err != nil {
			l.t.Fatalf("not a Singer message: %v: %s", err, sc.Bytes())
		}
		switch msg.Type {
		case "SCHEMA":
			l.createTable(msg.Stream, msg.Schema, msg.KeyProperties)
		case "RECORD":
			tb := l.tables[msg.Stream]
			if tb == nil {
				l.t.Fatalf("RECORD of %s before its SCHEMA", msg.Stream)
			}
			l.upsert(tb, msg.Record)
		case "STATE":
			l.flush()
			l.state = msg.Value
		}
	}
	if err := sc.Err(); err != nil {
		l.t.Fatal(err)
	}
	l.flush()
	_ = ctx
}

func (l *pgLoader) createTable(stream string, schema map[string]any, keys []string) {
	l.t.Helper()
	props, _ := schema["properties"].(map[string]any)
	tb := &pgTable{name: pgx.Identifier{l.schema, stream}.Sanitize(), types: map[string]string{}, keys: keys}
	for name, p := range props {
		pm, _ := p.(map[string]any)
		tb.columns = append(tb.columns, name)
		tb.types[name] = pgType(pm)
	}
	slices.Sort(tb.columns)
	var cols []string
	for _, c := range tb.columns {
		cols = append(cols, pgx.Identifier{c}.Sanitize()+" "+tb.types[c])
	}
	var pk []string
	for _, k := range keys {
		pk = append(pk, pgx.Identifier{k}.Sanitize())
	}
	ddl := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (%s, PRIMARY KEY (%s))", tb.name, strings.Join(cols, ", "), strings.Join(pk, ", "))
	if _, err := l.conn.Exec(context.Background(), ddl); err != nil {
		l.t.Fatalf("%s: %v", ddl, err)
	}
	l.tables[stream] = tb
}

func (l *pgLoader) upsert(tb *pgTable, rec map[string]any) {
	l.t.Helper()
	var cols, params, sets []string
	var args []any
	for i, c := range tb.columns {
		id := pgx.Identifier{c}.Sanitize()
		cols = append(cols, id)
		params = append(params, fmt.Sprintf("$%d", i+1))
		if !slices.Contains(tb.keys, c) {
			sets = append(sets, id+" = EXCLUDED."+id)
		}
		v, ok := rec[c]
		switch {
		case !ok || v == nil:
			args = append(args, nil)
		case tb.types[c] == "jsonb":
			b, _ := json.Marshal(v)
			args = append(args, string(b))
		default:
			args = append(args, fmt.Sprint(v)) // PostgreSQL reads each type from its text
		}
	}
	var pk []string
	for _, k := range tb.keys {
		pk = append(pk, pgx.Identifier{k}.Sanitize())
	}
	q := fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s) ON CONFLICT (%s) DO UPDATE SET %s",
		tb.name, strings.Join(cols, ", "), strings.Join(params, ", "), strings.Join(pk, ", "), strings.Join(sets, ", "))
	if _, err := l.conn.Exec(context.Background(), q, args...); err != nil {
		l.t.Fatalf("upsert %v: %v", rec, err)
	}
}

// flush ends a batch: with hard_delete, the deleted rows go.
func (l *pgLoader) flush() {
	l.t.Helper()
	if !l.hardDelete {
		return
	}
	for _, tb := range l.tables {
		if _, ok := tb.types["_sdc_deleted_at"]; !ok {
			continue
		}
		if _, err := l.conn.Exec(context.Background(), "DELETE FROM "+tb.name+" WHERE _sdc_deleted_at IS NOT NULL"); err != nil {
			l.t.Fatal(err)
		}
	}
}

// rows reads a table as text, each row its columns' values by name
// (NULL as nil), ordered by its primary key.
func (l *pgLoader) rows(stream string, columns ...string) []map[string]any {
	l.t.Helper()
	tb := l.tables[stream]
	if tb == nil {
		l.t.Fatalf("no table for %s", stream)
	}
	var sel []string
	for i, c := range columns {
		id := pgx.Identifier{c}.Sanitize()
		as := fmt.Sprintf(" AS c%d", i) // not the column's name, which ORDER BY would take for it
		if tb.types[c] == "timestamptz" {
			sel = append(sel, "to_char("+id+" AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"+as)
		} else {
			sel = append(sel, id+"::text"+as)
		}
	}
	rs, err := l.conn.Query(context.Background(), "SELECT "+strings.Join(sel, ", ")+" FROM "+tb.name+" ORDER BY "+strings.Join(tb.keys, ", "))
	if err != nil {
		l.t.Fatal(err)
	}
	defer rs.Close()
	var out []map[string]any
	for rs.Next() {
		vals := make([]*string, len(columns))
		ptrs := make([]any, len(columns))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			l.t.Fatal(err)
		}
		row := map[string]any{}
		for i, c := range columns {
			if vals[i] == nil {
				row[c] = nil
			} else {
				row[c] = *vals[i]
			}
		}
		out = append(out, row)
	}
	if err := rs.Err(); err != nil {
		l.t.Fatal(err)
	}
	return out
}

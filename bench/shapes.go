package main

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The schema shapes of the models scenario (issue 28): keyset pages of
// the same n records through one schema shape each, spliced. A shape's
// twin is the plain keyset row of the scenario, in the same rounds: the
// figure is output bytes per CPU-second (a wide record is four times an
// event's bytes), and its ratio to keyset's. Target ≥ 0.7× keyset (issue
// 28), but for the keywords the walker leaves to the library, a figure
// without a target.
var benchShapes = []struct {
	name, what string
	record     func(b []byte, i int) []byte
	schema     string
	target     bool
}{
	{"keywords", "enum/maxLength/minimum/pattern/format", modelEvent, keywordsShape, true},
	{"library", "anyOf, hostname and uri-reference formats, left to the library", modelEvent, libraryShape, false},
	{"wide", "100 properties", wideEvent, wideShape(), true},
	{"nested", "objects 4 deep and an array of objects", nestedEvent, nestedShape, true},
}

const keywordsShape = `{"type":"object","required":["id"],"properties":{
	"id":{"type":"integer","minimum":1},
	"type":{"type":["null","string"],"enum":["page_view","login","logout",null]},
	"actor_id":{"type":["null","integer"],"minimum":0,"maximum":1000},
	"occurred_at":{"type":["null","string"],"format":"date-time"},
	"source":{"type":["null","string"],"enum":["web","api","mobile"]},
	"ip":{"type":["null","string"],"format":"ipv4"},
	"user_agent":{"type":["null","string"],"minLength":1,"maxLength":512},
	"payload":{"type":["null","object"],"properties":{
		"path":{"type":["null","string"],"pattern":"^/products/[0-9]+/"},
		"duration_ms":{"type":["null","integer"],"minimum":0,"exclusiveMaximum":100000},
		"bytes":{"type":["null","integer"],"minimum":0},
		"ok":{"type":["null","boolean"]}}}}}`

const libraryShape = `{"type":"object","required":["id"],"properties":{
	"id":{"type":"integer"},
	"type":{"type":["null","string"]},
	"actor_id":{"anyOf":[{"type":"integer","minimum":0},{"type":"string"}]},
	"occurred_at":{"type":["null","string"],"format":"date-time"},
	"source":{"type":["null","string"],"format":"hostname"},
	"ip":{"type":["null","string"]},
	"user_agent":{"type":["null","string"]},
	"payload":{"type":["null","object"],"properties":{
		"path":{"type":["null","string"],"format":"uri-reference"},
		"duration_ms":{"type":["null","integer"]},
		"bytes":{"type":["null","integer"]},
		"ok":{"type":["null","boolean"]}}}}}`

// wideEvent is record i of 100 properties besides its id, ~1.2 KB.
func wideEvent(b []byte, i int) []byte {
	b = fmt.Appendf(b, `{"id":%d`, i+1)
	for f := 0; f < 100; f++ {
		if f%2 == 0 {
			b = fmt.Appendf(b, `,"field_%02d":%d`, f, (i+f)%100000)
		} else {
			b = fmt.Appendf(b, `,"field_%02d":"value %d"`, f, (i*f)%1000)
		}
	}
	return append(b, '}')
}

func wideShape() string {
	var s strings.Builder
	s.WriteString(`{"type":"object","required":["id","field_00","field_99"],"properties":{"id":{"type":"integer"}`)
	for f := 0; f < 100; f++ {
		t := "integer"
		if f%2 == 1 {
			t = "string"
		}
		fmt.Fprintf(&s, `,"field_%02d":{"type":["null","%s"]}`, f, t)
	}
	s.WriteString(`}}`)
	return s.String()
}

// nestedEvent is record i with objects four deep and three line items,
// ~420 bytes.
func nestedEvent(b []byte, i int) []byte {
	return fmt.Appendf(b, `{"id":%d,"type":"order","occurred_at":"2026-01-%02dT%02d:%02d:%02dZ","customer":{"id":%d,"address":{"city":"Lyon","geo":{"lat":45.76,"lon":4.84,"source":{"kind":"gps","accuracy_m":%d}}}},"items":[{"sku":"A-%d","qty":%d,"price":"9.99"},{"sku":"B-%d","qty":1,"price":"19.50"},{"sku":"C-%d","qty":2,"price":"0.99"}]}`,
		i+1, 1+i/86400%28, i/3600%24, i/60%60, i%60, i%997, i%50, i%1000, 1+i%5, i%700, i%300)
}

const nestedShape = `{"type":"object","required":["id"],"properties":{
	"id":{"type":"integer"},"type":{"type":"string"},"occurred_at":{"type":"string","format":"date-time"},
	"customer":{"type":"object","required":["id"],"properties":{"id":{"type":"integer"},
		"address":{"type":"object","properties":{"city":{"type":"string"},
			"geo":{"type":"object","properties":{"lat":{"type":"number"},"lon":{"type":"number"},
				"source":{"type":"object","properties":{"kind":{"type":"string"},"accuracy_m":{"type":"integer"}}}}}}}}},
	"items":{"type":"array","items":{"type":"object","required":["sku"],"properties":{
		"sku":{"type":"string"},"qty":{"type":"integer"},"price":{"type":"string"}}}}}}`

// shapePage is the keyset page from start of shape's records.
func shapePage(shape string, start, n int) []byte {
	for _, s := range benchShapes {
		if s.name != shape {
			continue
		}
		end := min(start+pageSize, n)
		b := append(make([]byte, 0, (end-start)*1300+20), `{"data":[`...)
		for i := start; i < end; i++ {
			if i > start {
				b = append(b, ',')
			}
			b = s.record(b, i)
		}
		return append(b, "]}"...)
	}
	return nil
}

// shapeRows are the shapes as rows of the models scenario.
func shapeRows() []modelRow {
	var rows []modelRow
	for _, s := range benchShapes {
		target := 0.0
		if s.target {
			target = 0.7
		}
		rows = append(rows, modelRow{name: "shape " + s.name, what: s.what, unit: unitBytes, target: target,
			records: allOf, measured: allOf, streams: func(b *bench) []any {
				var schema map[string]any
				if err := json.Unmarshal([]byte(s.schema), &schema); err != nil {
					panic(fmt.Sprintf("shape %s: %v", s.name, err)) // a constant above
				}
				d := b.stream("events", pageSize)
				d["path"], d["records_path"], d["schema"] = "/v1/shape_"+s.name, "data", schema
				d["pagination"] = keysetPagination
				delete(d, "params")
				return []any{d}
			}})
	}
	return rows
}

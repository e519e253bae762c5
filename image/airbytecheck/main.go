// Command airbytecheck reads what one Airbyte command printed and checks
// every line against the Airbyte protocol's published message schema, then
// checks that the command said what it must (a SPEC, a successful
// CONNECTION_STATUS, a CATALOG, or records, state and completed streams).
// .ci/run uses it on the output of the tap run inside the container image,
// where the Go test harness cannot reach.
//
//	airbytecheck -schema image/airbytecheck/testdata/airbyte_protocol.json -expect read -streams a,b out.jsonl
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

func main() {
	schemaPath := flag.String("schema", "image/airbytecheck/testdata/airbyte_protocol.json", "the Airbyte protocol schema (JSON)")
	expect := flag.String("expect", "", "the command whose output this is: spec, check, discover or read")
	streamList := flag.String("streams", "", "read and discover: comma-separated streams that must be there")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: airbytecheck -schema FILE -expect spec|check|discover|read [-streams a,b] OUTPUT")
		os.Exit(2)
	}
	var streams []string
	if *streamList != "" {
		streams = strings.Split(*streamList, ",")
	}
	if err := run(*schemaPath, *expect, streams, flag.Arg(0)); err != nil {
		fmt.Fprintf(os.Stderr, "airbytecheck: %s: %v\n", flag.Arg(0), err)
		os.Exit(1)
	}
}

func run(schemaPath, expect string, streams []string, outPath string) error {
	schema, err := loadSchema(schemaPath)
	if err != nil {
		return err
	}
	f, err := os.Open(outPath)
	if err != nil {
		return err
	}
	defer f.Close()
	msgs, err := validate(schema, f)
	if err != nil {
		return err
	}
	return expectations(expect, streams, msgs)
}

// loadSchema compiles the AirbyteMessage definition of the protocol schema.
func loadSchema(path string) (*jsonschema.Schema, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the Airbyte protocol schema: %w", err)
	}
	const url = "airbyte_protocol.json"
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft7
	if err := c.AddResource(url, bytes.NewReader(b)); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s, err := c.Compile(url + "#/definitions/AirbyteMessage")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// payload names the member each message type carries; the schema leaves
// them all optional, the protocol's prose does not.
var payload = map[string]string{
	"RECORD": "record", "STATE": "state", "LOG": "log", "SPEC": "spec",
	"CONNECTION_STATUS": "connectionStatus", "CATALOG": "catalog", "TRACE": "trace",
}

// validate checks that every line is one JSON object valid against the
// schema and carrying its type's member, and returns the messages.
func validate(schema *jsonschema.Schema, r io.Reader) ([]map[string]any, error) {
	var msgs []map[string]any
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d is not JSON: %v", n, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("line %d holds more than one JSON value", n)
		}
		if err := schema.Validate(v); err != nil {
			return nil, fmt.Errorf("line %d is not a valid AirbyteMessage: %v\n%s", n, err, line)
		}
		m, _ := v.(map[string]any) // an object: the schema says so
		typ, _ := m["type"].(string)
		member, ok := payload[typ]
		if !ok {
			return nil, fmt.Errorf("line %d: a source does not write %s messages", n, typ)
		}
		if _, has := m[member]; !has {
			return nil, fmt.Errorf("line %d: a %s message without its %q member", n, typ, member)
		}
		msgs = append(msgs, m)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return msgs, nil
}

// expectations checks what the command must have said.
func expectations(expect string, streams []string, msgs []map[string]any) error {
	byType := map[string][]map[string]any{}
	for _, m := range msgs {
		t := m["type"].(string)
		byType[t] = append(byType[t], m)
	}
	for _, m := range byType["TRACE"] {
		if get(m, "trace", "type") == "ERROR" {
			return fmt.Errorf("an ERROR trace: %v", get(m, "trace", "error", "message"))
		}
	}
	only := func(types ...string) error {
		for t := range byType {
			if !slices.Contains(types, t) {
				return fmt.Errorf("%s wrote a %s message", expect, t)
			}
		}
		return nil
	}
	switch expect {
	case "spec":
		if len(byType["SPEC"]) != 1 {
			return fmt.Errorf("expected one SPEC message, got %d", len(byType["SPEC"]))
		}
		return only("SPEC", "LOG")
	case "check":
		cs := byType["CONNECTION_STATUS"]
		if len(cs) != 1 {
			return fmt.Errorf("expected one CONNECTION_STATUS message, got %d", len(cs))
		}
		if s := get(cs[0], "connectionStatus", "status"); s != "SUCCEEDED" {
			return fmt.Errorf("connection status %v: %v", s, get(cs[0], "connectionStatus", "message"))
		}
		return only("CONNECTION_STATUS", "LOG", "TRACE")
	case "discover":
		cats := byType["CATALOG"]
		if len(cats) != 1 {
			return fmt.Errorf("expected one CATALOG message, got %d", len(cats))
		}
		names := map[string]bool{}
		for _, s := range get(cats[0], "catalog", "streams").([]any) {
			name, _ := get(s, "name").(string)
			names[name] = true
		}
		for _, s := range streams {
			if !names[s] {
				return fmt.Errorf("the catalog has no stream %q", s)
			}
		}
		return only("CATALOG", "LOG", "TRACE")
	case "read":
		records, states, complete := map[string]int{}, map[string]int{}, map[string]bool{}
		for _, m := range byType["RECORD"] {
			records[get(m, "record", "stream").(string)]++
		}
		for _, m := range byType["STATE"] {
			if name, ok := get(m, "state", "stream", "stream_descriptor", "name").(string); ok {
				states[name]++
			}
		}
		for _, m := range byType["TRACE"] {
			if get(m, "trace", "stream_status", "status") == "COMPLETE" {
				complete[get(m, "trace", "stream_status", "stream_descriptor", "name").(string)] = true
			}
		}
		if len(streams) == 0 {
			return errors.New("read: name the streams that must be read with -streams")
		}
		for _, s := range streams {
			switch {
			case records[s] == 0:
				return fmt.Errorf("stream %q: no RECORD", s)
			case states[s] == 0:
				return fmt.Errorf("stream %q: no STATE", s)
			case !complete[s]:
				return fmt.Errorf("stream %q: no COMPLETE stream status", s)
			}
		}
		for s := range records {
			if !slices.Contains(streams, s) {
				return fmt.Errorf("records of stream %q, which is not in the configured catalog", s)
			}
		}
		return only("RECORD", "STATE", "LOG", "TRACE")
	}
	return fmt.Errorf("-expect: expected spec, check, discover or read, got %q", expect)
}

// get digs into decoded JSON: get(m, "record", "stream").
func get(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

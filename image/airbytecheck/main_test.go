package main

import (
	"strings"
	"testing"
)

// The published protocol schema, kept as test data (see testdata/README.md).
const schemaPath = "testdata/airbyte_protocol.json"

func TestValidate(t *testing.T) {
	schema, err := loadSchema(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, line string
		ok         bool
	}{
		{"record", `{"type":"RECORD","record":{"stream":"s","data":{"id":1},"emitted_at":1}}`, true},
		{"stream state", `{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"s"},"stream_state":{}}}}`, true},
		{"log", `{"type":"LOG","log":{"level":"INFO","message":"m"}}`, true},
		{"not an object", `[]`, false},
		{"not JSON", `{"type":`, false},
		{"two values", `{"type":"LOG","log":{"level":"INFO","message":"m"}} {}`, false},
		{"unknown type", `{"type":"SCHEMA","stream":"s"}`, false},
		{"record without its member", `{"type":"RECORD"}`, false},
		{"record without emitted_at", `{"type":"RECORD","record":{"stream":"s","data":{}}}`, false},
		{"data not an object", `{"type":"RECORD","record":{"stream":"s","data":[],"emitted_at":1}}`, false},
		{"log level outside the enum", `{"type":"LOG","log":{"level":"NOTICE","message":"m"}}`, false},
		{"connection status outside the enum", `{"type":"CONNECTION_STATUS","connectionStatus":{"status":"OK"}}`, false},
		{"failure type outside the enum", `{"type":"TRACE","trace":{"type":"ERROR","emitted_at":1,"error":{"message":"m","failure_type":"oops"}}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := validate(schema, strings.NewReader(tt.line+"\n"))
			if (err == nil) != tt.ok {
				t.Errorf("validate(%s) = %v, want ok=%v", tt.line, err, tt.ok)
			}
		})
	}
}

func TestExpectations(t *testing.T) {
	schema, err := loadSchema(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	const (
		log      = `{"type":"LOG","log":{"level":"INFO","message":"m"}}`
		spec     = `{"type":"SPEC","spec":{"connectionSpecification":{}}}`
		ok       = `{"type":"CONNECTION_STATUS","connectionStatus":{"status":"SUCCEEDED"}}`
		failed   = `{"type":"CONNECTION_STATUS","connectionStatus":{"status":"FAILED","message":"401"}}`
		catalog  = `{"type":"CATALOG","catalog":{"streams":[{"name":"a","json_schema":{},"supported_sync_modes":["full_refresh"]}]}}`
		recA     = `{"type":"RECORD","record":{"stream":"a","data":{},"emitted_at":1}}`
		recB     = `{"type":"RECORD","record":{"stream":"b","data":{},"emitted_at":1}}`
		stateA   = `{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"a"}}}}`
		doneA    = `{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1,"stream_status":{"stream_descriptor":{"name":"a"},"status":"COMPLETE"}}}`
		errTrace = `{"type":"TRACE","trace":{"type":"ERROR","emitted_at":1,"error":{"message":"boom","failure_type":"system_error"}}}`
	)
	tests := []struct {
		name, expect string
		streams      []string
		lines        []string
		ok           bool
	}{
		{"spec", "spec", nil, []string{spec}, true},
		{"no spec", "spec", nil, []string{log}, false},
		{"two specs", "spec", nil, []string{spec, spec}, false},
		{"check succeeded", "check", nil, []string{log, ok}, true},
		{"check failed", "check", nil, []string{failed}, false},
		{"catalog with the stream", "discover", []string{"a"}, []string{catalog}, true},
		{"catalog without the stream", "discover", []string{"b"}, []string{catalog}, false},
		{"read", "read", []string{"a"}, []string{recA, stateA, doneA}, true},
		{"read without state", "read", []string{"a"}, []string{recA, doneA}, false},
		{"read not completed", "read", []string{"a"}, []string{recA, stateA}, false},
		{"read of an unselected stream", "read", []string{"a"}, []string{recA, stateA, doneA, recB}, false},
		{"read with an error", "read", []string{"a"}, []string{recA, stateA, doneA, errTrace}, false},
		{"read naming no stream", "read", nil, []string{recA, stateA, doneA}, false},
		{"a catalog from read", "read", []string{"a"}, []string{recA, stateA, doneA, catalog}, false},
		{"unknown command", "write", nil, []string{log}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs, err := validate(schema, strings.NewReader(strings.Join(tt.lines, "\n")+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			err = expectations(tt.expect, tt.streams, msgs)
			if (err == nil) != tt.ok {
				t.Errorf("expectations = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

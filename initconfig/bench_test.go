package initconfig

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bigSpec is an OpenAPI document of ops list operations (and as many
// get-by-id ones), each with a schema of its own of 40 described
// properties, a $ref-shared envelope and parameters: about 12 KiB an
// operation, as in large real specs.
func bigSpec(ops int) []byte {
	paths := map[string]any{}
	schemas := map[string]any{
		"list_meta": map[string]any{"type": "object", "properties": map[string]any{"has_more": map[string]any{"type": "boolean"}, "url": map[string]any{"type": "string"}}},
	}
	desc := strings.Repeat("A property documented at length, as generated specs are. ", 4)
	for i := range ops {
		name := fmt.Sprintf("resource%04d", i)
		props := map[string]any{"id": map[string]any{"type": "string"}, "updated_at": map[string]any{"type": "string", "format": "date-time"},
			"owner": map[string]any{"$ref": fmt.Sprintf("#/components/schemas/resource%04d", (i+1)%ops)}}
		for p := range 40 {
			props[fmt.Sprintf("field_%02d", p)] = map[string]any{"type": []string{"string", "integer", "boolean", "number"}[p%4], "description": desc, "nullable": p%3 == 0}
		}
		schemas[name] = map[string]any{"type": "object", "required": []string{"id"}, "properties": props}
		paths["/v1/"+name+"s"] = map[string]any{"get": map[string]any{
			"parameters": []any{
				map[string]any{"name": "limit", "in": "query", "schema": map[string]any{"type": "integer", "maximum": 100}},
				map[string]any{"name": "starting_after", "in": "query", "schema": map[string]any{"type": "string"}},
				map[string]any{"name": "updated_since", "in": "query", "schema": map[string]any{"type": "string", "format": "date-time"}},
			},
			"responses": map[string]any{"200": map[string]any{"description": "A list.", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{
				"allOf": []any{map[string]any{"$ref": "#/components/schemas/list_meta"},
					map[string]any{"type": "object", "properties": map[string]any{"data": map[string]any{"type": "array", "items": map[string]any{"$ref": "#/components/schemas/" + name}}}}}}}}}},
		}}
		paths["/v1/"+name+"s/{id}"] = map[string]any{"get": map[string]any{
			"parameters": []any{map[string]any{"name": "id", "in": "path", "required": true, "schema": map[string]any{"type": "string"}}},
			"responses":  map[string]any{"200": map[string]any{"description": "One.", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/" + name}}}}},
		}}
	}
	b, _ := json.Marshal(map[string]any{"openapi": "3.0.3", "info": map[string]any{"title": "big", "version": "1"},
		"servers": []any{map[string]any{"url": "https://api.example.com"}}, "paths": paths, "components": map[string]any{"schemas": schemas}})
	return b
}

// BenchmarkFromOpenAPILarge generates a config from a 10 MB document of
// 1,700 operations (850 of them lists) and prints the time and the peak
// RSS of the process (VmHWM: the document, its model and the config).
func BenchmarkFromOpenAPILarge(b *testing.B) {
	data := bigSpec(850)
	file := filepath.Join(b.TempDir(), "big.json")
	os.WriteFile(file, data, 0o644)
	runtime.GC()
	b.ResetTimer()
	for b.Loop() {
		start, cpu0 := time.Now(), cpuTime()
		r, err := FromOpenAPI(context.Background(), data, file, Options{})
		if err != nil {
			b.Fatal(err)
		}
		out, err := r.Config.JSON()
		if err != nil {
			b.Fatal(err)
		}
		if len(r.Config.Streams) != 850 {
			b.Fatalf("%d streams, want 850", len(r.Config.Streams))
		}
		b.Logf("document %.1f MB, %d streams, config %.1f MB: %.2f s wall, %.2f s CPU, peak RSS %s",
			float64(len(data))/1e6, len(r.Config.Streams), float64(len(out))/1e6, time.Since(start).Seconds(), (cpuTime() - cpu0).Seconds(), peakRSS())
	}
}

// cpuTime is the CPU time the process has used (user + system): on a
// loaded machine the wall time says more about the other processes.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is the process's VmHWM from /proc (Linux), or "?".
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// recorder is a slog.Handler that keeps each record as one line: the
// level, the message and the attributes in order, key=value.
type recorder struct {
	level slog.Level
	mu    sync.Mutex
	lines []string
}

func (r *recorder) Enabled(_ context.Context, l slog.Level) bool { return l >= r.level }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	line := rec.Level.String() + " " + rec.Message
	rec.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, line)
	return nil
}

func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { panic("not used") }
func (r *recorder) WithGroup(string) slog.Handler      { panic("not used") }

func (r *recorder) Lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...)
}

func newReporter(logLevel, metricsLevel slog.Level) (Reporter, *recorder) {
	rec := &recorder{level: logLevel}
	return Reporter{Log: slog.New(rec), Level: metricsLevel}, rec
}

func TestRequest(t *testing.T) {
	tests := []struct {
		logLevel slog.Level
		status   int
		want     []string
	}{
		{slog.LevelDebug, 200, []string{`DEBUG METRIC: {"metric":"http_request_duration","tags":{"endpoint":"s","http_status_code":200,"status":"succeeded"},"type":"timer","value":0.25}`}},
		{slog.LevelDebug, 429, []string{`DEBUG METRIC: {"metric":"http_request_duration","tags":{"endpoint":"s","http_status_code":429,"status":"failed"},"type":"timer","value":0.25}`}},
		{slog.LevelDebug, 0, []string{`DEBUG METRIC: {"metric":"http_request_duration","tags":{"endpoint":"s","http_status_code":0,"status":"failed"},"type":"timer","value":0.25}`}},
		{slog.LevelInfo, 200, nil}, // a line a request is for debugging only
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%v/%d", tt.logLevel, tt.status), func(t *testing.T) {
			r, rec := newReporter(tt.logLevel, slog.LevelInfo)
			r.Request("s", tt.status, 250*time.Millisecond)
			if diff := cmp.Diff(tt.want, rec.Lines()); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCounterLevel(t *testing.T) {
	tests := []struct {
		logLevel, metricsLevel slog.Level
		want                   []string
	}{
		{slog.LevelInfo, slog.LevelInfo, []string{`INFO METRIC: {"metric":"record_count","tags":{"endpoint":"s"},"type":"counter","value":3}`}},
		{slog.LevelInfo, slog.LevelDebug, nil},
		{slog.LevelWarn, slog.LevelWarn, []string{`WARN METRIC: {"metric":"record_count","tags":{"endpoint":"s"},"type":"counter","value":3}`}},
	}
	for _, tt := range tests {
		t.Run(tt.logLevel.String()+"/"+tt.metricsLevel.String(), func(t *testing.T) {
			r, rec := newReporter(tt.logLevel, tt.metricsLevel)
			r.Counter("record_count", 3, map[string]any{"endpoint": "s"})
			if diff := cmp.Diff(tt.want, rec.Lines()); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatusClass(t *testing.T) {
	for status, want := range map[int]int{0: 0, 99: 0, 100: 1, 200: 2, 299: 2, 304: 3, 404: 4, 503: 5, 599: 5, 600: 0, -1: 0} {
		if got := StatusClass(status); got != want {
			t.Errorf("StatusClass(%d) = %d, want %d", status, got, want)
		}
	}
}

// lines splits what tests expect into lines, for cmp.
func lines(s string) []string { return strings.Split(strings.TrimSpace(s), "\n") }

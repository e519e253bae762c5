package runreport

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/tap-dev/tap/settings"
)

// summary is the run summary as one JSON document (--summary-json), for
// the dashboards a team already has.
type summary struct {
	Mode       string                   `json:"mode"`
	Start      time.Time                `json:"start"`
	End        time.Time                `json:"end"`
	ExitStatus int                      `json:"exit_status"`
	Error      string                   `json:"error,omitempty"`
	Streams    map[string]streamSummary `json:"streams"`
	Total      total                    `json:"total"`
}

type streamSummary struct {
	Records        int64              `json:"records"`
	Pages          int64              `json:"pages"`
	Requests       int64              `json:"requests"`
	ByStatusClass  map[string]int64   `json:"requests_by_status_class"`
	Retries        int                `json:"retries"`
	WaitsS         map[string]float64 `json:"waits_s"`
	DeadLetters    int64              `json:"dead_letters"`
	Drift          int                `json:"drift"`
	BookmarkBefore string             `json:"bookmark_before,omitempty"`
	BookmarkAfter  string             `json:"bookmark_after,omitempty"`
	Feed           *feedSummary       `json:"feed,omitempty"`
}

type feedSummary struct {
	Gaps       int64 `json:"gaps"`
	Silences   int64 `json:"silences"`
	Reconnects int64 `json:"reconnects"`
	Backfilled int64 `json:"backfilled"`
}

type total struct {
	Records        int64              `json:"records"`
	Requests       int                `json:"requests"`
	ByStatus       map[string]int     `json:"requests_by_status"`
	Retries        int                `json:"retries"`
	WaitsS         map[string]float64 `json:"waits_s"`
	DeadLetters    int64              `json:"dead_letters"`
	DeadLetterFile string             `json:"dead_letter_path,omitempty"`
}

// JSON renders the run summary of run, its secrets masked by red;
// deadLetters is the dead letters' file, named when the run set any
// aside.
func (r *Recorder) JSON(run Run, red *settings.Redactor, deadLetters string) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.stats
	s := summary{Mode: run.Mode, Start: run.Start.UTC(), End: run.End.UTC(), ExitStatus: run.Exit, Error: red.Redact(run.Error),
		Streams: map[string]streamSummary{},
		Total: total{Requests: st.Requests, ByStatus: map[string]int{}, Retries: st.Retries, WaitsS: waits(st.Waits.WaitSlot,
			st.Waits.WaitBucket, st.Waits.WaitRetryAfter, st.Waits.WaitBackoff, st.Waits.WaitBreaker)}}
	for code, n := range st.ByStatus {
		s.Total.ByStatus[strconv.Itoa(code)] = n
	}
	classes := []string{"no_response", "1xx", "2xx", "3xx", "4xx", "5xx"}
	for _, row := range r.rows {
		ss := streamSummary{Records: row.Records, Pages: row.Pages, Requests: row.Requests, ByStatusClass: map[string]int64{},
			Retries: row.Retries, DeadLetters: row.DeadLetters, Drift: row.Drift,
			WaitsS:         waits(row.Waits.WaitSlot, row.Waits.WaitBucket, row.Waits.WaitRetryAfter, row.Waits.WaitBackoff, row.Waits.WaitBreaker),
			BookmarkBefore: red.Redact(r.before[row.Stream]), BookmarkAfter: red.Redact(r.after[row.Stream])}
		for i, n := range row.ByClass {
			if n > 0 {
				ss.ByStatusClass[classes[i]] = n
			}
		}
		if row.Feed {
			ss.Feed = &feedSummary{Gaps: row.Gaps, Silences: row.Silences, Reconnects: row.Reconnects, Backfilled: row.Backfilled}
		}
		s.Streams[row.Stream] = ss
		s.Total.Records += row.Records
		s.Total.DeadLetters += row.DeadLetters
	}
	if s.Total.DeadLetters > 0 {
		s.Total.DeadLetterFile = deadLetters
	}
	b, err := json.MarshalIndent(s, "", "  ")
	return append(b, '\n'), err
}

func waits(slot, bucket, retryAfter, backoff, breaker time.Duration) map[string]float64 {
	return map[string]float64{"slot": slot.Seconds(), "bucket": bucket.Seconds(), "retry_after": retryAfter.Seconds(),
		"backoff": backoff.Seconds(), "breaker": breaker.Seconds()}
}

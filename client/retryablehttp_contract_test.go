package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-retryablehttp"
)

// TestRetryablehttpHookOrder pins the order in which go-retryablehttp calls
// the hooks the client is built on (call.startAttempt, checkRetry, handle,
// backoff, prepareRetry, errorHandler), against the real library and a
// loopback server. The client depends on it: checkRetry is called once
// after the round trip, before the response handler has read the body,
// and once after, when it answers from the handler's verdict; the loop
// ends in ErrorHandler unless it succeeds, except when the context ends
// during the library's own wait. An upgrade that changes any of this
// fails here first.
func TestRetryablehttpHookOrder(t *testing.T) {
	errHandler := errors.New("handler: not accepted")
	errCheck := errors.New("check: stop")
	type script struct {
		statuses []int // per attempt; 0 closes the connection without a response
		// retry says whether the handler's verdict on a status is "retry".
		retry func(status int) bool
		// cancelInBackoff ends the context in the Backoff hook, which
		// returns an hour: the library must not wait it out.
		cancelInBackoff bool
		// failPrepare makes PrepareRetry fail.
		failPrepare bool
	}
	transient := func(s int) bool { return s >= 500 }
	for _, c := range []struct {
		name    string
		s       script
		want    []string
		wantErr string // "" for success
	}{
		{
			name: "503 then 200",
			s:    script{statuses: []int{503, 200}, retry: transient},
			want: []string{
				"request 0",
				"check status=503 err=<nil>", "handler 503", "check status=503 err=handler: not accepted",
				"backoff 0 status=503", "prepare",
				"request 1",
				"check status=200 err=<nil>", "handler 200", "check status=200 err=<nil>",
			},
		},
		{
			name: "permanent 404",
			s:    script{statuses: []int{404}, retry: transient},
			want: []string{
				"request 0",
				"check status=404 err=<nil>", "handler 404", "check status=404 err=handler: not accepted",
				"errorHandler status=404 err=check: stop attempts=1",
			},
			wantErr: "from errorHandler",
		},
		{
			name: "transport errors until the attempts run out",
			s:    script{statuses: []int{0, 0}, retry: transient},
			want: []string{
				"request 0", "check status=none err=transport",
				"backoff 0 status=none", "prepare",
				"request 1", "check status=none err=transport",
				"errorHandler status=none err=transport attempts=2",
			},
			wantErr: "from errorHandler",
		},
		{
			name: "retryable until the attempts run out",
			s:    script{statuses: []int{503, 503}, retry: transient},
			want: []string{
				"request 0",
				"check status=503 err=<nil>", "handler 503", "check status=503 err=handler: not accepted",
				"backoff 0 status=503", "prepare",
				"request 1",
				"check status=503 err=<nil>", "handler 503", "check status=503 err=handler: not accepted",
				"errorHandler status=503 err=handler: not accepted attempts=2",
			},
			wantErr: "from errorHandler",
		},
		{
			name: "PrepareRetry fails",
			s:    script{statuses: []int{503, 200}, retry: transient, failPrepare: true},
			want: []string{
				"request 0",
				"check status=503 err=<nil>", "handler 503", "check status=503 err=handler: not accepted",
				"backoff 0 status=503", "prepare",
				"errorHandler status=503 err=prepare: failed attempts=1",
			},
			wantErr: "from errorHandler",
		},
		{
			name: "context ends during the library's wait",
			s:    script{statuses: []int{503, 200}, retry: transient, cancelInBackoff: true},
			want: []string{
				"request 0",
				"check status=503 err=<nil>", "handler 503", "check status=503 err=handler: not accepted",
				"backoff 0 status=503",
			},
			wantErr: context.Canceled.Error(), // bare, without ErrorHandler
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				i := int(n.Add(1)) - 1
				if i >= len(c.s.statuses) || c.s.statuses[i] == 0 {
					conn, _, err := w.(http.Hijacker).Hijack()
					if err == nil {
						conn.Close()
					}
					return
				}
				w.WriteHeader(c.s.statuses[i])
				io.WriteString(w, "body")
			}))
			defer srv.Close()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()

			var got []string
			status := func(resp *http.Response) string {
				if resp == nil {
					return "none"
				}
				return fmt.Sprint(resp.StatusCode)
			}
			handled, verdictRetry := false, false
			rc := &retryablehttp.Client{
				HTTPClient: srv.Client(),
				RetryMax:   len(c.s.statuses) - 1,
				RequestLogHook: func(_ retryablehttp.Logger, _ *http.Request, i int) {
					handled = false
					got = append(got, fmt.Sprint("request ", i))
				},
				CheckRetry: func(_ context.Context, resp *http.Response, err error) (bool, error) {
					e := fmt.Sprint(err)
					if resp == nil && err != nil {
						e = "transport"
					}
					got = append(got, fmt.Sprintf("check status=%s err=%s", status(resp), e))
					switch {
					case !handled && err == nil:
						return false, nil // let the handler read the body and decide
					case !handled: // a transport error
						return true, nil
					case verdictRetry:
						return true, nil
					case err != nil:
						return false, errCheck
					}
					return false, nil
				},
				Backoff: func(_, _ time.Duration, attempt int, resp *http.Response) time.Duration {
					got = append(got, fmt.Sprintf("backoff %d status=%s", attempt, status(resp)))
					if c.s.cancelInBackoff {
						cancel()
						return time.Hour
					}
					return 0
				},
				PrepareRetry: func(*http.Request) error {
					got = append(got, "prepare")
					if c.s.failPrepare {
						return errors.New("prepare: failed")
					}
					return nil
				},
				ErrorHandler: func(resp *http.Response, err error, attempts int) (*http.Response, error) {
					e := fmt.Sprint(err)
					if resp == nil && err != nil && err != errCheck {
						e = "transport"
					}
					got = append(got, fmt.Sprintf("errorHandler status=%s err=%s attempts=%d", status(resp), e, attempts))
					if resp != nil {
						resp.Body.Close()
					}
					return nil, errors.New("from errorHandler")
				},
			}
			req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.SetResponseHandler(func(resp *http.Response) error {
				handled = true
				got = append(got, "handler "+status(resp))
				body, err := io.ReadAll(resp.Body)
				if err != nil || string(body) != "body" {
					t.Errorf("the handler read %q, %v: the body must still be unread", body, err)
				}
				verdictRetry = c.s.retry(resp.StatusCode)
				if resp.StatusCode == http.StatusOK {
					return nil
				}
				return errHandler
			})
			resp, err := rc.Do(req)
			if resp != nil {
				resp.Body.Close()
			}
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("Do: %v, want success", err)
			case c.wantErr != "" && (err == nil || err.Error() != c.wantErr):
				t.Errorf("Do: %v, want %q", err, c.wantErr)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("hook order changed (-want +got):\n%s", d)
			}
		})
	}
}

package client

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
)

// consume hands a 2xx body to Request.Consume as it arrives and classifies
// the attempt by what came of it.
func (cs *call) consume(resp *http.Response) outcome {
	o := outcome{status: resp.StatusCode, header: resp.Header, v: vOK}
	body := &watchedBody{r: resp.Body}
	err := cs.req.Consume(body, resp.Header)
	if err == nil {
		return o
	}
	if cerr := cs.ctx.Err(); cerr != nil {
		return outcome{v: vCanceled, err: cerr}
	}
	if body.err != nil {
		// The body broke while it was read: the read error, whatever
		// the consumer made of it, says why.
		return cs.classifyResponse(resp, nil, body.err)
	}
	o.rejected(err, resp.Header)
	return o
}

// rejected makes o the outcome of a 2xx body its checker or consumer
// rejected with err: retried if err is Transient, else permanent, naming
// the Content-Type (a body of the wrong kind is the usual cause).
func (o *outcome) rejected(err error, h http.Header) {
	o.err = err
	o.v = vPermanent
	if IsTransient(err) {
		o.v = vRetry
	} else if ct := h.Get("Content-Type"); ct != "" {
		o.err = fmt.Errorf("%w (Content-Type %q)", err, ct)
	}
}

// watchedBody remembers the first error reading a body, other than EOF.
type watchedBody struct {
	r   io.Reader
	err error
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}

// readBody reads a whole body, up to maxBodyBytes+1, into one buffer
// sized from Content-Length (io.ReadAll regrows its buffer, and that
// showed per page): the request's own Buffer for a 2xx, else a new one.
func (cs *call) readBody(resp *http.Response) ([]byte, error) {
	size := int64(bytes.MinRead)
	if n := resp.ContentLength; n > 0 && n <= maxBodyBytes {
		size += n
	}
	var b []byte
	if cs.req.Buffer != nil && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		b = cs.req.Buffer(int(size))[:0]
	} else {
		b = make([]byte, 0, size)
	}
	buf := bytes.NewBuffer(b)
	_, err := buf.ReadFrom(io.LimitReader(resp.Body, maxBodyBytes+1))
	return buf.Bytes(), err
}

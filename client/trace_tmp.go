package client

import (
	"fmt"
	"os"
	"sync"
	"time"
)

var traceMu sync.Mutex
var traceF *os.File
var traceStart = time.Now()

func init() {
	if p := os.Getenv("TAP_TRACE"); p != "" {
		traceF, _ = os.Create(p)
	}
}

func tracef(format string, args ...any) {
	if traceF == nil {
		return
	}
	traceMu.Lock()
	defer traceMu.Unlock()
	fmt.Fprintf(traceF, "%8.3f ", time.Since(traceStart).Seconds())
	fmt.Fprintf(traceF, format+"\n", args...)
}

func Tracef(format string, args ...any) { tracef(format, args...) }

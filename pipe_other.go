//go:build !linux

package main

import "os"

// enlargePipe is Linux only (F_SETPIPE_SZ).
func enlargePipe(*os.File) {}

// Package schemas holds the JSON Schemas of the bundled demo streams, so
// that the sample config runs from any directory and inside the image.
package schemas

import "embed"

// FS holds one NAME.json schema per demo stream.
//
//go:embed *.json
var FS embed.FS

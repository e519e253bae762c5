// Package codec reads and writes the JSON that flows through the tap:
// Decode turns a response body into maps, slices and json.Number in one
// pass; Append and AppendObject write decoded values back without
// reflection; Marshal is encoding/json without HTML escaping, for
// everything off the hot path. Each writes exactly what encoding/json
// would, so a target sees the same bytes whichever path wrote them.
//
// The package imports nothing of the project: it is the bottom of the
// import graph, under tap, streams and demoapi.
package codec

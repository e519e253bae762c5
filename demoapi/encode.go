package demoapi

import (
	"github.com/tap-dev/tap/codec"
)

// appendError appends the error body every REST answer uses:
// {"error":{"message":"..."}}.
func appendError(b []byte, msg string) []byte {
	b = append(b, `{"error":{"message":`...)
	b = codec.AppendString(b, msg)
	return append(b, '}', '}')
}

// appendGraphQLError appends the GraphQL error body: {"errors":[{"message":"..."}]}.
func appendGraphQLError(b []byte, msg string) []byte {
	b = append(b, `{"errors":[{"message":`...)
	b = codec.AppendString(b, msg)
	return append(b, '}', ']', '}')
}

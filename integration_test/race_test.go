//go:build race

package integration_test

// raceEnabled is true when the suite runs with -race: the binary under
// test is then built with it too, so that a data race in the tap fails
// the end-to-end tests that provoke it.
const raceEnabled = true

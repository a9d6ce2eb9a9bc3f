//go:build race

package main

// raceEnabled: the tests build the rpchost binary with -race too, so the
// processes they start are checked as well.
const raceEnabled = true

//go:build race

package main

// raceBuild makes TestMain build the binary with the race detector when
// the tests run with it, so that the server's own races are caught too.
const raceBuild = true

//go:build !race

package denylist

// raceSlowdown is how much slower the race detector makes a check.
const raceSlowdown = 1

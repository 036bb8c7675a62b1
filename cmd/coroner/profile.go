package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfiles honours CORONER_CPUPROFILE and CORONER_MEMPROFILE, for the
// benchmark script and for anyone asked to profile a slow analysis; the
// returned function writes the profiles.
func startProfiles() func() {
	var stop []func()
	if path := os.Getenv("CORONER_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				stop = append(stop, func() { pprof.StopCPUProfile(); f.Close() })
			} else {
				f.Close()
			}
		}
	}
	if path := os.Getenv("CORONER_MEMPROFILE"); path != "" {
		stop = append(stop, func() {
			if f, err := os.Create(path); err == nil {
				runtime.GC()
				_ = pprof.WriteHeapProfile(f)
				f.Close()
			}
		})
	}
	return func() {
		for _, s := range stop {
			s()
		}
	}
}

package pathglob

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
)

// BenchmarkAdversarialPackage runs window patterns (a class, then a run
// of "?": the automaton must remember where each class match was) over a
// package whose 20,000 paths are random 60-byte names, so nearly every
// byte makes a new state: the case the hand-over to the NFA is for.
//
//	go test -run XXX -bench AdversarialPackage -benchtime 5x ./internal/pathglob/
func BenchmarkAdversarialPackage(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	paths := make([]string, 20000)
	for i := range paths {
		var sb strings.Builder
		for j := 0; j < 60; j++ {
			if j%20 == 19 {
				sb.WriteByte('/')
			} else {
				sb.WriteByte(byte('a' + r.IntN(18)))
			}
		}
		paths[i] = sb.String()
	}
	for _, p := range []string{"**/*[a-i]" + strings.Repeat("?", 12) + "*", "**/*[a-i]" + strings.Repeat("?", 18) + "*", strings.Repeat("*[a-i]", 20) + "*", "**/" + strings.Repeat("*[a-i]?", 15) + "*"} {
		b.Run(p[:12], func(b *testing.B) {
			cpu0 := cpuSeconds()
			for b.Loop() {
				m, err := Compile([]string{p}, DefaultLimits())
				if err != nil {
					b.Fatal(err)
				}
				Select(context.Background(), m, paths, func(s string) string { return s })
			}
			b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
		})
	}
}

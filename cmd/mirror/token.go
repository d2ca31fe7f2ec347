package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/pkgscope/pkgscope/internal/auth"
)

// hashTokenMain is `mirror hash-token`: it reads tokens from in, one per
// line, and prints each one's stored form (sha256:HEX) for a tokens file
// that should not hold tokens in the clear. Reading stdin keeps the token
// out of the shell history and the process list.
//
//	openssl rand -hex 32 | tee agent.token | mirror hash-token >> tokens
func hashTokenMain(in io.Reader, out, errOut io.Writer) int {
	sc := bufio.NewScanner(in)
	n := 0
	for line := 1; sc.Scan(); line++ {
		tok := strings.TrimSpace(sc.Text())
		if tok == "" {
			continue
		}
		if _, err := auth.ParseList(tok); err != nil || strings.ContainsAny(tok, ":,@") {
			fmt.Fprintf(errOut, "mirror hash-token: line %d is not a token (use letters, digits and - . _ ~ + /)\n", line)
			return 2
		}
		fmt.Fprintln(out, auth.Hash(tok))
		n++
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(errOut, "mirror hash-token: reading stdin:", err)
		return 1
	}
	if n == 0 {
		fmt.Fprintln(errOut, "mirror hash-token: no token on stdin")
		return 2
	}
	return 0
}

package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/pkgscope/pkgscope/internal/auth"
)

const hashTokenUsage = `Usage: pkgscope hash-token < TOKENS

Reads bearer tokens on stdin, one per line, and prints each one's stored
form (sha256:HEX) for a --tokens-file that should not hold tokens in the
clear; append :@scope,... to a line to limit its token to those scopes.
Stdin keeps tokens out of the shell history and the process list:

  openssl rand -hex 32 | tee agent.token | pkgscope hash-token >> tokens
`

// hashTokenMain is `pkgscope hash-token`: it reads tokens from in, one
// per line, and prints each one's stored form (sha256:HEX) for a tokens
// file that should not hold tokens in the clear. Reading stdin keeps the
// token out of the shell history and the process list. It takes no
// arguments but -h.
func hashTokenMain(args []string, in io.Reader, out, errOut io.Writer) int {
	if len(args) > 0 {
		if a := args[0]; len(args) == 1 && (a == "-h" || a == "--help" || a == "-help") {
			fmt.Fprint(out, hashTokenUsage)
			return 0
		}
		// An argument may be a token: never echo it.
		fmt.Fprint(errOut, "pkgscope hash-token: takes no arguments; give tokens on stdin\n\n"+hashTokenUsage)
		return 2
	}
	sc := bufio.NewScanner(in)
	n := 0
	for line := 1; sc.Scan(); line++ {
		tok := strings.TrimSpace(sc.Text())
		if tok == "" {
			continue
		}
		if _, err := auth.ParseList(tok); err != nil || strings.ContainsAny(tok, ":,@") {
			fmt.Fprintf(errOut, "pkgscope hash-token: line %d is not a token (use letters, digits and - . _ ~ + /)\n", line)
			return 2
		}
		fmt.Fprintln(out, auth.Hash(tok))
		n++
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(errOut, "pkgscope hash-token: reading stdin:", err)
		return 1
	}
	if n == 0 {
		fmt.Fprintln(errOut, "pkgscope hash-token: no token on stdin")
		return 2
	}
	return 0
}

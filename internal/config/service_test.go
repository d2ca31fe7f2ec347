package config

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestServiceSettings(t *testing.T) {
	env := envOf(map[string]string{
		"PKGSCOPE_TOKENS":       "tok-secret-1,tok-secret-2:@myorg",
		"PKGSCOPE_TOKENS_FILE":  "/etc/pkgscope/tokens",
		"PKGSCOPE_METRICS_ADDR": ":9100",
	})
	c, err := Load("mirror", []string{"--pprof-addr", "127.0.0.1:6060"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if string(c.Tokens) != "tok-secret-1,tok-secret-2:@myorg" || c.TokensFile != "/etc/pkgscope/tokens" {
		t.Errorf("tokens: file %q, list set %v", c.TokensFile, c.Tokens != "")
	}
	if c.MetricsAddr != ":9100" || c.PprofAddr != "127.0.0.1:6060" {
		t.Errorf("side addresses %q %q", c.MetricsAddr, c.PprofAddr)
	}
	// Tokens come from the environment only: a flag would show them in ps.
	if _, err := Load("mirror", []string{"--tokens", "x"}, envOf(nil)); err == nil {
		t.Error("a --tokens flag was accepted")
	}
	// A printed or logged Config never shows them.
	var out bytes.Buffer
	fmt.Fprintf(&out, "%v %+v %#v %s", c, c, c, c.Tokens)
	slog.New(slog.NewJSONHandler(&out, nil)).Info("cfg", "cfg", c, "tokens", c.Tokens)
	slog.New(slog.NewTextHandler(&out, nil)).Info("cfg", "cfg", c, "tokens", c.Tokens)
	if strings.Contains(out.String(), "tok-secret") {
		t.Errorf("the tokens were printed: %s", out.String())
	}
}

func TestSideAddressesMustDifferFromAddr(t *testing.T) {
	for _, flag := range []string{"--metrics-addr", "--pprof-addr"} {
		_, err := Load("mirror", []string{"--addr", "127.0.0.1:7878", flag, "127.0.0.1:7878"}, envOf(nil))
		if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(flag, "--")) {
			t.Errorf("%s equal to addr: %v, want an error naming it", flag, err)
		}
	}
	if _, err := Load("mirror", []string{"--metrics-addr", ":9100", "--pprof-addr", ":9100"}, envOf(nil)); err != nil {
		t.Errorf("metrics and pprof sharing a listener: %v", err)
	}
}

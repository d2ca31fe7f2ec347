package config

import (
	"strings"
	"testing"
	"time"
)

func TestRedisSettings(t *testing.T) {
	c, err := Load("mirror", []string{"--redis-timeout", "50ms"}, envOf(map[string]string{
		"REDIS_URL":                      "redis://127.0.0.1:6379/2",
		"PKGSCOPE_RATE_LIMIT_PER_MINUTE": "600",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.RedisURL != "redis://127.0.0.1:6379/2" || c.RedisTimeout != 50*time.Millisecond || c.RateLimitPerMinute != 600 {
		t.Errorf("settings not applied: %q %s %d", c.RedisURL, c.RedisTimeout, c.RateLimitPerMinute)
	}
	if c.LockTTL() != c.FillTimeout+30*time.Second {
		t.Errorf("LockTTL = %s, want fill-timeout + 30s", c.LockTTL())
	}
	// PKGSCOPE_REDIS_URL wins over REDIS_URL.
	c, err = Load("mirror", nil, envOf(map[string]string{"REDIS_URL": "redis://a:1", "PKGSCOPE_REDIS_URL": "redis://b:2"}))
	if err != nil || c.RedisURL != "redis://b:2" {
		t.Errorf("RedisURL = %q, %v", c.RedisURL, err)
	}
	// Unset: no Redis, and the defaults still validate.
	if c, err := Load("mirror", nil, envOf(nil)); err != nil || c.RedisURL != "" {
		t.Errorf("without Redis: %q, %v", c.RedisURL, err)
	}
}

func TestRedisSettingErrorsNameTheSetting(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--rate-limit-per-minute", "60"}, "rate-limit-per-minute needs redis-url"},
		{[]string{"--redis-url", "http://x"}, "redis-url must start with"},
		{[]string{"--redis-url", "redis://x", "--redis-timeout", "0s"}, "redis-timeout must be positive"},
		{[]string{"--redis-url", "redis://x", "--redis-lock-ttl", "1m"}, "redis-lock-ttl (1m0s) must be longer than fill-timeout"},
		{[]string{"--cache-local-bytes", "-1"}, "cache-local-bytes must not be negative"},
		{[]string{"--rate-limit-burst", "-5"}, "rate-limit-burst must not be negative"},
	}
	for _, tc := range cases {
		_, err := Load("mirror", tc.args, envOf(nil))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%v) = %v, want an error mentioning %q", tc.args, err, tc.want)
		}
	}
}

// Package config is the mirror's one typed configuration: defaults in one
// place, each setting overridable by a flag and an environment variable,
// validated at load with messages that name the setting to fix.
package config

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Config is everything the mirror needs to start.
type Config struct {
	// Addr is the listen address of the HTTP API.
	Addr string
	// DataDir holds the embedded store and local caches.
	DataDir string
	// DatabaseURL selects the Postgres store; empty means the embedded one.
	DatabaseURL string
	// ProjectDir is where npm's project .npmrc is looked for.
	ProjectDir string

	// MaxBodyBytes caps a request body.
	MaxBodyBytes int64
	// ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout bound
	// the HTTP server; WriteTimeout must outlast FillTimeout, since a cold
	// request waits for its ingest.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// ShutdownTimeout is how long in-flight requests get on SIGTERM.
	ShutdownTimeout time.Duration
	// FillTimeout bounds one miss: packument, tarball, ingest, commit.
	FillTimeout time.Duration

	// PackumentTTL is how long resolved dist-tags and version lists are
	// cached; exact versions are immutable and cached for good.
	PackumentTTL time.Duration
	// UpstreamTimeout bounds one packument request; TarballTimeout one
	// tarball download.
	UpstreamTimeout, TarballTimeout time.Duration
	// MaxTarballBytes caps a compressed tarball download.
	MaxTarballBytes int64
	// AllowedTarballHosts are hosts besides the registry's that
	// dist.tarball may point at (comma-separated in the environment).
	AllowedTarballHosts []string

	// Ingest caps: total unpacked bytes, regular files, tar entries, one
	// file's size.
	MaxUnpackedBytes int64
	MaxFiles         int
	MaxEntries       int
	MaxFileBytes     int64

	// Read: DefaultReadLimit lines when none is asked, at most
	// MaxReadLimit; lines wider than MaxLineWidth bytes are cut with a
	// marker; one read returns at most MaxReadBytes of content.
	DefaultReadLimit, MaxReadLimit, MaxLineWidth int
	MaxReadBytes                                 int

	// Glob: patterns per request, bytes per pattern, brace groups per
	// pattern and alternatives they may expand to.
	MaxGlobPatterns, MaxGlobPatternBytes, MaxGlobBraceGroups, MaxGlobAlternatives int
}

// Default returns the defaults. Each is explained where the setting is
// registered in Load.
func Default() Config {
	return Config{
		Addr:                "127.0.0.1:7878",
		DataDir:             defaultDataDir(),
		MaxBodyBytes:        1 << 20,
		ReadHeaderTimeout:   10 * time.Second,
		ReadTimeout:         30 * time.Second,
		WriteTimeout:        6 * time.Minute,
		IdleTimeout:         2 * time.Minute,
		ShutdownTimeout:     30 * time.Second,
		FillTimeout:         5 * time.Minute,
		PackumentTTL:        5 * time.Minute,
		UpstreamTimeout:     30 * time.Second,
		TarballTimeout:      4 * time.Minute,
		MaxTarballBytes:     256 << 20,
		MaxUnpackedBytes:    1 << 30,
		MaxFiles:            100_000,
		MaxEntries:          200_000,
		MaxFileBytes:        256 << 20,
		DefaultReadLimit:    2000,
		MaxReadLimit:        20_000,
		MaxLineWidth:        2000,
		MaxReadBytes:        512 << 10,
		MaxGlobPatterns:     64,
		MaxGlobPatternBytes: 512,
		MaxGlobBraceGroups:  8,
		MaxGlobAlternatives: 256,
	}
}

func defaultDataDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "pkgscope")
	}
	return ".pkgscope"
}

// Load builds a Config from defaults, then the environment, then flags in
// args (flags win). getenv is os.Getenv outside tests.
func Load(name string, args []string, getenv func(string) string) (Config, error) {
	c := Default()
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	b := binder{fs: fs, getenv: getenv}

	b.str(&c.Addr, "addr", "PKGSCOPE_ADDR", "listen address of the HTTP API")
	b.str(&c.DataDir, "data-dir", "PKGSCOPE_DATA_DIR", "directory of the embedded store and local caches")
	b.str(&c.DatabaseURL, "database-url", "PKGSCOPE_DATABASE_URL", "Postgres URL (also DATABASE_URL); empty means the embedded store")
	if c.DatabaseURL == "" {
		c.DatabaseURL = getenv("DATABASE_URL")
	}
	b.str(&c.ProjectDir, "project-dir", "PKGSCOPE_PROJECT_DIR", "where the project .npmrc is read from (default: the working directory)")

	b.bytes(&c.MaxBodyBytes, "max-body-bytes", "PKGSCOPE_MAX_BODY_BYTES", "largest request body")
	b.dur(&c.ReadHeaderTimeout, "read-header-timeout", "PKGSCOPE_READ_HEADER_TIMEOUT", "time to read request headers")
	b.dur(&c.ReadTimeout, "read-timeout", "PKGSCOPE_READ_TIMEOUT", "time to read a whole request")
	b.dur(&c.WriteTimeout, "write-timeout", "PKGSCOPE_WRITE_TIMEOUT", "time to write a response, including a cold fill")
	b.dur(&c.IdleTimeout, "idle-timeout", "PKGSCOPE_IDLE_TIMEOUT", "keep-alive idle time")
	b.dur(&c.ShutdownTimeout, "shutdown-timeout", "PKGSCOPE_SHUTDOWN_TIMEOUT", "grace period for in-flight requests on shutdown")
	b.dur(&c.FillTimeout, "fill-timeout", "PKGSCOPE_FILL_TIMEOUT", "time for one miss: fetch, verify, ingest, commit")

	b.dur(&c.PackumentTTL, "packument-ttl", "PKGSCOPE_PACKUMENT_TTL", "how long dist-tags and version lists are cached")
	b.dur(&c.UpstreamTimeout, "upstream-timeout", "PKGSCOPE_UPSTREAM_TIMEOUT", "time for one packument request")
	b.dur(&c.TarballTimeout, "tarball-timeout", "PKGSCOPE_TARBALL_TIMEOUT", "time for one tarball download")
	b.bytes(&c.MaxTarballBytes, "max-tarball-bytes", "PKGSCOPE_MAX_TARBALL_BYTES", "largest compressed tarball")
	b.list(&c.AllowedTarballHosts, "allowed-tarball-hosts", "PKGSCOPE_ALLOWED_TARBALL_HOSTS", "comma-separated hosts besides the registry's that dist.tarball may name")

	b.bytes(&c.MaxUnpackedBytes, "max-unpacked-bytes", "PKGSCOPE_MAX_UNPACKED_BYTES", "largest unpacked package")
	b.int(&c.MaxFiles, "max-files", "PKGSCOPE_MAX_FILES", "most regular files in a package")
	b.int(&c.MaxEntries, "max-entries", "PKGSCOPE_MAX_ENTRIES", "most tar entries in a package")
	b.bytes(&c.MaxFileBytes, "max-file-bytes", "PKGSCOPE_MAX_FILE_BYTES", "largest single file")

	b.int(&c.DefaultReadLimit, "default-read-limit", "PKGSCOPE_DEFAULT_READ_LIMIT", "lines a read returns when no limit is asked")
	b.int(&c.MaxReadLimit, "max-read-limit", "PKGSCOPE_MAX_READ_LIMIT", "most lines one read may ask for")
	b.int(&c.MaxLineWidth, "max-line-width", "PKGSCOPE_MAX_LINE_WIDTH", "bytes of a line a read shows before cutting it")
	b.int(&c.MaxReadBytes, "max-read-bytes", "PKGSCOPE_MAX_READ_BYTES", "most content bytes one read returns")

	b.int(&c.MaxGlobPatterns, "max-glob-patterns", "PKGSCOPE_MAX_GLOB_PATTERNS", "most glob patterns per request")
	b.int(&c.MaxGlobPatternBytes, "max-glob-pattern-bytes", "PKGSCOPE_MAX_GLOB_PATTERN_BYTES", "longest glob pattern")
	b.int(&c.MaxGlobBraceGroups, "max-glob-brace-groups", "PKGSCOPE_MAX_GLOB_BRACE_GROUPS", "most {…} groups in one glob")
	b.int(&c.MaxGlobAlternatives, "max-glob-alternatives", "PKGSCOPE_MAX_GLOB_ALTERNATIVES", "most alternatives a glob's braces may expand to")

	if err := errors.Join(b.errs...); err != nil {
		return c, err
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	return c, c.Validate()
}

// Validate checks the settings together, naming the one to fix.
func (c Config) Validate() error {
	var errs []error
	positive := func(name string, v int64) {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %d", name, v))
		}
	}
	positive("max-body-bytes", c.MaxBodyBytes)
	positive("max-tarball-bytes", c.MaxTarballBytes)
	positive("max-unpacked-bytes", c.MaxUnpackedBytes)
	positive("max-files", int64(c.MaxFiles))
	positive("max-entries", int64(c.MaxEntries))
	positive("max-file-bytes", c.MaxFileBytes)
	positive("default-read-limit", int64(c.DefaultReadLimit))
	positive("max-read-limit", int64(c.MaxReadLimit))
	positive("max-line-width", int64(c.MaxLineWidth))
	positive("max-read-bytes", int64(c.MaxReadBytes))
	positive("max-glob-patterns", int64(c.MaxGlobPatterns))
	positive("max-glob-pattern-bytes", int64(c.MaxGlobPatternBytes))
	positive("max-glob-alternatives", int64(c.MaxGlobAlternatives))
	if c.DefaultReadLimit > c.MaxReadLimit {
		errs = append(errs, fmt.Errorf("default-read-limit (%d) is above max-read-limit (%d)", c.DefaultReadLimit, c.MaxReadLimit))
	}
	if c.WriteTimeout <= c.FillTimeout {
		errs = append(errs, fmt.Errorf("write-timeout (%s) must be longer than fill-timeout (%s): a cold request waits for its fill", c.WriteTimeout, c.FillTimeout))
	}
	if c.DatabaseURL == "" && c.DataDir == "" {
		errs = append(errs, errors.New("data-dir must be set when no database-url is given (the embedded store lives there)"))
	}
	return errors.Join(errs...)
}

// binder registers a flag whose default is taken from an environment
// variable when set, collecting parse errors that name the variable.
type binder struct {
	fs     *flag.FlagSet
	getenv func(string) string
	errs   []error
}

func (b *binder) env(name string, parse func(string) error) {
	if v := b.getenv(name); v != "" {
		if err := parse(v); err != nil {
			b.errs = append(b.errs, fmt.Errorf("environment variable %s=%q: %v", name, v, err))
		}
	}
}

func (b *binder) str(p *string, flagName, envName, usage string) {
	b.env(envName, func(v string) error { *p = v; return nil })
	b.fs.StringVar(p, flagName, *p, usage+" ($"+envName+")")
}

func (b *binder) list(p *[]string, flagName, envName, usage string) {
	set := func(v string) error {
		*p = nil
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				*p = append(*p, s)
			}
		}
		return nil
	}
	b.env(envName, set)
	b.fs.Func(flagName, usage+" ($"+envName+")", set)
}

func (b *binder) int(p *int, flagName, envName, usage string) {
	b.env(envName, func(v string) error {
		n, err := strconv.Atoi(v)
		*p = n
		return err
	})
	b.fs.IntVar(p, flagName, *p, usage+" ($"+envName+")")
}

func (b *binder) bytes(p *int64, flagName, envName, usage string) {
	b.env(envName, func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		*p = n
		return err
	})
	b.fs.Int64Var(p, flagName, *p, usage+" in bytes ($"+envName+")")
}

func (b *binder) dur(p *time.Duration, flagName, envName, usage string) {
	b.env(envName, func(v string) error {
		d, err := time.ParseDuration(v)
		*p = d
		return err
	})
	b.fs.DurationVar(p, flagName, *p, usage+" ($"+envName+")")
}

package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/pkgscope/pkgscope/internal/config"
)

// compose is the part of the Compose file format these tests read.
type compose struct {
	Name     string
	Services map[string]service
	Secrets  map[string]struct{ File string }
	Volumes  map[string]any
}

type service struct {
	Image       string
	Build       any
	Command     []string
	Environment map[string]string
	Ports       []string
	Volumes     []string
	Secrets     []string
	DependsOn   map[string]struct{ Condition string } `yaml:"depends_on"`
	Healthcheck *struct {
		Test    []string
		Disable bool
	}
}

// testEnv stands for the user's environment when the file is
// interpolated. The registry URL is a closed loopback port: no registry
// host is ever written in the repository.
var testEnv = map[string]string{"NPM_CONFIG_REGISTRY": "http://127.0.0.1:9/"}

func load(t *testing.T) compose {
	t.Helper()
	raw, err := os.ReadFile("../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	text, err := interpolate(string(raw), func(k string) string { return testEnv[k] })
	if err != nil {
		t.Fatal(err)
	}
	var c compose
	dec := yaml.NewDecoder(strings.NewReader(text))
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return c
}

// interpolate applies Compose's ${VAR}, ${VAR:-default} and ${VAR:?error}
// substitutions ($$ is a literal $).
func interpolate(s string, getenv func(string) string) (string, error) {
	re := regexp.MustCompile(`\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:-|:\?)([^}]*))?\}`)
	var errs []error
	out := re.ReplaceAllStringFunc(s, func(m string) string {
		if m == "$$" {
			return "$"
		}
		g := re.FindStringSubmatch(m)
		v := getenv(g[1])
		switch {
		case v != "":
			return v
		case g[2] == ":-":
			return g[3]
		case g[2] == ":?":
			errs = append(errs, fmt.Errorf("%s: %s", g[1], g[3]))
		}
		return ""
	})
	return out, errors.Join(errs...)
}

func TestInterpolateRequiresTheRegistry(t *testing.T) {
	raw, err := os.ReadFile("../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = interpolate(string(raw), func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "NPM_CONFIG_REGISTRY") {
		t.Fatalf("without NPM_CONFIG_REGISTRY: %v, want compose to refuse to start", err)
	}
	// The registry comes only from the user's environment.
	if m := regexp.MustCompile(`npm_config_registry:\s*(\S+)`).FindAllStringSubmatch(string(raw), -1); len(m) != 1 ||
		!strings.HasPrefix(m[0][1], "${NPM_CONFIG_REGISTRY:?") {
		t.Errorf("npm_config_registry must be set once, as ${NPM_CONFIG_REGISTRY:?...}: %q", m)
	}
}

func TestComposeTopology(t *testing.T) {
	c := load(t)
	var names []string
	for n := range c.Services {
		names = append(names, n)
	}
	slices.Sort(names)
	if want := []string{"indexer", "lb", "mirror-1", "mirror-2", "postgres", "redis"}; !slices.Equal(names, want) {
		t.Fatalf("services %v, want %v", names, want)
	}
	pg, lb := c.Services["postgres"], c.Services["lb"]
	for _, name := range []string{"mirror-1", "mirror-2", "indexer"} {
		s := c.Services[name]
		if s.Image != "pkgscope:local" || s.Build == nil {
			t.Errorf("%s: image %q, build %v: want pkgscope:local built from the Dockerfile", name, s.Image, s.Build)
		}
		env := s.Environment
		// The store is the compose Postgres, with its user, password and
		// database.
		want := fmt.Sprintf("postgres://%s:%s@postgres:5432/%s?sslmode=disable",
			pg.Environment["POSTGRES_USER"], pg.Environment["POSTGRES_PASSWORD"], pg.Environment["POSTGRES_DB"])
		if env["PKGSCOPE_DATABASE_URL"] != want {
			t.Errorf("%s: PKGSCOPE_DATABASE_URL %q, want %q", name, env["PKGSCOPE_DATABASE_URL"], want)
		}
		if env["PKGSCOPE_REDIS_URL"] != "redis://redis:6379/0" {
			t.Errorf("%s: PKGSCOPE_REDIS_URL %q", name, env["PKGSCOPE_REDIS_URL"])
		}
		if env["npm_config_registry"] != testEnv["NPM_CONFIG_REGISTRY"] {
			t.Errorf("%s: npm_config_registry %q: the image has no npm, so it must come from the environment", name, env["npm_config_registry"])
		}
		// Its data-dir is a volume of its own.
		if !slices.Contains(s.Volumes, name+"-data:"+env["PKGSCOPE_DATA_DIR"]) {
			t.Errorf("%s: volumes %v, want %s-data mounted at PKGSCOPE_DATA_DIR (%s)", name, s.Volumes, name, env["PKGSCOPE_DATA_DIR"])
		}
		if _, ok := c.Volumes[name+"-data"]; !ok {
			t.Errorf("volume %s-data is not declared", name)
		}
		for dep, d := range s.DependsOn {
			if d.Condition != "service_healthy" || c.Services[dep].Healthcheck == nil {
				t.Errorf("%s depends on %s (%s), which must have a healthcheck and be waited for healthy", name, dep, d.Condition)
			}
		}
		// Every setting named exists in the binaries, and the mirror's
		// configuration loads from exactly this environment.
		checkSettingNames(t, name, env)
		if _, err := config.Load(name, nil, func(k string) string { return env[k] }); err != nil {
			t.Errorf("%s: the mirror's configuration refuses this environment: %v", name, err)
		}
	}
	if got := c.Services["indexer"].Command; !slices.Equal(got, []string{"pkgscope-indexer", "worker"}) {
		t.Errorf("indexer command %v", got)
	}
	if hc := c.Services["indexer"].Healthcheck; hc == nil || !hc.Disable {
		t.Errorf("indexer healthcheck %+v: the image's HTTP probe must be disabled for the worker, which serves no HTTP", hc)
	}
	for _, name := range []string{"mirror-1", "mirror-2"} {
		s := c.Services[name]
		env := s.Environment
		if !slices.Equal(s.Command, []string{"pkgscope"}) {
			t.Errorf("%s: command %v", name, s.Command)
		}
		if len(s.Ports) != 0 {
			t.Errorf("%s publishes %v: replicas are reached through lb only", name, s.Ports)
		}
		_, port, err := net.SplitHostPort(env["PKGSCOPE_ADDR"])
		if err != nil || port != "7878" {
			t.Errorf("%s: PKGSCOPE_ADDR %q, want :7878 (nginx.conf's upstream port)", name, env["PKGSCOPE_ADDR"])
		}
		if hc := s.Healthcheck; hc == nil || !slices.Contains(hc.Test, "http://127.0.0.1:"+port+"/readyz") {
			t.Errorf("%s: healthcheck %+v, want a readyz probe on port %s", name, hc, port)
		}
		if env["PKGSCOPE_METRICS_ADDR"] == "" || env["PKGSCOPE_METRICS_ADDR"] == env["PKGSCOPE_ADDR"] {
			t.Errorf("%s: PKGSCOPE_METRICS_ADDR %q", name, env["PKGSCOPE_METRICS_ADDR"])
		}
		secret, ok := strings.CutPrefix(env["PKGSCOPE_TOKENS_FILE"], "/run/secrets/")
		if !ok || !slices.Contains(s.Secrets, secret) {
			t.Errorf("%s: PKGSCOPE_TOKENS_FILE %q is not one of its secrets %v", name, env["PKGSCOPE_TOKENS_FILE"], s.Secrets)
		}
		if _, ok := c.Secrets[secret]; !ok {
			t.Errorf("secret %q is not declared", secret)
		}
		if lb.DependsOn[name].Condition != "service_healthy" {
			t.Errorf("lb does not wait for %s to be healthy", name)
		}
	}
	for _, name := range []string{"postgres", "redis", "lb"} {
		if hc := c.Services[name].Healthcheck; hc == nil || len(hc.Test) < 2 || hc.Test[0] != "CMD" {
			t.Errorf("%s: healthcheck %+v", name, hc)
		}
	}
	// lb publishes nginx's listen port and mounts this directory's config.
	conf := readNginx(t)
	listen := regexp.MustCompile(`(?m)^\s*listen\s+(\d+);`).FindStringSubmatch(conf)
	if listen == nil {
		t.Fatal("nginx.conf has no listen port")
	}
	if len(lb.Ports) != 1 || !strings.HasSuffix(lb.Ports[0], ":"+listen[1]) {
		t.Errorf("lb ports %v, want one mapping to nginx's %s", lb.Ports, listen[1])
	}
	if !slices.Contains(lb.Volumes, "./deploy/nginx.conf:/etc/nginx/nginx.conf:ro") {
		t.Errorf("lb volumes %v", lb.Volumes)
	}
	if hc := lb.Healthcheck; hc == nil || !slices.Contains(hc.Test, "http://127.0.0.1:"+listen[1]+"/lb-healthz") ||
		!strings.Contains(conf, "location = /lb-healthz") {
		t.Errorf("lb healthcheck %+v must probe nginx's own /lb-healthz on its listen port", hc)
	}
	// nginx balances over exactly the mirror services.
	var upstreams []string
	for _, m := range regexp.MustCompile(`(?m)^\s*server\s+([\w.-]+:\d+)`).FindAllStringSubmatch(conf, -1) {
		upstreams = append(upstreams, m[1])
	}
	if want := []string{"mirror-1:7878", "mirror-2:7878"}; !slices.Equal(upstreams, want) {
		t.Errorf("nginx upstream servers %v, want %v", upstreams, want)
	}
}

// TestNginxPassesLockfiles: nginx lets POST /v1/warm and /v1/projects
// bodies up to the mirror's max-warm-body-bytes through, so the mirror
// answers an oversize one with its JSON 413 naming the setting. Before,
// the one client_max_body_size (8m, for the API's 1 MiB bodies) refused
// every lockfile over 8 MiB with nginx's HTML page, while README
// promised 64 MiB warm bodies and 32 MiB project lockfiles.
func TestNginxPassesLockfiles(t *testing.T) {
	conf := readNginx(t)
	m := regexp.MustCompile(`(?s)location ~ \^/v1/\(warm\|projects\)\$ \{[^}]*client_max_body_size (\d+)m;`).FindStringSubmatch(conf)
	if m == nil {
		t.Fatal("nginx.conf has no location for /v1/warm and /v1/projects with a client_max_body_size in MiB")
	}
	var mib int64
	fmt.Sscan(m[1], &mib)
	if want := config.Default().MaxWarmBodyBytes; mib<<20 <= want {
		t.Errorf("nginx passes lockfile bodies up to %d MiB, want more than max-warm-body-bytes (%d MiB)", mib, want>>20)
	}
}

// settingName matches the environment variables the binaries read.
var settingName = regexp.MustCompile(`^(PKGSCOPE_[A-Z0-9_]+|npm_config_[a-z_]+)$`)

// checkSettingNames fails for a variable no binary reads: a misspelt name
// in a compose file is silently ignored otherwise.
func checkSettingNames(t *testing.T, svc string, env map[string]string) {
	t.Helper()
	var sources []byte
	for _, f := range []string{"../internal/config/config.go", "../cmd/indexer/flags.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, b...)
	}
	for k := range env {
		if !settingName.MatchString(k) {
			t.Errorf("%s: environment variable %s is not a pkgscope or npm setting", svc, k)
			continue
		}
		// Environment names are derived from flag names (config.Binder):
		// PKGSCOPE_RATE_LIMIT_BURST is the flag "rate-limit-burst", and
		// the indexer's PKGSCOPE_WARM_X its flag "x".
		if rest, ok := strings.CutPrefix(k, config.EnvPrefix); ok && !registersFlag(sources, rest) {
			t.Errorf("%s: %s is read by neither the mirror nor the indexer", svc, k)
		}
	}
}

// registersFlag reports whether sources register the flag an environment
// name (without its PKGSCOPE_ prefix) is derived from.
func registersFlag(sources []byte, env string) bool {
	flag := func(s string) []byte { return []byte(`"` + strings.ToLower(strings.ReplaceAll(s, "_", "-")) + `"`) }
	if bytes.Contains(sources, flag(env)) {
		return true
	}
	rest, ok := strings.CutPrefix(env, "WARM_")
	return ok && bytes.Contains(sources, flag(rest))
}

func readNginx(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDockerfile checks the image against compose: a static build of both
// binaries the services run, a non-root final stage, the port and data
// directory the compose file uses.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	var stages []string
	for _, m := range regexp.MustCompile(`(?m)^FROM\s+(\S+)`).FindAllStringSubmatch(text, -1) {
		stages = append(stages, m[1])
	}
	if len(stages) != 2 || !strings.HasPrefix(stages[0], "golang:1.26") {
		t.Fatalf("stages %v, want a golang:1.26 builder and a final stage", stages)
	}
	final := text[strings.LastIndex(text, "\nFROM "):]
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "./cmd/mirror", "./cmd/indexer",
		// The binaries report the build's version (internal/version), as
		// scripts/release.sh stamps them.
		"-X $pkg.Version=$VERSION -X $pkg.Commit=$COMMIT -X $pkg.Date=$DATE", "pkg=github.com/pkgscope/pkgscope/internal/version",
		"-o /out/pkgscope ./cmd/mirror", "-o /out/pkgscope-indexer ./cmd/indexer"} {
		if !strings.Contains(text, want) {
			t.Errorf("the build lacks %s", want)
		}
	}
	// An ARG is empty in a stage that does not declare it again.
	if strings.Count(text, "ARG VERSION") != 2 {
		t.Error("both stages must declare ARG VERSION (the build stamps it, the final stage labels it)")
	}
	for _, label := range []string{"org.opencontainers.image.version=\"$VERSION\"", "org.opencontainers.image.revision=\"$COMMIT\"", "org.opencontainers.image.licenses=\"MIT\""} {
		if !strings.Contains(final, label) {
			t.Errorf("the final stage lacks the label %s", label)
		}
	}
	if !regexp.MustCompile(`(?m)^HEALTHCHECK .*\n\s+CMD wget -q -O /dev/null http://127\.0\.0\.1:7878/healthz`).MatchString(final) {
		t.Error("the final stage needs a HEALTHCHECK probing /healthz on :7878")
	}
	if !regexp.MustCompile(`(?m)^CMD \["pkgscope"\]$`).MatchString(final) {
		t.Error(`the image's default command must be ["pkgscope"]`)
	}
	user := regexp.MustCompile(`(?m)^USER\s+(\S+)`).FindStringSubmatch(final)
	if user == nil || strings.HasPrefix(user[1], "0") || strings.HasPrefix(user[1], "root") {
		t.Errorf("final stage user %v: want a non-root USER", user)
	}
	c := load(t)
	for name, s := range c.Services {
		if s.Image != "pkgscope:local" {
			continue
		}
		if bin := s.Command[0]; !strings.Contains(final, "/out/"+bin) || !strings.Contains(final, "/usr/local/bin/") {
			t.Errorf("%s runs %s, which the final stage does not install in /usr/local/bin", name, bin)
		}
		if dir := s.Environment["PKGSCOPE_DATA_DIR"]; !strings.Contains(final, "chown pkgscope:pkgscope "+dir) {
			t.Errorf("%s: data dir %s is not created for the image's user (a fresh named volume copies its owner)", name, dir)
		}
	}
	if !regexp.MustCompile(`(?m)^EXPOSE 7878$`).MatchString(final) || !strings.Contains(final, "PKGSCOPE_ADDR=:7878") {
		t.Error("the image must listen on :7878 on every interface and expose it")
	}
}

// TestNginxConfig runs `nginx -t` on nginx.conf, with the replicas' names
// pointed at loopback (nginx resolves upstream hosts when it loads).
func TestNginxConfig(t *testing.T) {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		t.Fatal("nginx is not installed, so deploy/nginx.conf cannot be checked: apt-get install -y nginx")
	}
	conf := regexp.MustCompile(`mirror-\d+:`).ReplaceAllString(readNginx(t), "127.0.0.1:")
	dir := t.TempDir()
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-t", "-p", dir, "-c", path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "test is successful") {
		t.Fatalf("nginx -t: %v\n%s", err, out)
	}
}

package topology

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// TestStampedeThreeReplicasDownloadOnce fires 200 concurrent requests for
// one cold version at 3 replicas while the registry holds the download in
// flight: the in-process single-flight joins each replica's callers, the
// Redis and Postgres locks join the replicas, so the registry serves the
// tarball once.
func TestStampedeThreeReplicasDownloadOnce(t *testing.T) {
	d := newDeployment(t, redistestAddr(t))
	stampede(t, d, d.start(3))
}

// TestStampedeWithRedisDownOnTwoReplicas is the same stampede while two of
// the three replicas cannot reach Redis (what one replica's breaker opening
// under load does for 5s): they meet the first replica, which holds the
// Redis lock, on the Postgres lock they share. Before the Postgres lock
// the registry served the tarball up to 3 times.
func TestStampedeWithRedisDownOnTwoReplicas(t *testing.T) {
	d := newDeployment(t, redistestAddr(t))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String() // nothing listens there once closed
	ln.Close()
	noRedis := "PKGSCOPE_REDIS_URL=redis://" + closed + "/0"
	replicas := []*replica{d.startOne()}
	for range 2 {
		r := d.startOne(noRedis)
		if r == nil {
			t.FailNow()
		}
		replicas = append(replicas, r)
	}
	stampede(t, d, replicas)
}

// stampede publishes a package and fires 200 concurrent requests for its
// cold version at the 3 replicas, while the registry holds the download
// until every request is on the wire; it checks the answers and that the
// registry served the tarball once.
func stampede(t *testing.T, d *deployment, replicas []*replica) {
	t.Helper()
	const requests = 200
	const body = "export const answer = 42;\n"
	d.reg.Publish("stampede", "1.0.0", tarballtest.Package(t, map[string]string{"lib/answer.js": "export const answer = 1;\n"}))
	d.reg.Publish("stampede", "2.0.0", tarballtest.Package(t, map[string]string{"lib/answer.js": body, "package.json": `{"name":"stampede"}`}))
	ctx := t.Context()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: requests}}
	defer hc.CloseIdleConnections()

	// Each replica reads the packument once (a distinct range each, so the
	// shared resolution cache does not answer for it): from then on the
	// cold version's only request to the registry is its tarball.
	for i, spec := range []string{"^1.0.0", "~1.0.0", "1.x"} {
		status, _, err := get(ctx, hc, replicas[i].url+"/v1/npm/stampede@"+spec+"/-/files", time.Minute)
		if err != nil || status != http.StatusOK {
			t.Fatalf("warming replica %d: %d, %v", i, status, err)
		}
	}
	if n := d.reg.TarballDownloads("stampede", "1.0.0"); n != 1 {
		t.Errorf("warming downloaded 1.0.0 %d times, want 1", n)
	}

	release := d.reg.Hold("stampede")
	defer release()
	sent := make(chan struct{}, requests)
	type answer struct {
		status int
		body   string
		err    error
	}
	answers := make(chan answer, requests)
	var wg sync.WaitGroup
	for i := range requests {
		url := replicas[i%len(replicas)].url + "/v1/npm/stampede@2.0.0/lib/answer.js"
		wg.Go(func() {
			trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { sent <- struct{}{} }}
			status, b, err := get(httptrace.WithClientTrace(ctx, trace), hc, url, 2*time.Minute)
			answers <- answer{status, b, err}
		})
	}
	// Every request is on the wire before the download may finish.
	for range requests {
		select {
		case <-sent:
		case a := <-answers:
			t.Fatalf("a request finished while the download was held: %+v", a)
		}
	}
	release()
	wg.Wait()
	close(answers)
	bad := 0
	for a := range answers {
		if a.err != nil || a.status != http.StatusOK || a.body != body {
			if bad++; bad <= 3 {
				t.Errorf("answer: %d %q %v", a.status, a.body, a.err)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d answers wrong", bad, requests)
	}
	if n := d.reg.TarballDownloads("stampede", "2.0.0"); n != 1 {
		t.Errorf("the registry served the cold tarball %d times to 3 replicas, want exactly 1", n)
	}
	fmt.Fprintf(testOut{t}, "packument requests: %d\n", d.reg.PackumentRequests("stampede"))
}

// testOut writes to the test log.
type testOut struct{ t *testing.T }

func (o testOut) Write(p []byte) (int, error) { o.t.Log(string(p)); return len(p), nil }

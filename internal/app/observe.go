package app

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/metrics"
)

// sideTimeouts bound the metrics and pprof listeners. A CPU profile or an
// execution trace streams for its ?seconds= (30 by default), so writes get
// two minutes.
const (
	sideReadHeaderTimeout = 10 * time.Second
	sideWriteTimeout      = 2 * time.Minute
)

// serveSide starts the listeners of cfg.MetricsAddr (/metrics) and
// cfg.PprofAddr (/debug/pprof/), one listener when they are the same
// address. Neither asks for tokens: bind them to a private network. It
// returns the address each configured one is bound to (they differ for
// port 0); stop closes the listeners.
func serveSide(cfg config.Config, m *metrics.Metrics, log *slog.Logger) (bound map[string]string, stop func(), err error) {
	muxes := map[string]*http.ServeMux{}
	mux := func(addr string) *http.ServeMux {
		if muxes[addr] == nil {
			muxes[addr] = http.NewServeMux()
		}
		return muxes[addr]
	}
	if cfg.MetricsAddr != "" {
		mux(cfg.MetricsAddr).Handle("/metrics", m.Handler())
	}
	if cfg.PprofAddr != "" {
		mux(cfg.PprofAddr).Handle("/debug/pprof/", metrics.Pprof())
	}
	var servers []*http.Server
	bound = map[string]string{}
	stop = func() {
		for _, s := range servers {
			s.Close()
		}
	}
	for addr, h := range muxes {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			stop()
			return nil, nil, fmt.Errorf("listening on %s (setting metrics-addr or pprof-addr): %w", addr, err)
		}
		s := &http.Server{Handler: h, ReadHeaderTimeout: sideReadHeaderTimeout, WriteTimeout: sideWriteTimeout, MaxHeaderBytes: 64 << 10}
		servers = append(servers, s)
		bound[addr] = ln.Addr().String()
		log.Info("side listener", "addr", "http://"+ln.Addr().String(), "metrics", addr == cfg.MetricsAddr, "pprof", addr == cfg.PprofAddr)
		go func() {
			if err := s.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				log.Error("side listener stopped", "addr", addr, "err", err)
			}
		}()
	}
	return bound, stop, nil
}

// Command pgdelay stands between the mirror and a Postgres server and
// delays every chunk of bytes either way (internal/faultproxy), as a
// database across a network is: on one machine a round trip to Postgres
// takes tens of microseconds, between hosts in one datacenter a few
// hundred. It prints the address to connect to and runs until killed.
//
//	go run ./bench/storage/pgdelay -to 127.0.0.1:5432 -latency 250us
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/pkgscope/pkgscope/internal/faultproxy"
)

func main() {
	to := flag.String("to", "127.0.0.1:5432", "the Postgres server, host:port")
	latency := flag.Duration("latency", 0, "delay of each chunk of bytes, either way (a round trip costs two)")
	flag.Parse()
	p, err := faultproxy.New(*to)
	if err != nil {
		log.Fatal(err)
	}
	p.SetLatency(*latency)
	fmt.Println(p.Addr())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	p.Close()
}

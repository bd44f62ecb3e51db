// Command pubsub-fake serves Google's in-memory Pub/Sub fake (cloud.google.com/go/pubsub/v2/pstest)
// over gRPC, so Quire's Pub/Sub adapter is tested against the real wire API with
// PUBSUB_EMULATOR_HOST pointing here. State lives in memory and is gone when the process exits.
//
//	pubsub-fake -host 127.0.0.1 -port 8085
//
// It prints "listening on HOST:PORT" once the server accepts connections and stops on SIGINT or
// SIGTERM.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"cloud.google.com/go/pubsub/v2/pstest"
)

func main() {
	host := flag.String("host", "127.0.0.1", "address to listen on")
	port := flag.Int("port", 8085, "port to listen on (0: any free port)")
	flag.Parse()

	srv := pstest.NewServerWithAddress(net.JoinHostPort(*host, strconv.Itoa(*port)))
	fmt.Printf("listening on %s\n", srv.Addr)

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
	if err := srv.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

#!/usr/bin/env bash
# scripts/lib/sandbox.sh's ports_in_use must list the port of a listening TCP socket, a
# connected TCP socket and a bound UDP socket, and free_port_block must never hand out
# a block whose first port is listened on. It once read ss's Send-Q column instead of
# the local address, so every port looked free and two services started side by side
# in the suite could pick the same one (CI: "port 22500 is already in use by ceph-mon").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
PROG=ports_in_use_test
# shellcheck source=../../scripts/lib/sandbox.sh
source "$here/../../scripts/lib/sandbox.sh"

fail() { echo "FAIL: $*" >&2; exit 1; }

scratch=$(mktemp -d /tmp/ports-in-use-test.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
ready=$scratch/ready
mkfifo "$ready"
# One process holds the three sockets until its stdin closes, and prints their ports
# through the fifo once all three exist (so nothing here waits on a sleep).
exec 3> >(exec python3 -c '
import socket, sys
listener = socket.socket(); listener.bind(("127.0.0.1", 0)); listener.listen(1)
client = socket.create_connection(listener.getsockname())
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); udp.bind(("127.0.0.1", 0))
with open(sys.argv[1], "w") as out:
    out.write("%d %d %d\n" % (listener.getsockname()[1], client.getsockname()[1], udp.getsockname()[1]))
sys.stdin.read()
' "$ready")
# At most 30 s: a python that fails before writing must fail the test, not hang it.
read -r -t 30 listening connected udp <> "$ready" || fail "the socket holder did not start"
rm -f "$ready"

used=" $(ports_in_use | tr '\n' ' ') "
for p in "$listening" "$connected" "$udp"; do
    [[ $used == *" $p "* ]] || fail "ports_in_use misses port $p (it listed:$used)"
done
[[ $used != *" 0 "* ]] || fail "ports_in_use printed a 0: not a port column (it listed:$used)"

# Take one block base in the allocator's range, listen on it, and ask for blocks 4 times
# as often as there are blocks (the buggy reader handed the listened one out in ~98% of
# runs). Under the ports lock, as the services choose theirs, so that one started beside
# this test neither takes the port first nor waits long: the draws take ~5 s.
exec 3>&-
read -r ephemeral_low _ < /proc/sys/net/ipv4/ip_local_port_range
exec 9> "$PORTS_LOCK"
flock 9
taken=$(free_port_block 1)
mkfifo "$ready"
exec 4> >(exec python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[2]))); s.listen(1)
open(sys.argv[1], "w").write("up\n")
sys.stdin.read()
' "$ready" "$taken" 9>&-)
read -r -t 30 _ <> "$ready" || fail "the listener on $taken did not start"
rm -f "$ready"
blocks=$(( (ephemeral_low - 1 - 20000) / 100 ))
for ((i = 0; i < 4 * blocks; i++)); do
    got=$(free_port_block 1)
    [[ $got != "$taken" ]] || fail "free_port_block handed out $taken, which is listened on"
done
exec 4>&- 9>&-
echo "ok: ports_in_use lists $listening (listen), $connected (connected), $udp (udp);" \
    "free_port_block skipped $taken in $((4 * blocks)) draws"

#!/usr/bin/env python3
"""Numbered UDP traffic for bench/soak.sh: ordinary sockets on both ends.

  soak_traffic.py recv PORT... [--echo PORT]
      Binds 0.0.0.0:PORT for each PORT and records every datagram's sequence
      number (8 bytes, big endian) per port until SIGTERM, echoing the
      datagrams that arrive on the --echo port back to their sender. Prints
      one line per port:
        recv PORT got=N distinct=D dup=U max_seq=M max_gap_ms=G
      where G is the longest time between two consecutive arrivals on that
      port after its first one (a stalled worker shows as a long gap).
  soak_traffic.py send SECONDS RATE SERVER PORT:SPORT... [--echo PORT]
      Sends RATE datagrams a second to each SERVER:PORT from source port
      SPORT, numbered 0, 1, ... per port, for SECONDS; with --echo, counts
      the echoes that come back on that port's socket. Prints per port:
        send PORT sent=N echoed=E max_send_gap_ms=G late_ms=L
      (G: the sender's own longest pause, to tell a stall of the sender
      from one of the firewall; L: how long after SECONDS the last datagram
      went, when the sender could not keep the rate).
"""
import select
import signal
import socket
import struct
import sys
import time

SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)  # root: past rmem_max


def parse_echo(args):
    if "--echo" in args:
        i = args.index("--echo")
        port = int(args[i + 1])
        return args[:i] + args[i + 2:], port
    return args, None


def recv(args):
    args, echo = parse_echo(args)
    ports = [int(p) for p in args]
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    socks = {}
    for port in ports:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20)
        s.bind(("0.0.0.0", port))
        s.setblocking(False)
        socks[s.fileno()] = (port, s)
    seen = {p: set() for p in ports}
    got = {p: 0 for p in ports}
    last = {p: None for p in ports}
    gap = {p: 0.0 for p in ports}
    print("listening", flush=True)
    poller = select.poll()
    for fd in socks:
        poller.register(fd, select.POLLIN)
    while not stop:
        try:
            ready = poller.poll(200)
        except InterruptedError:
            continue
        for fd, _ in ready:
            port, s = socks[fd]
            while True:
                try:
                    data, peer = s.recvfrom(2048)
                except BlockingIOError:
                    break
                now = time.monotonic()
                if len(data) >= 8:
                    seen[port].add(struct.unpack(">Q", data[:8])[0])
                got[port] += 1
                if last[port] is not None:
                    gap[port] = max(gap[port], now - last[port])
                last[port] = now
                if port == echo:
                    s.sendto(data, peer)
    for p in ports:
        distinct = len(seen[p])
        print(f"recv {p} got={got[p]} distinct={distinct} dup={got[p] - distinct} "
              f"max_seq={max(seen[p]) if seen[p] else -1} "
              f"max_gap_ms={gap[p] * 1000:.0f}", flush=True)


def send(args):
    args, echo = parse_echo(args)
    seconds, rate, server = float(args[0]), float(args[1]), args[2]
    flows = []
    for spec in args[3:]:
        port, sport = (int(x) for x in spec.split(":"))
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20)
        s.bind(("0.0.0.0", sport))
        s.connect((server, port))
        s.setblocking(False)
        flows.append({"port": port, "sock": s, "sent": 0, "echoed": 0})
    interval = 1.0 / rate
    start = time.monotonic()
    end = start + seconds
    tick = 0
    last = start
    max_gap = 0.0
    payload_pad = b"soak" * 4
    while True:
        due = start + tick * interval
        now = time.monotonic()
        if due >= end:
            break
        if due > now:
            time.sleep(due - now)
            now = time.monotonic()
        max_gap = max(max_gap, now - last)
        last = now
        for f in flows:
            try:
                f["sock"].send(struct.pack(">Q", f["sent"]) + payload_pad)
                f["sent"] += 1
            except (BlockingIOError, ConnectionRefusedError):
                pass  # an ICMP error from an earlier datagram: not sent
            if f["port"] == echo:
                drain(f)
        tick += 1
    late = max(0.0, time.monotonic() - end)
    settle = time.monotonic() + 1.0
    while time.monotonic() < settle:
        for f in flows:
            if f["port"] == echo:
                drain(f)
        time.sleep(0.01)
    for f in flows:
        print(f"send {f['port']} sent={f['sent']} echoed={f['echoed']} "
              f"max_send_gap_ms={max_gap * 1000:.0f} late_ms={late * 1000:.0f}", flush=True)


def drain(flow):
    while True:
        try:
            flow["sock"].recv(2048)
            flow["echoed"] += 1
        except (BlockingIOError, ConnectionRefusedError):
            return


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("recv", "send"):
        sys.exit(__doc__)
    (recv if sys.argv[1] == "recv" else send)(sys.argv[2:])

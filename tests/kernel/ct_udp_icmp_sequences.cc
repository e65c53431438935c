// UDP, generic-protocol and ICMP/ICMPv6 sequences for the conntrack kernel
// test: flows both ways, bad checksums, UDP-Lite and DCCP, echo and the
// other ICMP queries, errors quoting known and unknown flows, ND and MLD.
#include "tests/kernel/ct_sequences.h"

#include <vector>

namespace rulejit::testing::ct {

Sequence UdpBothWays(Alloc& a, bool v6) {
  Ends e = a.Next(v6);
  e.sport = 53;
  Sequence s = {Packet(e, false, 17), Packet(e, true, 17), Packet(e, false, 17),
                Packet(e, true, 17)};
  Ends f = a.Next(v6);  // a server speaks first
  Append(s, {Packet(f, true, 17), Packet(f, false, 17)});
  return s;
}

PathPacket WithBadChecksum(PathPacket p) {
  p.spec.bad_l4_checksum = true;
  return p;
}

// Wrong checksums (conntrack checks them at prerouting): UDP before and
// within a flow, TCP and ICMP within one.
Sequence BadChecksums(Alloc& a, bool v6) {
  Ends e = a.Next(v6);
  e.sport = 53;
  const PathPacket query = Packet(e, false, 17), answer = Packet(e, true, 17);
  Sequence s = {WithBadChecksum(query), query, WithBadChecksum(answer), answer,
                WithBadChecksum(query)};
  Tcp t = NewTcp(a, v6);
  Append(s, Handshake(t));
  s.push_back(WithBadChecksum(t.At(false, kPsh | kAck, t.Next(false), t.Next(true))));
  s.push_back(WithBadChecksum(t.At(true, kRst, t.Next(true), 0)));
  Append(s, Data(t));
  Ends ping = a.Next(v6);
  const PathPacket request = Icmp(ping, false, v6 ? 128 : 8);
  Append(s, {WithBadChecksum(request), request, WithBadChecksum(Icmp(ping, true, v6 ? 129 : 0))});
  return s;
}

Sequence GenericBothWays(Alloc& a, bool v6) {
  Sequence s;
  for (uint8_t proto : {47, 253}) {
    Ends e = a.Next(v6);
    Append(s, {Packet(e, false, proto), Packet(e, true, proto), Packet(e, false, proto)});
  }
  return s;
}

// UDP-Lite and DCCP, each with a second port pair: in Linux 6.18 conntrack
// verifies UDP-Lite checksums as UDP (so these are INVALID), and DCCP has
// no tracker since 6.16 (the generic one: its ports are no part of a flow).
Sequence PortedProtocols(Alloc& a, bool v6) {
  Sequence s;
  for (uint8_t proto : {136, 33}) {
    Ends e = a.Next(v6);
    Ends other_ports = e;
    other_ports.cport += 1000;
    Append(s, {Packet(e, false, proto), Packet(e, true, proto), Packet(other_ports, false, proto),
               Packet(other_ports, true, proto)});
  }
  return s;
}

Sequence IcmpEcho(Alloc& a, bool v6) {
  Ends e = a.Next(v6);
  const uint8_t request = v6 ? 128 : 8, reply = v6 ? 129 : 0;
  Sequence s = {Icmp(e, false, request), Icmp(e, true, reply), Icmp(e, false, request),
                Icmp(e, true, reply)};
  Ends f = a.Next(v6);  // a reply whose code is not the request's
  Append(s, {Icmp(f, false, request), Icmp(f, true, reply, 1), Icmp(f, true, reply)});
  Ends g = a.Next(v6);  // a reply without a request
  s.push_back(Icmp(g, true, reply));
  return s;
}

// Timestamp, information and address mask requests and replies, and a
// reply without a request.
Sequence IcmpQueries(Alloc& a, bool) {
  struct Query {
    uint8_t request, reply;
    size_t size;
  };
  const Query queries[] = {{13, 14, 12}, {15, 16, 4}, {17, 18, 4}};
  Sequence s;
  for (auto [request, reply, size] : queries) {
    Ends e = a.Next(false);
    Append(s, {Icmp(e, false, request, 0, size), Icmp(e, true, reply, 0, size),
               Icmp(e, false, request, 0, size)});
    Ends f = a.Next(false);
    s.push_back(Icmp(f, true, reply, 0, size));
  }
  return s;
}

// Errors quoting a UDP, a TCP and an echo flow's packets: to the quoted
// packet's sender, to another host, and quoting a flow nobody saw.
Sequence IcmpErrors(Alloc& a, bool v6) {
  const uint8_t unreach = v6 ? 1 : 3, port_unreach = v6 ? 4 : 3, time_exceeded = v6 ? 3 : 11;
  Ends e = a.Next(v6);
  e.sport = 53;
  const PathPacket query = Packet(e, false, 17), answer = Packet(e, true, 17);
  Sequence s = {query, answer};
  s.push_back(IcmpError(true, Router(e), e.client, unreach, port_unreach, query));
  s.push_back(IcmpError(true, Router(e), e.client, time_exceeded, 0, query));
  s.push_back(IcmpError(false, e.client, e.server, unreach, port_unreach, answer));
  s.push_back(IcmpError(true, Router(e), OtherClient(e), unreach, port_unreach, query));
  s.push_back(
      IcmpError(true, e.server, e.client, unreach, port_unreach, Packet(a.Next(v6), false, 17)));
  Tcp t = NewTcp(a, v6);
  const PathPacket syn = t.Send(false, kSyn);
  s.push_back(syn);
  s.push_back(IcmpError(true, Router(e), syn.spec.src, unreach, v6 ? 0 : 1, syn));
  Ends ping = a.Next(v6);
  const PathPacket request = Icmp(ping, false, v6 ? 128 : 8);
  s.push_back(request);
  s.push_back(IcmpError(true, Router(e), ping.client, time_exceeded, 0, request));
  return s;
}

// Node information query and reply; MLD (130-132, 143), router and
// neighbour discovery (133-136) and multicast router discovery (151, 152),
// which conntrack leaves untracked; a redirect (137), which it does not.
Sequence IcmpV6Informational(Alloc& a, bool) {
  Ends e = a.Next(true);
  Sequence s = {Icmp(e, false, 139), Icmp(e, true, 140), Icmp(e, false, 139)};
  Ends f = a.Next(true);
  s.push_back(Icmp(f, true, 140));  // a reply without a query
  for (uint8_t type : {130, 131, 132, 133, 134, 135, 136, 137, 143, 151, 152}) {
    Ends g = a.Next(true);
    s.push_back(Icmp(g, false, type, 0, 20));
    s.push_back(Icmp(g, true, type, 0, 20));
  }
  return s;
}

}  // namespace rulejit::testing::ct

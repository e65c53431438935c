// The line a log statement writes (iptables LOG, nft `log`), as Linux
// 6.18's nf_log_syslog prints it to the kernel log:
//
//   PREFIX IN=fwin OUT=fwout MAC=02:00:00:00:0a:02:02:00:00:00:0a:01:08:00
//   SRC=10.77.0.1 DST=10.77.0.2 LEN=60 TOS=0x00 PREC=0x00 TTL=64 ID=4242 DF
//   PROTO=TCP SPT=40000 DPT=8081 WINDOW=64240 RES=0x00 SYN URGP=0
//
// (one line, fields separated by single spaces and ending with one, as the
// kernel leaves it). The message text only: the syslog level (LogEvent::
// level, 4 by default) is not part of it, as dmesg shows it. nft
// `log group N` and NFLOG, which hand the packet to nfnetlink_log in the
// kernel, are written in the same format here.
//
// IN= and OUT= name the devices the hook has (none at postrouting for IN,
// none at prerouting and input for OUT); MAC= (or, with kLogMacDecode,
// MACSRC= MACDST= MACPROTO=) only where there is an input device. IPv4
// (with ICMP errors' quoted packet once, in [ ]) and IPv6 (extension
// headers; addresses in %pI6's full form), TCP, UDP, UDP-Lite, ICMP,
// ICMPv6, AH and ESP as the kernel decodes them; MARK= when the packet has
// a mark. Not written: UID= GID= (kLogUid: the bump in the wire has no
// local sockets), PHYSIN=/PHYSOUT= (a bridge's ports: here the devices are
// the ports themselves), VPROTO=/VID= (the tag is part of the frame here);
// ARP frames are not logged (only IP frames pass the IP hooks).
#ifndef RULEJIT_RUNTIME_LOG_LINE_H_
#define RULEJIT_RUNTIME_LOG_LINE_H_

#include <string>

#include "rulejit/rulejit.h"

namespace rulejit::runtime {

// The kernel's line for `event`, without a newline.
std::string FormatLogLine(const LogEvent& event);

}  // namespace rulejit::runtime

#endif  // RULEJIT_RUNTIME_LOG_LINE_H_

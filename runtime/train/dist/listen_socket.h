#pragma once
// Where the rendezvous listens (issue 14): c10d's TCPStore server binds every interface ("*:PORT")
// on its own, which leaves an unauthenticated key/value store reachable from the network for the
// whole run. The store instead takes over a socket bound here to exactly MASTER_ADDR (LibTorch
// 2.x: TCPStoreOptions::masterListenFd), and single-node runs started by `launch` need no listening
// store socket at all (a FileStore in a private directory, kRendezvousFileEnv). No torch here.

#include "base/result.h"

#include <string>

namespace bs::runtime {

/// Set by `launch` for its ranks: the file of a c10d FileStore in a directory only this user can
/// read, used instead of a TCPStore, so nothing listens for the rendezvous.
inline constexpr const char* kRendezvousFileEnv = "BUBBLESCOPE_RENDEZVOUS_FILE";

/// A TCP socket bound to `host` (a numeric IPv4/IPv6 address or a name that resolves to one, never
/// a wildcard) and `port`, listening. Unavailable naming host:port when it cannot be bound (e.g.
/// the address is not one of this machine's). The caller owns the descriptor.
Result<int> listenOn(const std::string& host, int port);

/// A loopback TCP port nothing listens on now (bind 127.0.0.1:0, read it back, release it), as
/// torchrun picks one; -1 when no socket can be had. Another process may take it before the caller
/// binds it: for single-machine starts (`launch`, the transport benchmark) only.
int freeLoopbackPort();

/// True for 127.0.0.0/8, ::1 and "localhost".
bool isLoopback(const std::string& host);

} // namespace bs::runtime

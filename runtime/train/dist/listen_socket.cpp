#include "runtime/train/dist/listen_socket.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace bs::runtime {

int freeLoopbackPort()
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        return -1;
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    int port = -1;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0
        && ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
        port = ntohs(addr.sin_port);
    }
    ::close(fd);
    return port;
}

bool isLoopback(const std::string& host)
{
    return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

Result<int> listenOn(const std::string& host, int port)
{
    const std::string where = host + ":" + std::to_string(port);
    if (host.empty() || host == "0.0.0.0" || host == "::" || host == "*") {
        return makeError(ErrorCode::InvalidArgument,
            "MASTER_ADDR = '" + host + "' is a wildcard: the rendezvous would listen on every interface",
            "allowed: this machine's address on the network the ranks share, or 127.0.0.1 for one machine");
    }
    addrinfo hints = {};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr; // no AI_PASSIVE: a host is always given
    if (const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
        return makeError(
            ErrorCode::Unavailable, "cannot resolve MASTER_ADDR '" + host + "': " + ::gai_strerror(rc), where);
    }
    std::string lastError = "no address";
    for (addrinfo* a = found; a; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            lastError = std::strerror(errno);
            continue;
        }
        const int on = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
        if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 128) == 0) {
            ::freeaddrinfo(found);
            return fd;
        }
        lastError = std::strerror(errno);
        ::close(fd);
    }
    ::freeaddrinfo(found);
    return makeError(ErrorCode::Unavailable,
        "cannot listen on " + where + " for the rendezvous: " + lastError
            + " (MASTER_ADDR must be one of this machine's addresses on rank 0)",
        where);
}

} // namespace bs::runtime

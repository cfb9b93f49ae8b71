#include "runtime/train/dist/file_rendezvous.h"

#include "runtime/train/dist/listen_socket.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace bs::runtime {

namespace {

constexpr std::size_t kMaxPath = 4096;

void writeAll(int fd, const std::string& text)
{
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return;
        }
        done += static_cast<std::size_t>(n);
    }
}

} // namespace

Result<std::unique_ptr<RendezvousFileServer>> RendezvousFileServer::start(const std::string& host, int port)
{
    if (!isLoopback(host)) {
        return makeError(ErrorCode::InvalidArgument,
            "a file rendezvous needs every rank on this machine (MASTER_ADDR a loopback address), not '" + host + "'",
            "MASTER_ADDR");
    }
    std::unique_ptr<RendezvousFileServer> server(new RendezvousFileServer());
    char dir[] = "/tmp/bubblescope-rendezvous-XXXXXX"; // mkdtemp: mode 0700
    if (::mkdtemp(dir) == nullptr) {
        return makeError(
            ErrorCode::IoError, std::string("cannot create the rendezvous directory: ") + std::strerror(errno), dir);
    }
    server->m_dir = dir;
    server->m_path = server->m_dir + "/store";
    Result<int> fd = listenOn(host, port);
    if (!fd) {
        return fd.error(); // the destructor removes the directory
    }
    server->m_fd = *fd;
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    if (::getsockname(*fd, reinterpret_cast<sockaddr*>(&bound), &len) == 0) {
        server->m_port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                           : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    }
    RendezvousFileServer* self = server.get();
    server->m_thread = std::thread([self] {
        const std::string answer = self->m_path + "\n";
        while (!self->m_stop.load()) {
            pollfd p{self->m_fd, POLLIN, 0};
            if (::poll(&p, 1, 100) <= 0) {
                continue;
            }
            const int client = ::accept4(self->m_fd, nullptr, nullptr, SOCK_CLOEXEC);
            if (client >= 0) {
                writeAll(client, answer);
                ::close(client);
            }
        }
    });
    return server;
}

void RendezvousFileServer::stop()
{
    m_stop = true;
    if (m_thread.joinable()) {
        m_thread.join();
    }
    if (m_fd >= 0) {
        ::close(m_fd);
        m_fd = -1;
    }
}

RendezvousFileServer::~RendezvousFileServer()
{
    stop();
    // The store file is not unlinked here: another rank's c10d::FileStore may still be open on it
    // (its destructor reopens the file to leave, and throws from a destructor when the file is
    // gone: std::terminate). FileStore removes the file when its last user leaves; the directory
    // goes now if that already happened (rmdir fails harmlessly while the file is there).
    if (!m_dir.empty()) {
        ::rmdir(m_dir.c_str());
    }
}

Result<std::string> fetchRendezvousFile(const std::string& host, int port, std::chrono::milliseconds timeout)
{
    const std::string where = host + ":" + std::to_string(port);
    const auto until = std::chrono::steady_clock::now() + timeout;
    std::string lastError = "no answer";
    do {
        addrinfo hints = {};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* found = nullptr;
        if (const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
            return makeError(
                ErrorCode::Unavailable, "cannot resolve MASTER_ADDR '" + host + "': " + ::gai_strerror(rc), where);
        }
        for (addrinfo* a = found; a; a = a->ai_next) {
            const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
            if (fd < 0) {
                continue;
            }
            if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
                lastError = std::strerror(errno);
                ::close(fd);
                continue;
            }
            std::string path;
            char buf[256];
            for (ssize_t n; path.find('\n') == std::string::npos && path.size() < kMaxPath
                 && (n = ::recv(fd, buf, sizeof buf, 0)) != 0;) {
                if (n < 0) {
                    if (errno == EINTR) {
                        continue;
                    }
                    break;
                }
                path.append(buf, static_cast<std::size_t>(n));
            }
            ::close(fd);
            if (const std::size_t nl = path.find('\n'); nl != std::string::npos && nl > 0 && path[0] == '/') {
                ::freeaddrinfo(found);
                return path.substr(0, nl);
            }
            lastError = "an answer that is not a path";
        }
        ::freeaddrinfo(found);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    } while (std::chrono::steady_clock::now() < until);
    return makeError(ErrorCode::Unavailable,
        "rank 0 did not answer at " + where + " within " + std::to_string(timeout.count()) + " ms (" + lastError + ")",
        where);
}

} // namespace bs::runtime

#pragma once
// A rendezvous that listens on no wildcard address with a LibTorch that cannot bind one (issue
// 14): Debian's LibTorch 1.13 TCPStore binds *:PORT and has no option to bind an address or take
// over a socket (2.x's masterListenFd). When MASTER_ADDR is a loopback address every rank is on
// this machine, so the ranks can meet through a c10d FileStore in a private directory instead, as
// `launch` does; only its path has to reach the ranks torchrun started. Rank 0 creates the
// directory (0700) and serves the path on exactly MASTER_ADDR:MASTER_PORT (listenOn: loopback,
// never a wildcard) until every rank joined; the others connect there and read it. Whoever
// connects learns only a path it cannot open (another user) or could have listed anyway (this user).
// Torch-free.

#include "base/result.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace bs::runtime {

class RendezvousFileServer
{
public:
    /// Rank 0: makes the private directory and the file's path, listens on host:port (a loopback
    /// address) and answers every connection with the path until stop(). Errors name host:port.
    static Result<std::unique_ptr<RendezvousFileServer>> start(const std::string& host, int port);
    ~RendezvousFileServer(); ///< stops serving; removes the file and the directory
    RendezvousFileServer(const RendezvousFileServer&) = delete;
    RendezvousFileServer& operator=(const RendezvousFileServer&) = delete;

    const std::string& path() const { return m_path; }
    /// The port it listens on (the one asked for; the kernel's pick when that was 0).
    int port() const { return m_port; }
    /// Stops answering and closes the listening socket (the file stays until destruction).
    void stop();

private:
    RendezvousFileServer() = default;
    std::string m_dir, m_path;
    int m_fd = -1;
    int m_port = 0;
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
};

/// Ranks other than 0: connects to host:port (retrying until `timeout`: rank 0 may start later)
/// and reads the path. Unavailable naming host:port when nothing answers in time.
Result<std::string> fetchRendezvousFile(const std::string& host, int port, std::chrono::milliseconds timeout);

} // namespace bs::runtime

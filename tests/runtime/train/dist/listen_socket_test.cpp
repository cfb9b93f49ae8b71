#include "runtime/train/dist/listen_socket.h"

#include "runtime/train/dist/file_rendezvous.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace bs::runtime {
namespace {

// Issue 14: the store listened on *:PORT. A socket from listenOn is bound to the given address.
TEST(ListenSocket, BindsExactlyTheGivenAddress)
{
    Result<int> fd = listenOn("127.0.0.1", 0);
    ASSERT_TRUE(fd) << fd.error().describe();
    sockaddr_in addr{};
    socklen_t len = sizeof addr;
    ASSERT_EQ(::getsockname(*fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    EXPECT_EQ(addr.sin_family, AF_INET);
    EXPECT_EQ(ntohl(addr.sin_addr.s_addr), INADDR_LOOPBACK); // not INADDR_ANY
    EXPECT_NE(ntohs(addr.sin_port), 0);
    ::close(*fd);
}

TEST(ListenSocket, WildcardsAndForeignAddressesAreRefused)
{
    for (const char* host : {"0.0.0.0", "::", "", "*"}) {
        Result<int> fd = listenOn(host, 0);
        ASSERT_FALSE(fd) << host;
        EXPECT_EQ(fd.error().code, ErrorCode::InvalidArgument);
        EXPECT_NE(fd.error().message.find("wildcard"), std::string::npos);
    }
    Result<int> foreign = listenOn("192.0.2.1", 0); // TEST-NET-1: never this machine's
    ASSERT_FALSE(foreign);
    EXPECT_NE(foreign.error().message.find("192.0.2.1"), std::string::npos);
    EXPECT_TRUE(isLoopback("127.0.0.1"));
    EXPECT_TRUE(isLoopback("localhost"));
    EXPECT_FALSE(isLoopback("10.0.0.1"));
}

// LibTorch 1.13 cannot bind its TCPStore to an address: loopback runs meet through a FileStore
// whose path rank 0 serves on exactly MASTER_ADDR:MASTER_PORT, in a directory only this user enters.
TEST(FileRendezvous, RankZeroServesAPrivatePathOnTheLoopbackAddress)
{
    auto server = RendezvousFileServer::start("127.0.0.1", 0);
    ASSERT_TRUE(server) << server.error().describe();
    ASSERT_GT((*server)->port(), 0);
    const std::string path = (*server)->path();
    for (int k = 1; k <= 3; ++k) { // every rank gets the same path
        auto fetched = fetchRendezvousFile("127.0.0.1", (*server)->port(), std::chrono::seconds(5));
        ASSERT_TRUE(fetched) << fetched.error().describe();
        EXPECT_EQ(*fetched, path);
    }
    struct stat dir
    {};
    const std::string parent = path.substr(0, path.rfind('/'));
    ASSERT_EQ(::stat(parent.c_str(), &dir), 0);
    EXPECT_EQ(dir.st_mode & 0777, 0700u) << "only this user may open the store";
    const int port = (*server)->port();
    (*server)->stop();
    auto late = fetchRendezvousFile("127.0.0.1", port, std::chrono::milliseconds(300));
    ASSERT_FALSE(late);
    EXPECT_EQ(late.error().code, ErrorCode::Unavailable);
    EXPECT_NE(
        late.error().message.find("rank 0 did not answer at 127.0.0.1:" + std::to_string(port)), std::string::npos)
        << late.error().message;
    server->reset();
    EXPECT_NE(::access(parent.c_str(), F_OK), 0) << "the directory is removed";
}

TEST(FileRendezvous, OnlyForRanksOnThisMachine)
{
    auto server = RendezvousFileServer::start("10.0.0.1", 0);
    ASSERT_FALSE(server);
    EXPECT_EQ(server.error().code, ErrorCode::InvalidArgument);
    EXPECT_NE(server.error().message.find("loopback"), std::string::npos);
}

} // namespace
} // namespace bs::runtime

#include "runtime/dist/listen_socket.h"

#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
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

} // namespace
} // namespace bs::runtime
